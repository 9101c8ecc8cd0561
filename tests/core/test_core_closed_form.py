"""Layer 1: closed forms against independent computations and against numeric curves."""

import math

import numpy as np
import pytest
from scipy import stats

import fdpkit as fp

REL_TOL = 1e-9          # closed form vs independent scipy formula
TANGENT_REL_TOL = 1e-4  # tangent-line lower bound vs the smooth curve
TAIL_ALPHAS = np.array([1e-300, 1e-200, 1e-100, 1e-30, 1e-12, 1e-6, 1e-3, 0.1, 0.5, 0.9])


def test_gaussian_matches_definition():
    a = np.linspace(0.001, 0.999, 999)
    for mu in (0.0, 0.5, 1.0, 3.0):
        expected = stats.norm.cdf(stats.norm.ppf(1 - a) - mu)
        np.testing.assert_allclose(fp.GaussianCurve(mu).beta(a), expected, rtol=REL_TOL, atol=1e-15)


def test_gaussian_tails_keep_digits():
    g = fp.GaussianCurve(2.0)
    # exact TPR at alpha = 1e-10 and 1e-8 for mu = 2 (issue 3: 6.5e-6 and 1.5e-4)
    assert g.tpr(1e-10) == pytest.approx(stats.norm.sf(stats.norm.isf(1e-10) - 2.0), rel=1e-12)
    assert 6.4e-6 < g.tpr(1e-10) < 6.6e-6
    assert 1.4e-4 < g.tpr(1e-8) < 1.6e-4
    for mu in (0.1, 1.0, 40.0):
        t = fp.GaussianCurve(mu).tpr(TAIL_ALPHAS)
        assert np.all(np.isfinite(t)) and np.all(t > 0) and np.all(t >= TAIL_ALPHAS)


def test_eps_delta_vertices_and_tail():
    f = fp.EpsDeltaCurve(1.0, 1e-5)
    assert f.f0 == pytest.approx(1 - 1e-5)
    knee = (1 - 1e-5) / (1 + math.e)
    assert f.beta(knee) == pytest.approx(knee, rel=1e-12)
    assert f.tpr(1e-12) == pytest.approx(1e-5 + math.e * 1e-12, rel=1e-12)
    g = fp.EpsDeltaCurve(100.0)
    assert np.all(np.isfinite(g.beta(TAIL_ALPHAS)))
    assert g.tpr(1e-50) == pytest.approx(math.exp(100) * 1e-50, rel=1e-12)


def test_laplace_matches_location_family():
    eps = 1.3
    a = np.linspace(0.001, 0.999, 999)
    lap = stats.laplace
    expected = lap.cdf(lap.ppf(1 - a) - eps)
    np.testing.assert_allclose(fp.LaplaceCurve(eps).beta(a), expected, rtol=1e-9, atol=1e-14)


def test_laplace_is_above_pure_dp_curve():
    a = np.linspace(0, 1, 2001)
    for eps in (0.1, 1.0, 5.0):
        assert np.all(fp.LaplaceCurve(eps).beta(a) >= fp.EpsDeltaCurve(eps).beta(a) - 1e-15)


def test_randomized_response_is_pure_dp_curve():
    a = np.linspace(0, 1, 1001)
    np.testing.assert_array_equal(fp.RandomizedResponseCurve(2.0).beta(a), fp.EpsDeltaCurve(2.0).beta(a))


def test_uniform_sampling_example3():
    mu, n = 1.0, 5
    p = (1 - math.exp(-mu)) / n
    f = fp.UniformSamplingCurve(mu, n)
    a = np.linspace(0, 1, 101)
    np.testing.assert_allclose(f.beta(a), np.maximum(0, 1 - p - a), atol=1e-15)
    assert f.f0 < 1


@pytest.mark.parametrize("curve", [fp.GaussianCurve(1.5), fp.LaplaceCurve(1.0)])
def test_tangent_lower_bound_is_sound_and_tight(curve):
    pl = curve.to_piecewise()
    assert pl.bound == "lower"
    a = np.concatenate([np.geomspace(1e-12, 0.5, 400), 1 - np.geomspace(1e-12, 0.5, 400)])
    # sound: never above the curve (TPR never below)
    assert np.all(pl.tpr(a) >= curve.tpr(a) * (1 - 1e-12))
    assert np.all(pl.beta(a) <= curve.beta(a) * (1 + 1e-9) + 1e-20)
    # tight in the region that matters
    mid = np.geomspace(1e-12, 0.5, 400)
    np.testing.assert_allclose(pl.tpr(mid), curve.tpr(mid), rtol=TANGENT_REL_TOL)


def test_fit_of_numeric_gaussian_matches_closed_form():
    """A piecewise-linear lower bound of G_mu fits back to mu (never below it)."""
    for mu in (0.5, 1.5, 3.0):
        fit = fp.fit_gdp(fp.GaussianCurve(mu).to_piecewise())
        assert mu <= fit.mu < mu * (1 + 1e-5)
        assert fit.alpha_min == 1e-10 and fit.tau > 0


def test_advantage_closed_forms():
    mu = 1.3
    assert fp.advantage(fp.GaussianCurve(mu)) == pytest.approx(2 * stats.norm.cdf(mu / 2) - 1, rel=1e-12)
    eps, delta = 1.0, 1e-3
    assert fp.advantage(fp.EpsDeltaCurve(eps, delta)) == pytest.approx(
        (math.exp(eps) - 1 + 2 * delta) / (math.exp(eps) + 1), rel=1e-12)
    # numeric path agrees with the closed forms
    assert fp.advantage(fp.GaussianCurve(mu).to_piecewise()) == pytest.approx(
        fp.advantage(fp.GaussianCurve(mu)), abs=1e-6)
    assert fp.advantage(fp.LaplaceCurve(2.0)) == pytest.approx(
        fp.advantage(fp.LaplaceCurve(2.0).to_piecewise()), abs=1e-6)


def test_bayes_risk_gaussian():
    # equal prior: min error = (1 - advantage)/2
    mu = 1.0
    assert fp.bayes_risk(fp.GaussianCurve(mu), 0.5) == pytest.approx(
        (1 - fp.advantage(fp.GaussianCurve(mu))) / 2, abs=1e-9)
    assert fp.bayes_risk(fp.GaussianCurve(mu), 0.0) == 0.0


def test_regret_exact_matches_dense_kappa_bisection():
    """Exact regret (candidate points) against the paper's bisection on kappa over a grid."""
    f = fp.RandomizedResponseCurve(1.0)
    g = fp.GaussianCurve(fp.fit_gdp(f).mu)
    a = np.linspace(0, 1, 200001)
    lo, hi = 0.0, 1.0
    for _ in range(60):
        k = (lo + hi) / 2
        shifted = np.where(a + k <= 1, f.beta(np.minimum(a + k, 1)), 0.0) - k
        if np.all(shifted <= g.beta(a) + 1e-15):
            hi = k
        else:
            lo = k
    assert fp.regret(f, g) == pytest.approx(hi, abs=1e-5)


def test_regret_smooth_vs_smooth_matches_piecewise():
    f, g = fp.LaplaceCurve(1.0), fp.GaussianCurve(fp.fit_gdp(fp.LaplaceCurve(1.0)).mu)
    assert fp.regret(f, g) == pytest.approx(fp.regret(f.to_piecewise(), g), abs=1e-5)


def test_envelope_and_worst_case():
    a = np.linspace(0, 1, 501)
    g1, g2, e = fp.GaussianCurve(1.0), fp.GaussianCurve(2.0), fp.EpsDeltaCurve(1.0, 1e-3)
    env = fp.envelope(g1, e)
    np.testing.assert_allclose(env.beta(a), np.maximum(g1.beta(a), e.beta(a)))
    wc = fp.worst_case(g1, g2)
    assert np.all(wc.beta(a) <= g2.beta(a) + 1e-12)
    np.testing.assert_allclose(wc.beta(a), g2.beta(a), atol=1e-6)
    # piecewise-linear worst case is exact: hull of min
    p = fp.PiecewiseLinearCurve([0, 0.1, 1], [0.6, 0.3, 0])
    q = p.inverse()
    s = fp.worst_case(p, q)
    assert s.is_symmetric
    assert np.all(s.beta(a) <= np.minimum(p.beta(a), q.beta(a)) + 1e-15)
    assert p.symmetrize().beta(0.2) == pytest.approx(s.beta(0.2))


def test_fit_is_infinite_when_f0_below_one_underflows():
    # Regression (hypothesis): f(0) = 1 - 4.4e-191 rounds to 1.0, yet no finite mu holds.
    fit = fp.fit_gdp(fp.EpsDeltaCurve(epsilon=64.5, delta=4.4e-191))
    assert fit.mu == math.inf
    assert "4.4e-191" in fit.reason


@pytest.mark.parametrize("mu", [13.0, 20.0])
def test_fit_is_infinite_when_the_fitting_range_is_empty(mu):
    # beta(alpha_min) < alpha_min: no attack has FPR and FNR >= alpha_min. Never report 0.
    fit = fp.fit_gdp(fp.GaussianCurve(mu).to_piecewise(), alpha_min=1e-10)
    assert fit.mu == math.inf
    assert "lower alpha_min" in fit.reason
    deeper = fp.fit_gdp(fp.GaussianCurve(mu).to_piecewise(), alpha_min=1e-40)
    assert deeper.mu >= mu * (1 - 1e-9) or deeper.mu == math.inf


def test_closed_form_reports_carry_no_lowered_range_warning():
    # an exact Gaussian curve fits mu over every FPR (alpha_min 0); its report once said
    # "mu exceeds what a fit on FPR and FNR >= 1e-10 can state ... lowered to 0" even at mu = 1
    for m in (fp.Gaussian(1.0), fp.dpsgd(2.0, batch_size=100, dataset_size=1000, epochs=3, sampling="shuffled",
                                         relation="replace-one")):
        r = fp.privacy_report(m)
        assert r.fit.alpha_min == 0.0
        assert not any("exceeds what a fit" in w for w in r.warnings), r.warnings
    # a numeric curve whose mu is beyond 2 z(1e-10) = 12.7 still says where its range went
    r = fp.privacy_report(fp.dpsgd(0.8, 0.3, 2000), discretization=1e-3)
    assert 0.0 < r.fit.alpha_min < 1e-10
    assert any("exceeds what a fit" in w and f"lowered to {r.fit.alpha_min:g}" in w for w in r.warnings)
