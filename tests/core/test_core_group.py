"""group_curve: 1 - (1 - f)^{o k} (Dong, Roth & Su 2022, Thm. 2.14), issue 11.

Exact closed forms (GDP: k mu; Laplace: k epsilon; pure DP and uniform sampling by hand),
numeric piecewise curves against those closed forms (sound and close), invariants, and bad
input."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fdpkit as fp

NUMERIC_TPR_RTOL = 1e-3    # group of a piecewise lower bound vs the exact group curve
FLOAT_SLACK = 4.5e-16      # two ulps of 1: TPR near 1 read in TPR arithmetic
EXACT_ATOL = 1e-11         # piecewise-linear inputs: exact up to the 1e-12 relative safety margin
ALPHAS = np.concatenate([np.geomspace(1e-12, 1e-3, 40), np.linspace(1e-3, 1.0, 200)])


@pytest.mark.parametrize("mu,k", [(0.5, 2), (0.3, 7), (1.0, 1)])
def test_gdp_group_is_exact(mu, k):
    g = fp.group_curve(fp.GaussianCurve(mu), k)
    assert isinstance(g, fp.GaussianCurve) and g.mu == pytest.approx(k * mu, rel=1e-15)


@pytest.mark.parametrize("eps,k", [(0.5, 3), (0.1, 20)])
def test_laplace_group_is_laplace_of_k_epsilon(eps, k):
    g = fp.group_curve(fp.LaplaceCurve(eps), k)
    assert isinstance(g, fp.LaplaceCurve) and g.epsilon == pytest.approx(k * eps, rel=1e-15)


@pytest.mark.parametrize("curve,k,exact", [
    (fp.LaplaceCurve(0.5), 3, fp.LaplaceCurve(1.5)),
    (fp.LaplaceCurve(0.1), 30, fp.LaplaceCurve(3.0)),
    (fp.GaussianCurve(0.5), 4, fp.GaussianCurve(2.0)),
    (fp.GaussianCurve(0.2), 25, fp.GaussianCurve(5.0)),
])
def test_numeric_group_is_sound_and_close_to_the_closed_form(curve, k, exact):
    numeric = fp.group_curve(curve.to_piecewise(), k)
    assert numeric.bound == "lower"
    assert np.all(numeric.beta(ALPHAS) <= exact.beta(ALPHAS))
    assert np.all(numeric.tpr(ALPHAS) >= exact.tpr(ALPHAS))
    np.testing.assert_allclose(numeric.tpr(ALPHAS), exact.tpr(ALPHAS), rtol=NUMERIC_TPR_RTOL)
    eps = np.linspace(0, 3, 13)
    assert np.all(numeric.delta_for_epsilon(eps) >= exact.delta_for_epsilon(eps) - 1e-15)


def test_pruned_group_stays_sound():
    # k = 1000 squares ten times: vertex counts exceed MAX_VERTICES and are pruned
    numeric = fp.group_curve(fp.GaussianCurve(0.002).to_piecewise(), 1000)
    exact = fp.GaussianCurve(2.0)
    assert np.all(numeric.tpr(ALPHAS) >= exact.tpr(ALPHAS))
    np.testing.assert_allclose(numeric.tpr(ALPHAS), exact.tpr(ALPHAS), rtol=1e-2)


def _pure_dp_group_tpr(eps, k, alpha):
    """h^{o k}(alpha) for h = min(e^eps a, 1 - e^-eps (1 - a)), by direct iteration."""
    a = np.asarray(alpha, float)
    for _ in range(k):
        a = np.minimum(np.minimum(math.exp(eps) * a, 1 - math.exp(-eps) * (1 - a)), 1.0)
    return a


@pytest.mark.parametrize("eps,k", [(1.0, 2), (0.3, 5), (2.0, 3)])
def test_pure_dp_group_matches_direct_iteration_and_beats_k_eps(eps, k):
    g = fp.group_curve(fp.EpsDeltaCurve(eps), k)
    np.testing.assert_allclose(g.tpr(ALPHAS), _pure_dp_group_tpr(eps, k, ALPHAS), rtol=1e-11, atol=EXACT_ATOL)
    assert np.all(g.tpr(ALPHAS) >= _pure_dp_group_tpr(eps, k, ALPHAS) - FLOAT_SLACK)  # sound
    # group privacy of eps-DP is k eps-DP (Dwork & Roth); Thm. 2.14 is at least as strong
    assert np.all(g.beta(ALPHAS) >= fp.EpsDeltaCurve(k * eps).beta(ALPHAS) - EXACT_ATOL)
    assert g.delta_for_epsilon(k * eps) <= EXACT_ATOL


def test_uniform_sampling_group_is_zero_k_p():
    base = fp.UniformSamplingCurve(1.0, 50)
    g = fp.group_curve(base, 4)
    exact = fp.EpsDeltaCurve(0.0, 4 * base.delta)
    np.testing.assert_allclose(g.beta(ALPHAS), exact.beta(ALPHAS), atol=EXACT_ATOL)
    assert np.all(g.beta(ALPHAS) <= exact.beta(ALPHAS))


@settings(max_examples=25, deadline=None)
@given(eps=st.floats(0.05, 3.0), delta=st.floats(0.0, 0.05), k=st.integers(2, 6))
def test_group_of_eps_delta_is_a_sound_lower_bound(eps, delta, k):
    f = fp.EpsDeltaCurve(eps, delta)
    g = fp.group_curve(f, k)
    # direct iteration of h(a) = min(1, delta + e^eps a, 1 - e^-eps (1 - delta - a))
    a = ALPHAS.copy()
    for _ in range(k):
        a = np.minimum(1.0, np.minimum(delta + math.exp(eps) * a, 1 - math.exp(-eps) * (1 - delta - a)))
    assert np.all(g.tpr(ALPHAS) >= a - FLOAT_SLACK)
    np.testing.assert_allclose(g.tpr(ALPHAS), a, atol=1e-11)
    # monotone in k: larger groups are less private
    assert np.all(fp.group_curve(f, k + 1).beta(ALPHAS) <= g.beta(ALPHAS) + 1e-12)


@pytest.mark.parametrize("k,exc", [(0, ValueError), (-1, ValueError), (2.5, ValueError),
                                   (float("inf"), ValueError), (float("nan"), ValueError),
                                   ("2", TypeError), (True, TypeError), (None, TypeError)])
def test_bad_k(k, exc):
    with pytest.raises(exc, match="k must be an integer >= 1"):
        fp.group_curve(fp.GaussianCurve(1.0), k)


def test_bad_curve():
    with pytest.raises(TypeError, match="curve must be a TradeOffCurve"):
        fp.group_curve("gaussian", 2)
    with pytest.raises(ValueError, match="curve must be a TradeOffCurve"):  # also a ValueError
        fp.group_curve(1.0, 2)
    with pytest.raises(ValueError, match="upper"):
        fp.group_curve(fp.PiecewiseLinearCurve([0, 0.5, 1], [1, 0.2, 0], "upper"), 2)


def test_asymmetric_piecewise_group_matches_direct_iteration():
    f = fp.PiecewiseLinearCurve([0, 0.05, 0.3, 1], [0.8, 0.4, 0.1, 0])
    g = fp.group_curve(f, 3)
    a = ALPHAS.copy()
    for _ in range(3):
        a = f.tpr(a)
    assert np.all(g.tpr(ALPHAS) >= a - FLOAT_SLACK)
    np.testing.assert_allclose(g.tpr(ALPHAS), a, atol=EXACT_ATOL)
