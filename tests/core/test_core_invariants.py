"""Layer 4: invariants with Hypothesis. The soundness property that matters most: the
fitted mu is never below the curve anywhere on its stated range."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import fdpkit as fp

SOUND_TOL = 1e-12  # absolute, on beta
GRID = np.concatenate([[0.0], np.geomspace(1e-12, 0.5, 300), 1 - np.geomspace(1e-12, 0.5, 300)[::-1], [1.0]])

mus = st.floats(0.0, 40.0)
epss = st.floats(0.0, 100.0)
deltas = st.floats(0.0, 1.0)


def closed_forms():
    return st.one_of(
        mus.map(fp.GaussianCurve),
        st.tuples(epss, deltas).map(lambda p: fp.EpsDeltaCurve(*p)),
        st.floats(0.0, 30.0).map(fp.LaplaceCurve),
        epss.map(fp.RandomizedResponseCurve),
        st.tuples(st.floats(0.01, 10.0), st.integers(1, 1000)).map(lambda p: fp.UniformSamplingCurve(*p)),
    )


@st.composite
def piecewise_curves(draw):
    """Worst case of a few random closed forms: an arbitrary valid PL curve."""
    parts = draw(st.lists(st.one_of(
        st.floats(0.05, 5.0).map(fp.GaussianCurve),
        st.tuples(st.floats(0.0, 5.0), st.floats(0.0, 1e-3)).map(lambda p: fp.EpsDeltaCurve(*p)),
    ), min_size=1, max_size=3))
    pl = [p.to_piecewise(n=501) for p in parts]
    return fp.worst_case(*pl) if len(pl) > 1 else pl[0]


def check_valid(curve):
    b = curve.beta(GRID)
    assert np.all(np.isfinite(b))
    assert np.all(np.diff(b) <= 1e-12)                       # non-increasing
    assert np.all(b <= 1 - GRID + 1e-12)                     # f(a) <= 1 - a
    mid = (b[:-2] * (GRID[2:] - GRID[1:-1]) + b[2:] * (GRID[1:-1] - GRID[:-2])) / (GRID[2:] - GRID[:-2])
    assert np.all(b[1:-1] <= mid + 1e-9)                     # convex


@settings(max_examples=60, deadline=None)
@given(closed_forms())
def test_closed_forms_are_valid_curves(curve):
    check_valid(curve)


@settings(max_examples=30, deadline=None)
@given(piecewise_curves())
def test_piecewise_curves_are_valid(curve):
    check_valid(curve)


@settings(max_examples=30, deadline=None)
@given(st.one_of(closed_forms(), piecewise_curves()))
def test_fitted_mu_is_never_above_the_curve(curve):
    fit = fp.fit_gdp(curve)
    if not np.isfinite(fit.mu):
        return
    g = fp.GaussianCurve(fit.mu)
    # the stated range: attacks with FPR and FNR >= alpha_min
    a = GRID[(GRID >= fit.alpha_min) & (curve.beta(GRID) >= fit.alpha_min)]
    assert np.all(g.beta(a) <= curve.beta(a) + SOUND_TOL)
    # outside the range: f >= G_mu - tau
    assert np.all(curve.beta(GRID) >= g.beta(GRID) - fit.tau - SOUND_TOL)
    assert 0 <= fit.regret <= 1


@settings(max_examples=40, deadline=None)
@given(mus, st.lists(st.floats(0.0, 1.0), min_size=1, max_size=20))
def test_scalar_array_agreement(mu, alphas):
    g = fp.GaussianCurve(mu)
    arr = g.beta(np.array(alphas))
    assert [g.beta(a) for a in alphas] == list(arr)


@settings(max_examples=12, deadline=None)
@given(st.floats(0.0, 5.0), st.floats(0.0, 5.0))
def test_regret_is_zero_for_dominated_summary(m1, m2):
    lo, hi = sorted((m1, m2))
    # f = G_hi already lies below g = G_lo, so no shift is needed
    assert fp.regret(fp.GaussianCurve(hi), fp.GaussianCurve(lo)) <= 1e-12
    assert fp.regret(fp.GaussianCurve(lo), fp.GaussianCurve(hi)) >= 0
    assert fp.symmetric_regret(fp.GaussianCurve(lo), fp.GaussianCurve(hi)) >= 0


def _regret_exhaustive(f, g):
    """Delta(f, g) for a PL curve f against a closed form g, every segment searched (no
    branch and bound): tangent points inside segments and every vertex."""
    a, t = f._breakpoints()
    with np.errstate(divide="ignore", invalid="ignore"):
        slope = -np.diff(t) / np.diff(a)
    d_star = g._d_at_slope(slope)
    d_vert = 1.0 - t - a
    inside = (d_star < d_vert[:-1]) & (d_star > d_vert[1:])
    cand = np.unique(np.clip(np.concatenate([[-1.0, min(f.f0, g.f0), 1.0], d_star[inside], d_vert]), -1, 1))
    return max(0.0, float(np.max(f._alpha_at_d(cand) - g._alpha_at_d(cand))))


@settings(max_examples=25, deadline=None)
@given(st.floats(0.2, 4.0), st.floats(0.3, 1.2), st.integers(3000, 8000))
def test_regret_branch_and_bound_equals_exhaustive_search(mu_f, shrink, n):
    """The regret's block pruning (fit._regret_segments) never skips the maximum: against
    a search over every segment of a many-vertex curve (a worst case of a Gaussian and a
    Laplace curve), for Gaussian summaries below and above the curve's own mu."""
    f = fp.worst_case(fp.GaussianCurve(mu_f).to_piecewise(n=n), fp.LaplaceCurve(mu_f).to_piecewise(n=n))
    g = fp.GaussianCurve(mu_f * shrink)
    assert len(f._breakpoints()[0]) > 8 * 64  # the pruned path is taken
    assert abs(fp.regret(f, g) - _regret_exhaustive(f, g)) <= 1e-15
