"""Power under DP noise: published mu_min, closed forms, solvers, Monte Carlo, bad input."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import fdpkit as fp
from fdpkit.utility import released_sd

MU_MIN_REL = 1e-4          # against published.json "value"
MC_SIGMAS = 4              # Monte Carlo vs closed form, in standard errors
ROUNDTRIP_TOL = 1e-6
SETTING = dict(effect=0.2, sd=0.25, level=0.01, data_range=1.0)  # de Fondeville's assumptions


def test_de_fondeville_mu_min(published):
    """mu_min = 7.9 / 0.28 / 0.048 for n = 15 / 100 / 500 (1% relative power loss, level 0.01);
    the printed 0.28 is 0.2860 truncated (see published.json assumptions)."""
    ref = published["ztest_power_mu_min"]
    for n_text, value in ref["value"].items():
        got = fp.mu_min_for_power_loss(n=int(n_text), **SETTING, max_relative_loss=0.01)
        assert got == pytest.approx(value, rel=MU_MIN_REL)
        printed = ref["published"][n_text]
        decimals = len(printed.split(".")[1])
        assert math.floor(got * 10**decimals) / 10**decimals == pytest.approx(float(printed)) or \
            round(got, decimals) == pytest.approx(float(printed))


def test_eq9_closed_form():
    n, mu = 100, 0.5
    s_n = math.sqrt(0.25**2 / n + (1 / n) ** 2 / mu**2)
    expected = 1 - stats.norm.cdf(stats.norm.ppf(1 - 0.01) - 0.2 / s_n)
    assert fp.ztest_power(effect=0.2, n=n, sd=0.25, mu=mu, level=0.01) == pytest.approx(expected, rel=1e-12)
    assert released_sd(n=n, sd=0.25, mu=mu) == pytest.approx(s_n)


def test_nonprivate_limit_and_alternatives():
    kw = dict(effect=0.1, n=50, sd=0.25, level=0.05)
    inf = fp.ztest_power(mu=math.inf, **kw)
    assert fp.ztest_power(mu=1e6, **kw) == pytest.approx(inf, rel=1e-9)
    assert fp.ztest_power(mu=1.0, alternative="two-sided", **kw) < fp.ztest_power(mu=1.0, **kw)
    assert fp.ztest_power(mu=1.0, alternative="smaller", **kw) < 0.05  # wrong direction
    assert fp.ztest_power(effect=0.0, n=50, sd=0.25, mu=1.0, level=0.05) == pytest.approx(0.05)


def test_laplace_power_exact_vs_simulation():
    kw = dict(effect=0.2, n=15, sd=0.25, level=0.05)
    exact = fp.ztest_power_laplace(epsilon=1.0, **kw)
    rng = np.random.default_rng(0)
    n_sim = 400_000
    b = (1 / 15) / 1.0
    s = 0.25 / math.sqrt(15)
    null = rng.normal(0, s, n_sim) + rng.laplace(0, b, n_sim)
    crit = np.quantile(null, 0.95)
    alt = 0.2 + rng.normal(0, s, n_sim) + rng.laplace(0, b, n_sim)
    sim = np.mean(alt > crit)
    assert exact == pytest.approx(sim, abs=MC_SIGMAS * math.sqrt(sim * (1 - sim) / n_sim) + 2e-3)
    assert fp.ztest_power_laplace(effect=0.0, n=15, sd=0.25, epsilon=1.0, level=0.05) == pytest.approx(0.05, abs=1e-9)


def test_two_sample_and_proportions():
    p = fp.two_sample_power(effect=0.1, n1=200, n2=200, sd=0.25, mu=1.0)
    s = math.sqrt(2 * (0.25**2 / 200 + (1 / 200) ** 2))
    assert p == pytest.approx(stats.norm.sf(stats.norm.isf(0.05) - 0.1 / s), rel=1e-12)
    assert fp.two_proportion_power(p1=0.3, p2=0.2, n1=500, n2=500, mu=0.5) < \
        fp.two_proportion_power(p1=0.3, p2=0.2, n1=500, n2=500, mu=math.inf)


def test_monte_carlo_agrees_with_closed_form():
    """The t-test on a DP mean and variance approaches the Z-test with the DP noise."""
    mc = fp.mc_ttest_power(effect=0.05, n=200, sd=0.25, mu=math.inf, n_sim=20_000, seed=3)
    closed = fp.ztest_power(effect=0.05, n=200, sd=0.25, mu=math.inf)
    assert abs(mc.power - closed) <= MC_SIGMAS * mc.standard_error + 0.01  # t vs z at n = 200
    mc2 = fp.mc_ttest_power(effect=0.05, n=200, sd=0.25, mu=1.0, n_sim=20_000, seed=3)
    assert mc2.power < mc.power
    assert mc2.seed == 3 and mc2.n_sim == 20_000 and mc2.standard_error > 0
    again = fp.mc_ttest_power(effect=0.05, n=200, sd=0.25, mu=1.0, n_sim=20_000, seed=3)
    assert again.power == mc2.power  # seeded
    reg = fp.mc_regression_power(slope=0.2, n=200, noise_sd=0.3, mu=math.inf, n_sim=2000, seed=1)
    reg_dp = fp.mc_regression_power(slope=0.2, n=200, noise_sd=0.3, mu=0.5, n_sim=2000, seed=1)
    assert reg.power >= reg_dp.power - MC_SIGMAS * reg.standard_error


@pytest.mark.parametrize("n", [15, 100, 500])
def test_solve_round_trips(n):
    kw = dict(sd=0.25, level=0.01)
    target = 0.8 * fp.ztest_power(effect=0.2, n=n, mu=math.inf, **kw)
    s = fp.solve_ztest(n=n, effect=0.2, power=target, **kw)
    assert s.converged and s.unknown == "mu"
    assert fp.ztest_power(effect=0.2, n=n, mu=s.value, **kw) == pytest.approx(target, abs=ROUNDTRIP_TOL)
    assert fp.ztest_power(effect=0.2, n=n, mu=s.value, **kw) >= target - 1e-12
    e = fp.solve_ztest(n=n, mu=1.0, power=0.8, **kw)
    assert fp.ztest_power(effect=e.value, n=n, mu=1.0, **kw) == pytest.approx(0.8, abs=ROUNDTRIP_TOL)
    k = fp.solve_ztest(mu=1.0, effect=0.2, power=0.8, **kw)
    assert isinstance(k.value, int)
    assert fp.ztest_power(effect=0.2, n=k.value, mu=1.0, **kw) >= 0.8
    assert fp.ztest_power(effect=0.2, n=k.value - 1, mu=1.0, **kw) < 0.8
    p = fp.solve_ztest(n=n, mu=1.0, effect=0.2, **kw)
    assert p.value == pytest.approx(fp.ztest_power(effect=0.2, n=n, mu=1.0, **kw))


def test_unreachable_target_is_reported():
    s = fp.solve_ztest(n=2, effect=0.2, power=0.99, sd=0.25, level=0.01)
    assert not s.converged and s.value == math.inf and "unreachable" in s.reason
    assert s.power < 0.99


def test_multiple_testing():
    assert fp.adjusted_level(0.05, 10) == pytest.approx(0.005)
    assert fp.adjusted_level(0.05, 10, "bh", n_true=4) == pytest.approx(0.02)
    assert fp.ztest_power(effect=0.2, n=15, sd=0.25, mu=1.0, level=fp.adjusted_level(0.05, 10)) < \
        fp.ztest_power(effect=0.2, n=15, sd=0.25, mu=1.0, level=0.05)


@settings(max_examples=60, deadline=None)
@given(st.floats(0.01, 20.0), st.floats(1.01, 3.0), st.integers(2, 2000), st.floats(0.0, 0.5))
def test_power_monotone_in_mu_and_n(mu, factor, n, effect):
    kw = dict(effect=effect, sd=0.25, level=0.05)
    assert fp.ztest_power(n=n, mu=mu * factor, **kw) >= fp.ztest_power(n=n, mu=mu, **kw) - 1e-12
    assert fp.ztest_power(n=n + 1, mu=mu, **kw) >= fp.ztest_power(n=n, mu=mu, **kw) - 1e-12


@pytest.mark.parametrize("call, match", [
    (lambda: fp.ztest_power(effect=0.2, n=0, sd=0.25, mu=1.0), r"n must be a positive number, got 0"),
    (lambda: fp.ztest_power(effect=0.2, n=-5, sd=0.25, mu=1.0), r"n must be a positive number"),
    (lambda: fp.ztest_power(effect=0.2, n=10, sd=0.25, mu=1.0, level=1.5), r"level must be in \(0, 1\), got 1.5"),
    (lambda: fp.ztest_power(effect=0.2, n=10, sd=0.25, mu=1.0, level=0.0), r"level must be in \(0, 1\)"),
    (lambda: fp.ztest_power(effect=0.2, n=10, sd=-1, mu=1.0), r"sd must be >= 0"),
    (lambda: fp.ztest_power(effect=0.2, n=10, sd=0.25, mu=0.0), r"mu must be > 0"),
    (lambda: fp.ztest_power(effect=0.2, n=10, sd=0.25, mu=1.0, alternative="up"), r"alternative must be one of"),
    (lambda: fp.ztest_power(effect=float("nan"), n=10, sd=0.25, mu=1.0), r"effect must not be NaN"),
    (lambda: fp.solve_ztest(n=10, effect=0.2, power=1.2, sd=0.25), r"power must be in \(0, 1\), got 1.2"),
    (lambda: fp.solve_ztest(n=10, sd=0.25), r"exactly one of mu, n, effect, power must be None"),
    (lambda: fp.mu_min_for_power_loss(n=10, effect=0.2, sd=0.25, max_relative_loss=0), r"max_relative_loss must be in \(0, 1\)"),
    (lambda: fp.mc_ttest_power(effect=0.2, n=1, sd=0.25, mu=1.0), r"n must be >= 2"),
    (lambda: fp.mc_ttest_power(effect=0.2, n=10, sd=0.25, mu=1.0, n_sim=5), r"n_sim must be an integer >= 100"),
    # 10**9 replicates once reached numpy as a 7.45 GiB allocation (a raw MemoryError)
    (lambda: fp.mc_ttest_power(effect=0.2, n=10, sd=0.25, mu=1.0, n_sim=10**9), r"n_sim must be .* <= 10,000,000"),
    (lambda: fp.mc_regression_power(slope=0.2, n=10, noise_sd=0.25, mu=1.0, n_sim=10**9), r"n_sim must be"),
    (lambda: fp.adjusted_level(0.05, 0), r"tests must be a positive integer"),
    (lambda: fp.adjusted_level(0.05, 10, "holm"), r"correction must be one of"),
    (lambda: fp.two_proportion_power(p1=1.3, p2=0.2, n1=10, n2=10, mu=1.0), r"p1 must be in \[0, 1\]"),
])
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_noiseless_power_without_variance_names_sd():
    for call in (lambda: fp.ztest_power(effect=0.2, n=15, sd=0.0, mu=math.inf),
                 lambda: fp.two_sample_power(effect=0.2, n1=15, n2=15, sd=0.0, mu=math.inf)):
        with pytest.raises(fp.ParameterError, match=r"^sd must be > 0 for the non-private power \(mu = inf\), "
                                                    r"got sd=0.0") as e:
            call()
        assert e.value.parameter == "sd" and e.value.parameters == ("sd", "mu")


@pytest.mark.parametrize("tests", [0, -5, True, 2.0])
def test_adjusted_level_refuses_tests_naming_them(tests):
    # fdpkit power --tests 0 (or -5) read as one test: the library now decides for the CLI too
    with pytest.raises(fp.ParameterError, match=r"^tests must be a positive integer") as e:
        fp.adjusted_level(0.05, tests)
    assert e.value.parameter == "tests"
    assert fp.adjusted_level(0.05, 1) == 0.05
