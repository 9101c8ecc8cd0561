"""compose_curves: any curves -> pessimistic PLDs -> dp_accounting composition (issue 11).

Layers: closed forms (G_mu composes to G_{mu sqrt k}; randomized response composes to an
exact binomial privacy loss), an independent computation (dp_accounting's own Laplace PLD
in both rounding directions; an exact tensor product of discrete pairs for an asymmetric
curve), round trips through mechanism specs, and bad input."""

import logging
import math

import mpmath

import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as pldlib
from hypothesis import given, settings
from hypothesis import strategies as st

from _reference_bounds import DPA_TRUNCATION_RISE, dpa_delta_roundoff

import fdpkit as fp
from fdpkit.accounting import _chain_thinning as thinning
from fdpkit.accounting._pld_adapter import pmf_arrays
from fdpkit.accounting.from_curve import pld_from_curve

DISC = 1e-4
TPR_RTOL = 1e-3          # composed G_mu vs G_{mu sqrt k}, relative in TPR (issue 11)
DELTA_RTOL = 1e-6        # fdpkit's delta vs dp_accounting's pessimistic Laplace PLD
# dp_accounting's own error on its composed deltas (issue 22): its tail truncation raises
# them by at most DPA_TRUNCATION_RISE, its FFT round-off moves them by at most the bound
# dpa_delta_roundoff evaluates on the single-step PMF (tests/_reference_bounds.py)
EXACT_RTOL = 2e-3        # numeric vs exact composition (delta or TPR), relative
MP_DIGITS = 40           # exact references in mpmath: their rounding is below 1e-38 relative
CLOSED_FORM_ULPS = 16    # closed-form deltas (norm.sf, exp, log1p): a few ulps each, summed
ALPHAS = np.concatenate([np.geomspace(1e-10, 0.5, 120), np.linspace(0.5, 1.0, 30)])


@pytest.mark.parametrize("mu,k", [(0.5, 4), (0.3, 12)])
def test_gaussian_copies_compose_to_g_mu_sqrt_k(mu, k):
    composed = fp.compose_curves(*[fp.GaussianCurve(mu)] * k, discretization=DISC)
    exact = fp.GaussianCurve(mu * math.sqrt(k))
    assert composed.bound == "lower"
    assert np.all(composed.beta(ALPHAS) <= exact.beta(ALPHAS))           # sound
    assert np.all(composed.tpr(ALPHAS) >= exact.tpr(ALPHAS))
    np.testing.assert_allclose(composed.tpr(ALPHAS), exact.tpr(ALPHAS), rtol=TPR_RTOL)
    eps = np.linspace(0.0, 4.0, 17)
    assert np.all(composed.delta_for_epsilon(eps) >= exact.delta_for_epsilon(eps))


@pytest.mark.parametrize("epsilon,k", [(1.0, 1), (0.5, 8), (0.2, 30)])
def test_laplace_bracketed_by_dp_accounting(epsilon, k, caplog, monkeypatch):
    composed = fp.compose_curves(*[fp.LaplaceCurve(epsilon)] * k, discretization=DISC)
    # the tightness check reads the full curve: the default one's steep chains (more than
    # 2^15 vertices at k = 8, 30) are thinned, which may raise TPR by THIN_RTOL = 1e-6 times
    # min(TPR, beta) (tests/accounting/test_accounting_chain_thinning.py), more than
    # DELTA_RTOL times delta where delta is much smaller than that
    monkeypatch.setattr(thinning, "THIN_MIN_VERTICES", 1 << 62)
    full = fp.compose_curves(*[fp.LaplaceCurve(epsilon)] * k, discretization=DISC)
    with caplog.at_level(logging.ERROR):  # dp_accounting warns that it falls back
        single_low = pldlib.from_laplace_mechanism(
            1.0 / epsilon, pessimistic_estimate=False, value_discretization_interval=DISC)
        optimistic = single_low.self_compose(k)
    single_high = pldlib.from_laplace_mechanism(
        1.0 / epsilon, pessimistic_estimate=True, value_discretization_interval=DISC)
    pessimistic = single_high.self_compose(k)
    err = {name: max(dpa_delta_roundoff([(a.probs, k)], real=False) for a in pmf_arrays(pld) if a is not None)
           for name, pld in (("low", single_low), ("high", single_high))}
    eps = np.linspace(0.0, k * epsilon, 15)
    ours = composed.delta_for_epsilon(eps)
    low, high = optimistic.get_delta_for_epsilon(eps), pessimistic.get_delta_for_epsilon(eps)
    assert np.all(ours >= low - DPA_TRUNCATION_RISE - err["low"])        # certified >= optimistic
    assert np.all(ours >= full.delta_for_epsilon(eps))                  # thinning: pessimistic
    assert np.all(full.delta_for_epsilon(eps) <= (high + err["high"]) * (1 + DELTA_RTOL))  # as tight as theirs
    if k == 1:  # one Laplace: the exact profile 1 - e^{(eps - epsilon)/2}
        assert np.all(ours >= fp.LaplaceCurve(epsilon).delta_for_epsilon(eps))


def test_randomized_response_against_exact_binomial_composition():
    eps0, k = 0.7, 20
    composed = fp.compose_curves(*[fp.RandomizedResponseCurve(eps0)] * k, discretization=DISC)
    # k-fold RR: loss (2j - k) eps0 with j ~ Binomial(k, p) under Q, p = e^eps0/(1 + e^eps0)
    # in MP_DIGITS-digit arithmetic (mpmath), so that the soundness check needs no slack
    # for the reference's own rounding (a float64 sum of binom.pmf terms has no stated bound)
    eps = np.linspace(0.0, 6.0, 25)
    with mpmath.workdps(MP_DIGITS):
        e0 = mpmath.mpf(eps0)
        p = mpmath.exp(e0) / (1 + mpmath.exp(e0))
        q_mass = [mpmath.binomial(k, j) * p**j * (1 - p) ** (k - j) for j in range(k + 1)]
        exact_mp = [mpmath.fsum(m * (1 - mpmath.exp(mpmath.mpf(float(e)) - (2 * j - k) * e0))
                                for j, m in enumerate(q_mass) if (2 * j - k) * e0 > mpmath.mpf(float(e)))
                    for e in eps]
        ours = composed.delta_for_epsilon(eps)
        assert all(mpmath.mpf(float(o)) >= x for o, x in zip(ours, exact_mp))
    exact = np.array([float(x) for x in exact_mp])
    np.testing.assert_allclose(ours, exact, rtol=EXACT_RTOL, atol=1e-12)


def _pair_curve(p, q):
    """Exact (alpha, TPR) vertices of the Neyman-Pearson curve of discrete P (q) vs Q (p)."""
    p, q = np.asarray(p, float), np.asarray(q, float)
    with np.errstate(divide="ignore"):
        ratio = np.where(q > 0, p / np.where(q > 0, q, 1), np.inf)
    order = np.argsort(-ratio, kind="stable")
    alpha = np.minimum(np.concatenate([[0], np.cumsum(q[order])]), 1.0)
    tpr = np.minimum(np.concatenate([[0], np.cumsum(p[order])]), 1.0)
    alpha[-1] = tpr[-1] = 1.0
    return alpha, tpr


def test_asymmetric_curve_against_exact_tensor_product():
    # an asymmetric curve (f(0) = 0.8, so it is not its own inverse) as a discrete pair
    f = fp.PiecewiseLinearCurve([0, 0.05, 0.3, 1], [0.8, 0.4, 0.1, 0])
    assert not f.is_symmetric
    a, t = f.alphas, f.tprs
    p, q = np.diff(t), np.diff(a)                      # segment masses under Q and P
    p, q = np.append(p, t[0]), np.append(q, 0.0)     # the vertical part: Q-only mass
    pp, qq = np.outer(p, p).ravel(), np.outer(q, q).ravel()
    exact = fp.PiecewiseLinearCurve.from_tpr(*_pair_curve(pp, qq), "exact")
    composed = fp.compose_curves(f, f, discretization=1e-3)
    grid = np.linspace(0, 1, 401)
    worst = np.minimum(exact.beta(grid), exact.inverse().beta(grid))
    assert np.all(composed.beta(grid) <= worst + 1e-12)               # below both orderings
    assert composed.is_symmetric
    # tight: the symmetric curve of the worse ordering's profile, up to the grid
    eps = np.linspace(0, 3, 13)
    target = np.maximum(exact.delta_for_epsilon(eps), exact.inverse().delta_for_epsilon(eps))
    np.testing.assert_allclose(composed.delta_for_epsilon(eps), target, rtol=EXACT_RTOL, atol=1e-12)


def test_pld_from_curve_is_pessimistic_at_every_epsilon():
    for curve in (fp.GaussianCurve(1.3), fp.LaplaceCurve(0.8), fp.EpsDeltaCurve(1.0, 1e-3),
                  fp.UniformSamplingCurve(1.0, 5)):
        pld = pld_from_curve(curve, 1e-3)
        eps = np.linspace(0, 6, 31)
        # dp_accounting sums n masses (relative error <= n u); the closed form is accurate
        # to a few units of round-off (CLOSED_FORM_ULPS)
        n = max(len(a.probs) for a in pmf_arrays(pld) if a is not None)
        slack = (n + CLOSED_FORM_ULPS) * np.finfo(float).eps / 2
        assert np.all(pld.get_delta_for_epsilon(eps) >= curve.delta_for_epsilon(eps) * (1 - slack)), curve


def test_curve_mechanism_composes_with_a_gaussian_and_round_trips():
    lap = fp.CurveMechanism.from_curve(fp.LaplaceCurve(1.0))
    mech = fp.Composed([lap, fp.Gaussian(1.0)])
    again = fp.mechanism_from_json(mech.to_json())
    assert again == mech
    through_spec = fp.tradeoff_curve(again, discretization=1e-3)
    direct = fp.compose_curves(fp.LaplaceCurve(1.0), fp.GaussianCurve(1.0), discretization=1e-3)
    assert through_spec.bound == "lower"
    grid = np.geomspace(1e-8, 0.9, 60)
    np.testing.assert_allclose(through_spec.tpr(grid), direct.tpr(grid), rtol=1e-4)
    # sound against the exact Laplace x Gaussian composition's profile at eps = 0 (TV bound)
    assert through_spec.delta_for_epsilon(0.0) >= direct.delta_for_epsilon(0.0) * (1 - 1e-4)


def test_repeated_curve_mechanism_equals_composition():
    rr = fp.CurveMechanism.from_curve(fp.RandomizedResponseCurve(0.5))
    c1 = fp.tradeoff_curve(fp.Repeated(rr, 5), discretization=1e-3)
    c2 = fp.compose_curves(*[fp.RandomizedResponseCurve(0.5)] * 5, discretization=1e-3)
    grid = np.linspace(0.001, 0.999, 50)
    np.testing.assert_allclose(c1.beta(grid), c2.beta(grid), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("args,kwargs,exc,word", [
    ((), {}, ValueError, "at least one"),
    ((fp.GaussianCurve(1.0), "gaussian"), {}, TypeError, "curves[1]"),
    ((fp.GaussianCurve(1.0), 3.0), {}, ValueError, "curves[1]"),
    ((fp.GaussianCurve(1.0),), {"discretization": 0.0}, ValueError, "discretization"),
    ((fp.GaussianCurve(1.0),), {"discretization": -1e-4}, ValueError, "discretization"),
    ((fp.GaussianCurve(1.0),), {"discretization": float("nan")}, ValueError, "discretization"),
    ((fp.PiecewiseLinearCurve([0, 0.5, 1], [1, 0.2, 0], "upper"),), {}, ValueError, "curves[0]"),
])
def test_bad_input(args, kwargs, exc, word):
    with pytest.raises(exc) as err:
        fp.compose_curves(*args, **kwargs)
    assert word in str(err.value)


@pytest.mark.parametrize("spec,word", [
    ({"kind": "curve", "alpha": [0, 1], "tpr": [0, 0.5, 1]}, "same length"),
    ({"kind": "curve", "alpha": [0, 1], "tpr": [0, 1], "bound": "upper"}, "bound"),
    ({"kind": "curve", "alpha": "01", "tpr": [0, 1]}, "alpha"),
    ({"kind": "curve", "alpha": [0, float("nan")], "tpr": [0, 1]}, "alpha[1]"),
])
def test_bad_curve_mechanism_spec(spec, word):
    with pytest.raises(ValueError) as err:
        fp.mechanism_from_dict(spec)
    assert word in str(err.value)


def test_bad_curve_vertices_fail_when_accounted():
    mech = fp.CurveMechanism([0, 0.2, 0.4, 1], [0, 0.25, 0.7, 1])  # not concave
    with pytest.raises(ValueError, match="convex"):
        fp.tradeoff_curve(mech)


@settings(max_examples=8, deadline=None)
@given(mu1=st.floats(0.05, 2.0), mu2=st.floats(0.05, 2.0), eps=st.floats(0.05, 2.0))
def test_hypothesis_composition_is_sound(mu1, mu2, eps):
    """G_mu1 (x) G_mu2 = G_sqrt(mu1^2 + mu2^2) exactly; adding a Laplace can only weaken it."""
    grid = np.concatenate([np.geomspace(1e-8, 0.5, 40), np.linspace(0.5, 0.99, 10)])
    gg = fp.compose_curves(fp.GaussianCurve(mu1), fp.GaussianCurve(mu2), discretization=1e-3)
    exact = fp.GaussianCurve(math.hypot(mu1, mu2))
    assert np.all(gg.tpr(grid) >= exact.tpr(grid))
    ggl = fp.compose_curves(fp.GaussianCurve(mu1), fp.GaussianCurve(mu2), fp.LaplaceCurve(eps),
                            discretization=1e-3)
    assert np.all(ggl.tpr(grid) >= exact.tpr(grid))
    assert np.all(ggl.delta_for_epsilon(np.array([0.0, 1.0])) >= fp.LaplaceCurve(eps).delta_for_epsilon(np.array([0.0, 1.0])))
