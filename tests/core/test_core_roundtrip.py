"""Layer 2: round trips over grids including 0, 1 and extremes."""

import numpy as np
import pytest

import fdpkit as fp

EXTREME_ALPHAS = np.array([0.0, 1e-300, 1e-12, 1e-6, 0.3, 0.5, 1 - 1e-12, 1.0])


@pytest.mark.parametrize("curve", [
    fp.GaussianCurve(0.0), fp.GaussianCurve(1.0), fp.GaussianCurve(40.0),
    fp.EpsDeltaCurve(0.0), fp.EpsDeltaCurve(100.0, 1e-9), fp.LaplaceCurve(3.0),
    fp.RandomizedResponseCurve(0.5), fp.UniformSamplingCurve(2.0, 10),
])
def test_scalar_and_array_agree_and_are_finite(curve):
    arr = curve.beta(EXTREME_ALPHAS)
    assert arr.shape == EXTREME_ALPHAS.shape
    assert np.all(np.isfinite(arr)) and np.all((arr >= 0) & (arr <= 1))
    for a, b in zip(EXTREME_ALPHAS, arr):
        s = curve.beta(float(a))
        assert isinstance(s, float) and s == pytest.approx(b, abs=1e-15)
    assert curve.beta(1.0) == pytest.approx(0.0, abs=1e-15)
    assert np.all(curve.tpr(EXTREME_ALPHAS) + arr == pytest.approx(1.0, abs=1e-14))


def test_inverse_of_inverse_is_identity():
    p = fp.PiecewiseLinearCurve([0, 0.05, 0.3, 1], [0.9, 0.5, 0.1, 0])
    a = np.linspace(0, 1, 1001)
    np.testing.assert_allclose(p.inverse().inverse().beta(a), p.beta(a), atol=1e-12)


def test_inverse_with_catastrophic_tail():
    p = fp.PiecewiseLinearCurve([0, 0.5, 1], [0.8, 0.0, 0.0])  # f(0) < 1 and reaches 0
    inv = p.inverse()
    assert inv.beta(0.0) == pytest.approx(0.5)
    assert inv.beta(0.9) == 0.0


def test_pl_roundtrip_through_tpr_and_beta():
    g = fp.GaussianCurve(2.0).to_piecewise()
    again = fp.PiecewiseLinearCurve(g.alphas, g.betas, g.bound, tpr=g.tprs)
    np.testing.assert_array_equal(again.alphas, g.alphas)
    # g is symmetric by construction (fitted on its accurate half), again is checked: the
    # two fits agree to rounding
    assert fp.fit_gdp(again).mu == pytest.approx(fp.fit_gdp(g).mu, rel=1e-11)


def test_grid_step():
    g = fp.GaussianCurve(1.0).grid(0.25)
    np.testing.assert_allclose(g.alpha, [0, 0.25, 0.5, 0.75, 1])


def test_fit_exact_closed_forms_and_catastrophic():
    assert fp.fit_gdp(fp.GaussianCurve(2.5)).mu == 2.5
    fit = fp.fit_gdp(fp.UniformSamplingCurve(1.0, 5))
    assert fit.mu == float("inf") and "Prop. 6.2" in fit.reason
    fit = fp.fit_gdp(fp.EpsDeltaCurve(1.0, 1e-6))
    assert fit.mu == float("inf")
    assert "No finite" in fit.statement()


def test_fit_piecewise_with_tiny_tail_mass_uses_range():
    g = fp.GaussianCurve(1.0).to_piecewise()
    t = g.tprs.copy()
    t[0] = 1e-14  # numeric tail mass at alpha = 0: f(0) < 1
    p = fp.PiecewiseLinearCurve.from_tpr(g.alphas, np.maximum.accumulate(t))
    fit = fp.fit_gdp(p)
    assert np.isfinite(fit.mu) and fit.mu >= 1.0
    assert "f(0)" in fit.reason and fit.alpha_min == 1e-10
