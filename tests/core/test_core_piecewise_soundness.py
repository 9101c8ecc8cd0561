"""Soundness of every piecewise-linear construction (issue 11): ``to_piecewise``,
``envelope``, ``worst_case`` and what is built on them lie at or below the true curve.

Each closed-form family on a wide parameter grid (and Hypothesis draws): piecewise beta
<= exact beta on a dense FPR grid that includes the diagonal crossing and both tails down
to 1e-12; delta_for_epsilon of the piecewise curve >= the exact profile for eps including
0; fitted mu of worst_case >= every member's exact mu, and of an envelope >= its true mu.
Comparisons are made in the arithmetic that carries the digits: beta where beta <= 1/2,
TPR where TPR <= 1/2, and beta with two ulps of 1 elsewhere."""

import ast
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fdpkit as fp
from fdpkit._numerics import norm_isf

ULP_SLACK = 4.5e-16        # two ulps of 1: beta or TPR read on their large (digit-poor) side
REL_ULP = 4.5e-16          # two ulps relative: closed forms' own rounding (e^{log alpha} != alpha)
EXACT_REL = 1e-14          # piecewise-linear closed forms are copied exactly: equal up to rounding
TIGHT_BETA_ATOL = 2e-5     # the bound is also tight (tangents at 20001 points)
SRC = Path(fp.__file__).resolve().parent

GAUSSIAN_MUS = [1e-3, 0.05, 0.3, 1.0, 2.5, 6.0, 15.0, 35.0]
LAPLACE_EPS = [1e-3, 0.05, 0.5, 1.0, 3.0, 10.0, 25.0]
EPS_DELTAS = [(0.0, 0.0), (0.1, 0.0), (1.0, 1e-5), (3.0, 0.2), (8.0, 1e-9)]
RR_EPS = [0.01, 1.0, 6.0]
UNIFORM = [(0.1, 1), (1.0, 5), (3.0, 1000)]


def _families():
    yield from (fp.GaussianCurve(m) for m in GAUSSIAN_MUS)
    yield from (fp.LaplaceCurve(e) for e in LAPLACE_EPS)
    yield from (fp.EpsDeltaCurve(e, d) for e, d in EPS_DELTAS)
    yield from (fp.RandomizedResponseCurve(e) for e in RR_EPS)
    yield from (fp.UniformSamplingCurve(m, n) for m, n in UNIFORM)


def _alpha_grid(curve) -> np.ndarray:
    """Both tails to 1e-12, a uniform middle, and a fine mesh around the diagonal crossing."""
    star = float(curve._alpha_at_d(np.array([0.0]))[0])
    around = star + np.concatenate([-np.geomspace(1e-12, 1e-2, 40), [0.0], np.geomspace(1e-12, 1e-2, 40)])
    tails = np.geomspace(1e-12, 0.5, 400)
    grid = np.concatenate([[0.0, 1.0], tails, 1.0 - tails, np.linspace(0, 1, 2001), around])
    return np.unique(np.clip(grid, 0.0, 1.0))


def _assert_below(pl, exact, alpha):
    """pl is at or below exact (in beta) on alpha, compared on the side with the digits.
    A bound="exact" copy of a piecewise-linear closed form only has to agree to rounding."""
    rel = EXACT_REL if pl.bound == "exact" else REL_ULP
    b_pl, b_ex = pl.beta(alpha), exact.beta(alpha)
    t_pl, t_ex = pl.tpr(alpha), exact.tpr(alpha)
    small_b = b_ex <= 0.5
    bad_b = small_b & (b_pl > b_ex * (1 + rel))
    bad_t = ~small_b & (t_pl < t_ex * (1 - rel)) & (t_ex <= 0.5 + 1e-9)
    bad_any = b_pl > b_ex + ULP_SLACK + rel
    bad = bad_b | bad_t | bad_any
    assert not bad.any(), (exact, alpha[bad][:5], (b_pl - b_ex)[bad][:5])


@pytest.mark.parametrize("curve", list(_families()), ids=repr)
def test_piecewise_is_below_the_curve_everywhere(curve):
    pl = curve.to_piecewise()
    assert pl.bound in ("lower", "exact")
    alpha = _alpha_grid(curve)
    _assert_below(pl, curve, alpha)
    # ... and tight: it is a bound worth having (from alpha = 1e-12: at alpha = 0 the
    # first tangent, at alpha = 1e-300, is extended, and G_35 jumps there in floats)
    inner = alpha >= 1e-12
    np.testing.assert_allclose(pl.beta(alpha[inner]), curve.beta(alpha[inner]), atol=TIGHT_BETA_ATOL)
    if curve.is_symmetric:
        assert pl.is_symmetric


@pytest.mark.parametrize("curve", list(_families()), ids=repr)
def test_piecewise_profile_is_above_the_exact_profile(curve):
    eps = np.concatenate([[0.0], np.geomspace(1e-6, 40.0, 120)])
    exact = curve.delta_for_epsilon(eps)
    ours = curve.to_piecewise().delta_for_epsilon(eps)
    assert np.all(ours >= exact * (1 - 1e-12) - ULP_SLACK), curve   # delta near 1: ulps of 1
    small = exact < 1e-3
    assert np.all(ours[small] >= exact[small] * (1 - 1e-12)), curve


def test_issue_11_reported_cases():
    lap, gau = fp.LaplaceCurve(1.0), fp.GaussianCurve(1.0)
    exact = -math.expm1(-0.5)  # 1 - e^{-eps/2}: the Laplace profile at 0
    assert lap.delta_for_epsilon(0.0) >= exact
    assert lap.to_piecewise().delta_for_epsilon(0.0) >= exact
    assert fp.fit_gdp(fp.worst_case(gau, lap)).mu >= lap._mu_exact() / (1 + 1e-9)
    # near the crossing alpha = 0.3033 the piecewise curve used to be 1.89e-6 too high
    a = np.linspace(0.30, 0.31, 2001)
    assert np.all(lap.to_piecewise().beta(a) <= lap.beta(a))
    a = np.linspace(0.30, 0.32, 2001)
    assert np.all(gau.to_piecewise().beta(a) <= gau.beta(a))


@settings(max_examples=30, deadline=None)
@given(mu=st.floats(1e-3, 30.0), eps=st.floats(1e-3, 30.0))
def test_hypothesis_gaussian_and_laplace(mu, eps):
    for curve in (fp.GaussianCurve(mu), fp.LaplaceCurve(eps)):
        star = float(curve._alpha_at_d(np.array([0.0]))[0])
        alpha = np.unique(np.clip(np.concatenate([
            np.geomspace(1e-12, 0.5, 60), 1 - np.geomspace(1e-12, 0.5, 60),
            star + np.linspace(-1e-3, 1e-3, 41)]), 0, 1))
        _assert_below(curve.to_piecewise(n=2001), curve, alpha)
        d_eps = np.array([0.0, 0.1 * eps, 0.5 * eps, eps, 2.0])
        assert np.all(curve.to_piecewise(n=2001).delta_for_epsilon(d_eps)
                      >= curve.delta_for_epsilon(d_eps) * (1 - 1e-12))


def _true_mu(curve, lo=1e-10):
    """A lower estimate of sup isf(alpha) - isf(TPR(alpha)) on a dense grid (alpha, beta >= lo)."""
    x = np.linspace(math.log(lo), -math.log(lo), 200001)
    a = 1 / (1 + np.exp(-x))
    ok = curve.beta(a) >= lo
    return float(np.max((norm_isf(a) - norm_isf(curve.tpr(a)))[ok]))


@pytest.mark.parametrize("members", [
    (fp.GaussianCurve(1.0), fp.LaplaceCurve(1.0)),
    (fp.GaussianCurve(0.5), fp.LaplaceCurve(0.3), fp.RandomizedResponseCurve(0.2)),
    (fp.GaussianCurve(3.0), fp.LaplaceCurve(4.0)),
    (fp.GaussianCurve(2.0), fp.EpsDeltaCurve(2.0)),
], ids=lambda ms: "+".join(repr(m) for m in ms))
def test_worst_case_and_envelope_are_sound(members):
    wc = fp.worst_case(*members)
    grid = np.unique(np.concatenate([np.geomspace(1e-12, 0.5, 300), np.linspace(0, 1, 3001)]))
    lowest = np.min([m.beta(grid) for m in members], axis=0)
    assert np.all(wc.beta(grid) <= lowest + ULP_SLACK)
    mu_wc = fp.fit_gdp(wc).mu
    for m in members:
        assert mu_wc >= fp.fit_gdp(m).mu / (1 + 1e-9), (m, mu_wc)
    env = fp.envelope(*members)
    highest = np.max([m.beta(grid) for m in members], axis=0)
    assert np.all(env.to_piecewise().beta(grid) <= highest + ULP_SLACK)
    eps = np.array([0.0, 0.3, 1.0, 2.0])
    assert np.all(env.delta_for_epsilon(eps) >= _envelope_delta(members, eps) * (1 - 1e-9) - ULP_SLACK)
    mu_env = fp.fit_gdp(env).mu
    assert mu_env >= _true_mu(env) / (1 + 1e-9)
    assert mu_env <= min(fp.fit_gdp(m).mu for m in members) * (1 + 1e-6)


def _envelope_delta(members, eps):
    """sup_alpha TPR_env(alpha) - e^eps alpha on a dense grid (a lower estimate)."""
    a = np.unique(np.concatenate([np.geomspace(1e-14, 1, 20001), np.linspace(0, 1, 20001)]))
    t = np.min([m.tpr(a) for m in members], axis=0)
    return np.array([max(0.0, float(np.max(t - math.exp(e) * a))) for e in eps])


def test_secant_bound_for_a_curve_known_only_by_values():
    class ValuesOnly(fp.TradeOffCurve):  # G_mu without slope information
        def __init__(self, mu):
            self.g = fp.GaussianCurve(mu)

        @property
        def is_symmetric(self):
            return True

        def _beta(self, alpha):
            return self.g._beta(alpha)

        def _tpr(self, alpha):
            return self.g._tpr(alpha)

    curve = ValuesOnly(1.3)
    pl = curve.to_piecewise()
    assert pl.bound == "lower"
    _assert_below(pl, fp.GaussianCurve(1.3), _alpha_grid(fp.GaussianCurve(1.3)))
    eps = np.linspace(0, 4, 9)
    assert np.all(curve.delta_for_epsilon(eps) >= fp.GaussianCurve(1.3).delta_for_epsilon(eps))


def test_symmetrize_and_inverse_of_an_asymmetric_curve_are_exact():
    f = fp.PiecewiseLinearCurve([0, 0.05, 0.3, 1], [0.8, 0.4, 0.1, 0])
    s = f.symmetrize()
    grid = np.linspace(0, 1, 1001)
    assert np.all(s.beta(grid) <= np.minimum(f.beta(grid), f.inverse().beta(grid)) + 1e-15)


def test_curves_base_never_imports_its_subclasses():
    """curves/base.py imports nothing from fdpkit.curves; curves/ imports nothing above it."""
    def imported(path):
        tree = ast.parse(path.read_text())
        return {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module} | {
            a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}

    base = imported(SRC / "curves" / "base.py")
    assert not any(m.startswith("fdpkit.curves") for m in base), base
    for path in (SRC / "curves").glob("*.py"):
        mods = {m for m in imported(path) if m.startswith("fdpkit")}
        # fdpkit._lazy: the leaf helper that defers heavy third-party imports (issue 30);
        # fdpkit._scratch: the leaf per-thread work buffers (numpy only; issue 27)
        assert all(m.startswith(("fdpkit.curves", "fdpkit._numerics", "fdpkit._solve", "fdpkit._lazy",
                                 "fdpkit._deprecation", "fdpkit._scratch")) for m in mods), (path, mods)
