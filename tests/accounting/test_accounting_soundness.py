"""Issue 3 soundness tests: numeric curves from dp_accounting PLDs never more optimistic
than the truth or the accountant."""

import numpy as np
import pytest

import fdpkit as fp
from fdpkit.accounting.pld_curve import curve_from_pld
from fdpkit.accounting.pld import build_pld
from fdpkit.mechanisms import Gaussian, Repeated, dpsgd

DISC = 1e-4
TPR_RTOL = 1e-3            # numeric vs exact TPR for Gaussians at discretization 1e-4
DELTA_SLACK = 1e-15        # absolute float slack when comparing implied delta to the accountant
ALPHAS = np.concatenate([np.geomspace(1e-12, 0.5, 300)])
EPS_GRID = np.concatenate([np.linspace(0, 5, 51), np.linspace(5.5, 30, 50)])


@pytest.fixture(scope="module")
def gaussian_cases():
    out = []
    for mech, mu in ((Gaussian(1.0), 1.0), (Repeated(Gaussian(10.0), 100), 1.0)):
        out.append((curve_from_pld(build_pld(mech, DISC)), fp.GaussianCurve(mu)))
    return out


def test_gaussian_through_pld_is_sound_and_tight(gaussian_cases):
    for numeric, exact in gaussian_cases:
        t_num, t_exact = numeric.tpr(ALPHAS), exact.tpr(ALPHAS)
        assert np.all(t_num >= t_exact), "numeric TPR below the exact TPR"
        np.testing.assert_allclose(t_num, t_exact, rtol=TPR_RTOL)
        assert numeric.bound == "lower"


@pytest.fixture(scope="module")
def small_rate_dpsgd():
    cases = [(1.0, 0.001, 3000), (0.8, 0.004, 5000), (1.2, 0.01, 2000)]
    out = []
    for nm, q, steps in cases:
        acc = fp.account(dpsgd(nm, q, steps), discretization=DISC)
        out.append(acc)
    return out


def test_dpsgd_implied_delta_not_below_accountant(small_rate_dpsgd):
    for acc in small_rate_dpsgd:
        implied = acc.curve.delta_for_epsilon(EPS_GRID)
        accountant = acc.pld.get_delta_for_epsilon(EPS_GRID)
        assert np.all(implied >= accountant - DELTA_SLACK), np.max(accountant - implied)
        b = acc.curve.betas
        assert np.all(b <= 1 - acc.curve.alphas + 1e-15)


def test_fitted_mu_is_sound_against_the_accountant(small_rate_dpsgd):
    for acc in small_rate_dpsgd:
        curve = acc.curve
        fit = fp.fit_gdp(curve)
        g = fp.GaussianCurve(fit.mu)
        a = np.concatenate([curve.alphas, np.geomspace(1e-14, 1, 2000)])
        a = a[(a > 0) & (a < 1)]
        inside = (a >= fit.alpha_min) & (curve.beta(a) >= fit.alpha_min)
        assert np.all(g.beta(a[inside]) <= curve.beta(a[inside]) + 1e-15)
        assert np.all(curve.beta(a) >= g.beta(a) - fit.tau - 1e-15)
        eps = np.linspace(0, 30, 121)
        acc_delta = acc.pld.get_delta_for_epsilon(eps)
        assert np.all(acc_delta <= fp.delta_for_epsilon_from_mu(fit.mu, eps) + fit.tau + 1e-15)


def test_issue3_gdpnum_counterexample_is_sound():
    """gdpnum reports 1.0016 for noise 1.2, rate 0.01, 10,000 steps; delta_1.0016(2) is
    below the accountant's delta(2), so that is not a valid guarantee. fdpkit's mu must be."""
    acc = fp.account(dpsgd(1.2, 0.01, 10_000), discretization=DISC)
    fit = fp.fit_gdp(acc.curve)
    assert fp.delta_for_epsilon_from_mu(1.0016, 2.0) < acc.delta_for_epsilon(2.0)
    assert fit.mu > 1.02
    assert acc.delta_for_epsilon(2.0) <= fp.delta_for_epsilon_from_mu(fit.mu, 2.0) + fit.tau


def test_plain_gaussian_tail_tpr_is_not_zero():
    g = fp.tradeoff_curve(Gaussian(0.5))  # closed form, mu = 2
    assert g.tpr(1e-10) == pytest.approx(6.46e-6, rel=1e-2)
    assert g.tpr(1e-8) == pytest.approx(1.5e-4, rel=5e-2)


def test_symmetric_half_shortcuts_equal_the_full_curve():
    """fit_gdp, regret and delta(eps) use only the alpha <= beta half of the certified
    (symmetric) curve; a copy without the symmetry flag must give the same answers."""
    from fdpkit.curves import PiecewiseLinearCurve

    for mech in (fp.dpsgd(2.0, 0.5, 10), fp.dpsgd(1.2, 0.01, 300)):
        curve = curve_from_pld(build_pld(mech, 1e-3))
        assert curve.is_symmetric and curve._half_breakpoints() is not None
        # the same vertices, not flagged symmetric: the full-curve code paths run
        plain = PiecewiseLinearCurve._from_hull_vertices(
            curve.alphas, curve.tprs, curve.betas, "lower", symmetric=False
        )
        for alpha_min in (0.0, 1e-10, 1e-6, 1e-3):
            half, full = fp.fit_gdp(curve, alpha_min=alpha_min), fp.fit_gdp(plain, alpha_min=alpha_min)
            if alpha_min == 0.0:
                assert half.mu == full.mu == np.inf  # f(0) = 1 - truncation mass < 1
                continue
            # the mirror half stores alpha = 1 - TPR (rounded near 1): agreement to 1e-9, the
            # relative safety margin fit_gdp adds
            assert abs(half.mu - full.mu) <= 1e-9 * full.mu
            g = fp.GaussianCurve(half.mu)
            assert abs(fp.regret(curve, g) - fp.regret(plain, g)) <= 1e-9
        eps = np.linspace(0, 20, 41)
        np.testing.assert_allclose(curve.delta_for_epsilon(eps), plain.delta_for_epsilon(eps),
                                   rtol=1e-12, atol=1e-300)
