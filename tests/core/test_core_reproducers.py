"""Reproducers of overflow, NaN and zero division in the core (issue 22, with its exact
arguments) and their siblings: each returns a finite, correct value or raises ValueError
naming the argument. Full-batch DP-SGD lives in tests/dpsgd/test_dpsgd_full_batch.py."""

from __future__ import annotations

import math

import pytest
from scipy import integrate, stats

import fdpkit as fp
from fdpkit.utility.ztest import _sf

#: Relative agreement of the normal-Laplace tail with numerical integration (quad reaches
#: about 1e-12 relative on these smooth integrands).
QUAD_RTOL = 1e-9
#: A power at effect 0 is the test's level; the critical value is rounded up (XTOL 1e-12).
LEVEL_ATOL = 1e-9


# ----------------------------------------------------------------------------- reproducers
def test_ztest_power_laplace_nan_reproducer():
    """n = 1e-300 observations is not a sample: ValueError naming n (was NaN)."""
    with pytest.raises(ValueError, match=r"^n must be at least 1"):
        fp.ztest_power_laplace(effect=2.91708810289375e16, n=1e-300, sd=1e-300, epsilon=9.119833596865062e299,
                               alpha=0.6977672012505364)


def test_ztest_power_laplace_zero_division_reproducer():
    """A shift of -4.8e16 against noise of scale ~1e-300 in the 'larger' test: power 0 (was
    ZeroDivisionError)."""
    p = fp.ztest_power_laplace(effect=-4.802673596336809e16, n=1.0001, sd=1e-300, epsilon=6.26319181238139e299,
                               alpha=0.6061750586787672)
    assert p == 0.0


def test_two_proportion_power_overflow_reproducer():
    with pytest.raises(ValueError, match=r"^n1 must be at least 1"):
        fp.two_proportion_power(p1=1e-300, p2=0.41156007018984286, n1=0.5, n2=1e-300, mu=1e12)


def test_two_proportion_power_huge_noise_is_finite():
    """The sibling with valid sample sizes: mu = 1e-300 makes the noise sd 1e300; the sd is
    a hypotenuse (no square of 1e300), the power is the level (the effect is drowned)."""
    p = fp.two_proportion_power(p1=0.5, p2=0.41156007018984286, n1=100, n2=100, mu=1e-300)
    assert p == pytest.approx(0.05, abs=LEVEL_ATOL)


def test_worst_case_tpr_overflow_reproducer():
    """G_{8e299} is perfectly distinguishing: the worst case with L_{1e-300} has TPR 1."""
    tpr = fp.worst_case(fp.GaussianCurve(7.988944426467213e299), fp.LaplaceCurve(1e-300)).tpr(1e-3)
    assert tpr == 1.0


def test_posterior_nan_reproducer():
    """At FPR = 5e-324 both rates are subnormal: the ratio in log space gives the posterior
    ~ 1 - 5e-9 (the likelihood ratio at z = isf(5e-324) is about e^{mu z - mu^2/2} ~ 2e8)."""
    post = fp.posterior(fp.GaussianCurve(0.5), 0.5, 5e-324)
    assert 1.0 - 1e-8 < post <= 1.0


def test_posterior_keeps_ordinary_values_and_subnormal_priors():
    assert fp.posterior(fp.GaussianCurve(1.0), 0.01, 1e-3) == pytest.approx(0.15599921, rel=1e-7)
    tiny = fp.posterior(fp.GaussianCurve(1.0), 1e-310, 1e-5)
    assert 0.0 < tiny < 1e-307


# ----------------------------------------------------------------------- siblings found
@pytest.mark.parametrize("alpha", [0.5, 0.6, 0.9361732062079052, 0.999])
def test_laplace_power_at_levels_above_one_half(alpha):
    """Levels above 1/2 put the critical value below 0 (was NaN): at effect 0 the power is
    the level, and a positive effect only raises it."""
    at_zero = fp.ztest_power_laplace(effect=0.0, n=100, sd=0.25, epsilon=1.0, alpha=alpha)
    assert at_zero == pytest.approx(alpha, abs=LEVEL_ATOL) and at_zero <= alpha
    assert fp.ztest_power_laplace(effect=0.2, n=100, sd=0.25, epsilon=1.0, alpha=alpha) >= at_zero
    two = fp.two_sample_power_laplace(effect=0.0, n1=100, n2=300, sd=0.25, epsilon=1.0, alpha=alpha)
    assert two == pytest.approx(alpha, abs=LEVEL_ATOL)


@pytest.mark.parametrize("s, b, x", [(1, 1, 0.5), (1, 0.01, 2.0), (0.01, 1, 3.0), (0.3, 0.7, -1.0),
                                     (1, 0.001, 5.0), (1, 0.05, 8.0)])
def test_normal_laplace_tail_matches_quadrature(s, b, x):
    """The erfcx form of P(N(0, s^2) + Laplace(b) > x) against direct integration, including
    s >> b where the old e^{s^2/(2b^2)} form lost every digit."""
    ref = integrate.quad(lambda y: stats.laplace.pdf(y, scale=b) * stats.norm.sf((x - y) / s),
                         -math.inf, math.inf, epsabs=0, epsrel=1e-12, limit=500)[0]
    assert _sf(x, s, b) == pytest.approx(ref, rel=QUAD_RTOL)


@pytest.mark.parametrize("call, name", [
    (lambda: fp.ztest_power(effect=0.2, n=0.5, sd=0.25, mu=1.0), "n"),
    (lambda: fp.two_sample_power(effect=0.2, n1=100, n2=1e-12, sd=0.25, mu=1.0), "n2"),
    (lambda: fp.two_sample_power_laplace(effect=0.2, n1=1e-300, n2=100, sd=0.25, epsilon=1.0), "n1"),
    (lambda: fp.ZTestSpec(effect=0.2, n=100, sd=float("nan")), "sd"),
    (lambda: fp.mc_regression_power(slope=0.5, n=10**15, noise_sd=0.5, mu=1.0, n_sim=200), "n"),
    (lambda: fp.mc_ttest_power(effect=0.2, n=50, sd=0.25, mu=1e-300, n_sim=200), "mu"),
    (lambda: fp.ztest_power(effect=1.0, n=1, sd=1.0, mu=1e-300, data_range=1e300), "sd"),
])
def test_nonsense_inputs_name_the_argument(call, name):
    with pytest.raises(ValueError) as info:
        call()
    assert str(info.value).startswith(name) or f"{name}=" in str(info.value)


def test_overflowing_squares_are_gone():
    """mu**2, sigma**2 and (w/2)**2 raised OverflowError for mu = 1e300 / sigma = 1e-100."""
    assert fp.GaussianCurve(1e300).beta(0.1) == 0.0
    assert fp.mc_ttest_power(effect=0.2, n=50, sd=0.07, mu=1e15, data_range=5.6e233, n_sim=200).power >= 0
    assert fp.classic_epsilon_for_delta_from_rho(0.0, 5e-324) == 0.0
    acc = fp.account(fp.dpsgd(1e300, 0.01, 10), discretization=1e-2)  # noise capped at 1e100 (pessimistic)
    assert acc.epsilon_for_delta(1e-5) == 0.0
    with pytest.raises(ValueError, match="noise_multiplier"):
        fp.account(fp.dpsgd(1e-300, 0.01, 233), discretization=1e-2)  # a grid of ~1e600 points
    with pytest.raises(ValueError, match="scale"):
        fp.account(fp.Repeated(fp.Subsampled(fp.Laplace(1e-15), 0.01), 10), discretization=1e-2)
    with pytest.raises(ValueError, match="delta"):
        fp.account(fp.Repeated(fp.Laplace(1.0), 3), discretization=1e-2).epsilon_for_delta(float("nan"))


def test_zero_privacy_loss_reports_mu_0_not_minus_0():
    """Pure 0-DP (and (0, 0)-DP) is the diagonal: mu 0, never "-0" in the statement, the
    JSON answer or on the page (the vertices' isf(a) + isf(1 - a) gave -0.0)."""
    import math

    import fdpkit as fp
    from fdpkit.mechanisms import ApproxDP, PureDP

    for m in (PureDP(0.0), ApproxDP(0.0, 0.0)):
        r = fp.privacy_report(m)
        assert r.mu == 0.0 and math.copysign(1.0, r.mu) == 1.0
        assert "-0" not in r.fit.statement()


@pytest.mark.parametrize("make", [lambda: fp.dpsgd(1e200, 0.01, 1000), lambda: fp.Gaussian(1e-300),
                                  lambda: fp.Gaussian(1.0, sensitivity=1e308)])
def test_renyi_overflow_leaves_its_representation_out(make):
    """Renyi divergences beyond the floats (dp_accounting's orders at sigma 1e200, mu = 1e300
    squared) raised OverflowError out of the report (the CLI printed it, no argument named):
    the report stands, and the zCDP and RDP rows say why they are missing."""
    r = fp.privacy_report(make())
    assert r.to_dict() and r.mu > 0
    rows = {x.key: x for x in r.representations().rows}
    assert any("floating-point range" in rows[k].note for k in ("zcdp", "rdp"))


def test_errors_name_the_users_input_not_mu():
    """sigma = 1e-320 said "mu must be finite, got inf" (a name the user never gave); the
    risk reading of (1, 1)-DP failed on the same message while comparing a Gaussian."""
    from fdpkit.risk.reading import read_guarantee

    with pytest.raises(fp.ParameterError, match=r"^sigma=1e-320 is too small") as info:
        fp.privacy_report(fp.Gaussian(1e-320))
    assert info.value.parameter == "sigma"
    r = read_guarantee("epsilon_delta", epsilon=1.0, delta=1.0)
    assert r.grade.level == 3 and "δ = 1 allows any mechanism" in r.headline


@pytest.mark.parametrize("sigma", [0.008, 1e-3])
def test_large_mu_has_a_finite_epsilon(sigma):
    """A Gaussian mechanism with mu above ~110 read epsilon = inf ("no finite (eps, delta)
    guarantee"): the generic search stopped at 1e4. mu = 1000 has epsilon 504,264 at 1e-5."""
    r = fp.privacy_report(fp.Gaussian(sigma))
    eps = r.epsilons[0][1]
    assert math.isfinite(eps) and eps == pytest.approx(float(fp.epsilon_for_delta_from_mu(1.0 / sigma, 1e-5)), rel=1e-9)
    assert float(r.curve.delta_for_epsilon(eps)) <= 1e-5
    assert "no (ε, δ = 1e-05)-DP with finite ε" not in r.statement()
