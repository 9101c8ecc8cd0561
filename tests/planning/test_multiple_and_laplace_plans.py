"""Two-sample Laplace power and the privacy-budget split for multiple tests (issue 15).

Closed forms: at sd = 0 the difference of two Laplace(b) noises has
P(L1 - L2 > x) = (1/2)(1 + x/(2b)) e^{-x/b}; at effect 0 the power is the level; mu_i =
mu / sqrt(k) and epsilon_i = epsilon / k. Independent cross-checks: adaptive quadrature of
the normal CDF against the Laplace-difference density, and a seeded Monte Carlo.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import integrate, optimize, stats

import fdpkit as fp
from fdpkit.mechanisms import Laplace, Repeated
from fdpkit.risk import pure_epsilon_for_attack_power
from fdpkit.utility import composed_epsilon, composed_mu, split_epsilon, split_mu

CLOSED_FORM_RTOL = 1e-9
QUADRATURE_ATOL = 1e-9
#: Monte Carlo: replicates and how many standard errors the estimate may be off
MC_DRAWS = 400_000
MC_SIGMAS = 5.0
#: slack of the PLD accountant's pessimistic discretization at 1e-4 (a lower bound on the curve)
PLD_RTOL = 1e-4


def _laplace_difference_density(y, b1, b2):
    if abs(b1 - b2) < 1e-12:
        return (1.0 / (4.0 * b1)) * (1.0 + abs(y) / b1) * math.exp(-abs(y) / b1)
    return (b1 * math.exp(-abs(y) / b1) - b2 * math.exp(-abs(y) / b2)) / (2.0 * (b1 * b1 - b2 * b2))


def _quad_power(effect, n1, n2, sd, epsilon, alpha, data_range=1.0):
    """One-sided power by adaptive quadrature (independent of the library's formulas)."""
    s = sd * math.sqrt(1.0 / n1 + 1.0 / n2)
    b1, b2 = data_range / n1 / epsilon, data_range / n2 / epsilon

    def sf(x):
        f = lambda y: _laplace_difference_density(y, b1, b2) * stats.norm.sf((x - y) / s)  # noqa: E731
        return (integrate.quad(f, -math.inf, 0.0, epsabs=1e-13, limit=200)[0]
                + integrate.quad(f, 0.0, math.inf, epsabs=1e-13, limit=200)[0])

    crit = optimize.brentq(lambda x: sf(x) - alpha, 0.0, 50.0 * (s + b1 + b2), xtol=1e-14)
    return sf(crit - effect)


def test_two_sample_laplace_closed_form_without_sampling_noise():
    b, alpha, effect = 0.05, 0.05, 0.12  # n = 20, range 1, epsilon = 1
    sf = lambda x: 0.5 * (1 + x / (2 * b)) * math.exp(-x / b)  # noqa: E731
    crit = optimize.brentq(lambda x: sf(x) - alpha, 0.0, 10.0, xtol=1e-15)
    expected = sf(crit - effect) if crit >= effect else 1 - sf(effect - crit)
    got = fp.two_sample_power_laplace(effect=effect, n1=20, n2=20, sd=0.0, epsilon=1.0, level=alpha)
    assert got == pytest.approx(expected, rel=CLOSED_FORM_RTOL)


@pytest.mark.parametrize("alternative", ["larger", "smaller", "two-sided"])
@pytest.mark.parametrize("n1,n2,sd", [(50, 50, 0.3), (10, 10, 0.05), (400, 400, 0.5), (30, 90, 0.2)])
def test_level_is_exact_at_no_effect(alternative, n1, n2, sd):
    p = fp.two_sample_power_laplace(effect=0.0, n1=n1, n2=n2, sd=sd, epsilon=0.7, level=0.05, alternative=alternative)
    assert p == pytest.approx(0.05, rel=1e-7)


@pytest.mark.parametrize("n1,n2,sd,epsilon", [(50, 50, 0.3, 1.0), (10, 10, 0.05, 0.5), (400, 400, 0.5, 2.0),
                                               (30, 90, 0.2, 1.0)])
def test_matches_adaptive_quadrature(n1, n2, sd, epsilon):
    got = fp.two_sample_power_laplace(effect=0.1, n1=n1, n2=n2, sd=sd, epsilon=epsilon, level=0.05)
    assert got == pytest.approx(_quad_power(0.1, n1, n2, sd, epsilon, 0.05), abs=QUADRATURE_ATOL)


@pytest.mark.parametrize("alternative", ["larger", "two-sided"])
def test_matches_monte_carlo(alternative):
    n1, n2, sd, eps, effect, alpha = 40, 60, 0.3, 0.8, 0.08, 0.05
    rng = np.random.default_rng(20261123)
    noise = lambda n: rng.laplace(0.0, (1.0 / n) / eps, MC_DRAWS)  # noqa: E731
    null = rng.normal(0.0, sd * math.sqrt(1 / n1 + 1 / n2), MC_DRAWS) + noise(n1) - noise(n2)
    alt = rng.normal(effect, sd * math.sqrt(1 / n1 + 1 / n2), MC_DRAWS) + noise(n1) - noise(n2)
    stat = np.abs(null) if alternative == "two-sided" else null
    crit = float(np.quantile(stat, 1 - alpha))
    mc = float(np.mean((np.abs(alt) if alternative == "two-sided" else alt) > crit))
    got = fp.two_sample_power_laplace(effect=effect, n1=n1, n2=n2, sd=sd, epsilon=eps, level=alpha,
                                      alternative=alternative)
    se = math.sqrt(mc * (1 - mc) / MC_DRAWS)
    assert abs(got - mc) < MC_SIGMAS * se + 2e-3  # + the spread of the simulated critical value


def test_limits_and_ordering():
    kw = dict(effect=0.1, n1=200, n2=200, sd=0.25, level=0.05)
    nonprivate = fp.two_sample_power(mu=math.inf, **kw)
    assert fp.two_sample_power_laplace(epsilon=math.inf, **kw) == pytest.approx(nonprivate, rel=1e-9)
    powers = [fp.two_sample_power_laplace(epsilon=e, **kw) for e in (0.05, 0.2, 1.0, 5.0)]
    assert all(a < b for a, b in zip(powers, powers[1:])) and powers[-1] < nonprivate
    # nearly equal group sizes: the partial fractions and the equal-scale formula agree
    near = fp.two_sample_power_laplace(effect=0.1, n1=200, n2=200.001, sd=0.25, epsilon=0.5)
    same = fp.two_sample_power_laplace(effect=0.1, n1=200, n2=200, sd=0.25, epsilon=0.5)
    assert near == pytest.approx(same, rel=1e-5)


@pytest.mark.parametrize("bad,name", [({"epsilon": 0.0}, "epsilon"), ({"n1": -1}, "n1"), ({"sd": -0.1}, "sd"),
                                      ({"level": 1.5}, "level"), ({"alternative": "up"}, "alternative")])
def test_bad_input_names_the_argument(bad, name):
    kw = dict(effect=0.1, n1=20, n2=20, sd=0.2, epsilon=1.0) | bad
    with pytest.raises(ValueError, match=name):
        fp.two_sample_power_laplace(**kw)


def test_spec_two_groups_laplace_power_and_method():
    spec = fp.ZTestSpec(effect=0.1, n=200, sd=0.25, groups=2, alternative="two-sided")
    ref = fp.two_sample_power_laplace(effect=0.1, n1=200, n2=200, sd=0.25, epsilon=1.0, alternative="two-sided")
    assert spec.laplace_power(epsilon=1.0) == pytest.approx(ref, rel=1e-12)
    assert "Laplace" in spec.to_dict()["laplace_power_method"]
    plan = fp.privacy_first(blatant_disclosure_ok=False, high_confidence_ok=True, max_attack_power=0.05,
                            analysis=spec).to_dict()
    lap = plan["options"][1]
    # the power of the noise the plan prints (b rounded up: never above the limit's)
    assert lap["power"] == pytest.approx(spec.laplace_power(epsilon=lap["noise_value_per_test"]), rel=1e-12)
    assert lap["power"] <= spec.laplace_power(epsilon=lap["value"])
    assert plan["laplace_scale"] == pytest.approx((1 / 200) / lap["value"], rel=CLOSED_FORM_RTOL)


# ----------------------------------------------------------------------------- budget split
def test_split_closed_forms_and_round_trips():
    assert split_mu(1.0, 4) == pytest.approx(0.5, rel=CLOSED_FORM_RTOL)
    assert split_epsilon(1.0, 4) == pytest.approx(0.25, rel=CLOSED_FORM_RTOL)
    for k in (1, 2, 7, 10**6):
        assert composed_mu(split_mu(0.8, k), k) == pytest.approx(0.8, rel=1e-12)
        assert composed_epsilon(split_epsilon(3.0, k), k) == pytest.approx(3.0, rel=1e-12)
    assert split_mu(math.inf, 3) == math.inf and split_mu(2.0, 1) == 2.0
    for bad, name in (((1.0, 0), "tests"), ((1.0, 2.5), "tests"), ((0.0, 2), "mu"), ((-1.0, 2), "mu")):
        with pytest.raises(ValueError, match=name):
            split_mu(*bad)
    with pytest.raises(ValueError, match="epsilon"):
        split_epsilon(float("nan"), 2)


@settings(max_examples=40, deadline=None)
@given(mu=st.floats(1e-3, 50), k=st.integers(1, 10_000))
def test_split_mu_composes_back_under_gdp(mu, k):
    # GDP composition of k equal shares (Dong et al. Cor. 3.3) gives the total back
    mu_i = split_mu(mu, k)
    assert math.sqrt(k * mu_i**2) == pytest.approx(mu, rel=1e-12)


def test_pure_epsilon_for_attack_power_is_the_worst_case():
    for p, a in ((0.05, 1e-3), (0.3, 0.1), (0.9, 0.6)):
        eps = pure_epsilon_for_attack_power(p, a)
        assert float(fp.EpsDeltaCurve(eps, 0.0).tpr(a)) == pytest.approx(p, rel=1e-9)
        assert eps <= fp.laplace_epsilon_for_attack_power(p, a) * (1 + 1e-12)
    assert pure_epsilon_for_attack_power(0.05, 1e-3) == pytest.approx(math.log(50), rel=1e-9)


def test_privacy_first_splits_the_budget_over_tests():
    k, limit, fpr = 4, 0.05, 1e-3
    spec = fp.ZTestSpec(effect=0.2, n=100, sd=0.25, alpha=0.05, tests=k, statistic="mean")
    plan = fp.privacy_first(blatant_disclosure_ok=False, high_confidence_ok=True, max_attack_power=limit,
                            fpr=fpr, analysis=spec)
    d = plan.to_dict()
    gauss, lap = d["options"]
    mu = fp.mu_for_attack_power(limit, fpr)
    assert gauss["value"] == pytest.approx(mu, rel=1e-12) and gauss["tests"] == k
    assert gauss["value_per_test"] == pytest.approx(mu / 2, rel=CLOSED_FORM_RTOL)
    assert d["sigma"] == pytest.approx(0.01 / (mu / 2), rel=CLOSED_FORM_RTOL)
    # each test's power at the σ the plan prints (rounded up), never above that at μ / 2
    printed = gauss["noise_value_per_test"]
    assert printed <= mu / 2 and printed == pytest.approx(mu / 2, rel=1e-3)
    assert gauss["power"] == pytest.approx(fp.ztest_power(effect=0.2, n=100, sd=0.25, mu=printed, level=0.05 / k),
                                           rel=1e-12)
    eps = math.log(limit / fpr) * (1 - 1e-12)
    assert lap["value"] == pytest.approx(eps, rel=1e-9) and lap["value_per_test"] == pytest.approx(eps / k, rel=1e-9)
    assert d["laplace_scale"] == pytest.approx(0.01 / (eps / k), rel=1e-9)
    assert lap["attack_power"] <= limit * (1 + 1e-9)
    split = d["budget_split"]
    assert split["tests"] == k and split["alpha_per_test"] == pytest.approx(0.0125)
    assert split["mu_per_test"] == pytest.approx(mu / 2) and split["epsilon_per_test"] == pytest.approx(eps / k)
    assert "sqrt" in split["rule"] and any(f"{k} tests" in n for n in d["notes"])


def test_split_laplace_budget_is_sound_for_the_real_composition():
    """Soundness: k Laplace releases at epsilon / k each, accounted exactly (PLD), meet the limit."""
    k, limit, fpr = 3, 0.05, 1e-3
    spec = fp.ZTestSpec(effect=0.2, n=100, sd=0.25, tests=k)
    lap = fp.privacy_first(blatant_disclosure_ok=False, high_confidence_ok=False, max_attack_power=limit,
                           fpr=fpr, analysis=spec).options[-1]
    composed = fp.tradeoff_curve(Repeated(Laplace(scale=1.0 / lap.value_per_test), k), discretization=1e-4)
    assert composed.bound == "lower"
    # the accounted curve is a lower bound, so its TPR is an upper bound on the true one
    assert float(composed.tpr(fpr)) <= limit * (1 + PLD_RTOL)


def test_utility_first_reads_the_risk_at_the_total_budget():
    k = 5
    spec = fp.ZTestSpec(effect=0.2, n=100, sd=0.25, alpha=0.05, tests=k)
    plan = fp.utility_first(analysis=spec, required_power=0.9, fpr=1e-3, prior=0.01)
    d = plan.to_dict()
    assert d["mu_total"] == pytest.approx(math.sqrt(k) * plan.mu_min, rel=CLOSED_FORM_RTOL)
    assert d["tests"] == k and d["budget_split"]["mu_per_test"] == pytest.approx(plan.mu_min)
    g = fp.GaussianCurve(math.sqrt(k) * plan.mu_of_noise)  # of the noise printed per test (σ rounded down)
    assert plan.attack_power == pytest.approx(float(g.tpr(1e-3)), rel=1e-9)
    assert plan.epsilon_at_1e5 == pytest.approx(float(fp.epsilon_for_delta_from_mu(math.sqrt(k) * plan.mu_of_noise,
                                                                                    1e-5)), rel=1e-9)
    assert d["sigma"] == pytest.approx(0.01 / plan.mu_min, rel=CLOSED_FORM_RTOL)
    single = fp.utility_first(analysis=fp.ZTestSpec(effect=0.2, n=100, sd=0.25, alpha=0.05), required_power=0.9)
    assert single.to_dict()["mu_total"] == pytest.approx(single.mu_min)
