"""Attack-risk readings: closed forms, de Fondeville's theorems, privacy-first inverses."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fdpkit as fp

REL_TOL = 1e-9


def test_attack_power_exact_tails_issue3():
    g = fp.GaussianCurve(2.0)
    assert g.tpr(1e-10) == pytest.approx(6.46e-6, rel=1e-2)
    assert g.tpr(1e-8) == pytest.approx(1.5e-4, rel=5e-2)
    assert g.tpr(1e-12) > 0


def test_posterior_formula_and_limits():
    g = fp.GaussianCurve(1.0)
    prior, a = 0.01, 1e-3
    tpr = g.tpr(a)
    assert fp.posterior(g, prior, a) == pytest.approx(prior * tpr / ((1 - prior) * a + prior * tpr), rel=REL_TOL)
    assert fp.posterior(g, prior, 1.0) == pytest.approx(prior)          # alpha = 1: posterior = prior
    assert fp.posterior(fp.UniformSamplingCurve(1.0, 10), 0.01, 0.0) == 1.0   # blatant disclosure
    lap = fp.LaplaceCurve(1.0)
    assert fp.posterior(lap, 0.5, 0.0) == pytest.approx(math.e / (1 + math.e))
    assert fp.posterior(g, 0.5, 0.0) == 1.0                            # graceful: limit 1
    arr = fp.posterior(g, np.array([0.01, 0.1]), np.array([1e-3, 1e-2]))
    assert arr.shape == (2,)


def test_relative_risk_and_failure_modes_table1():
    assert fp.relative_risk(fp.LaplaceCurve(1.0)) == pytest.approx(math.e)
    assert fp.relative_risk(fp.EpsDeltaCurve(2.0)) == pytest.approx(math.exp(2.0))
    assert fp.relative_risk(fp.GaussianCurve(1.0)) == math.inf
    assert fp.relative_risk(fp.UniformSamplingCurve(1.0, 5)) == math.inf
    g = fp.GaussianCurve(1.0)
    assert fp.relative_risk(g, fpr_min=1e-3) == pytest.approx(g.tpr(1e-3) / 1e-3)
    assert fp.failure_mode(fp.LaplaceCurve(1.0)) == "none"
    assert fp.failure_mode(fp.RandomizedResponseCurve(1.0)) == "none"
    assert fp.failure_mode(g) == "graceful"
    assert fp.failure_mode(fp.UniformSamplingCurve(1.0, 5)) == "catastrophic"
    assert fp.failure_mode(fp.EpsDeltaCurve(1.0, 1e-5)) == "catastrophic"
    assert fp.failure_mode(fp.EpsDeltaCurve(1.0, 1e-5), tolerance=1e-4) == "none"
    pl = g.to_piecewise()
    assert fp.failure_mode(pl) == "none"  # a finite PL curve has bounded slope at 0 ...
    assert fp.relative_risk(pl) > 1e10    # ... but it is huge, as for the Gaussian


def test_relative_risk_is_sup_over_range():
    """rho_alpha0 = TPR(alpha0)/alpha0 equals a brute-force sup over [alpha0, 1]."""
    for curve in (fp.GaussianCurve(1.3), fp.LaplaceCurve(0.7), fp.EpsDeltaCurve(1.0, 1e-3)):
        a = np.geomspace(1e-4, 1, 20001)
        brute = np.max(curve.tpr(a) / a)
        assert fp.relative_risk(curve, fpr_min=1e-4) == pytest.approx(brute, rel=1e-9)


def test_privacy_first_inverses_round_trip():
    mu = fp.mu_for_attack_power(0.05, 1e-3)
    assert fp.GaussianCurve(mu).tpr(1e-3) <= 0.05
    assert fp.GaussianCurve(mu).tpr(1e-3) == pytest.approx(0.05, rel=1e-9)
    mu = fp.mu_for_relative_risk(10.0, 1e-4)
    assert fp.relative_risk(fp.GaussianCurve(mu), fpr_min=1e-4) <= 10.0 * (1 + 1e-12)
    assert fp.laplace_epsilon_for_relative_risk(math.e ** 2) == pytest.approx(2.0)
    for power, fpr in ((0.01, 1e-3), (0.7, 0.1), (0.9, 0.6)):
        eps = fp.laplace_epsilon_for_attack_power(power, fpr)
        assert fp.LaplaceCurve(eps).tpr(fpr) == pytest.approx(power, rel=1e-9)
        assert fp.LaplaceCurve(eps).tpr(fpr) <= power * (1 + 1e-12)
    assert fp.mu_for_relative_risk(1e6, 0.5) == math.inf


@settings(max_examples=50, deadline=None)
@given(st.floats(0.0, 5.0), st.floats(1e-6, 1.0), st.floats(1e-9, 1.0))
def test_posterior_at_least_prior_and_risk_at_least_one(mu, prior, fpr):
    g = fp.GaussianCurve(mu)
    assert fp.posterior(g, prior, fpr) >= prior * (1 - 1e-12)
    assert fp.relative_risk(g, fpr_min=fpr) >= 1.0


@pytest.mark.parametrize("call, match", [
    (lambda: fp.GaussianCurve(1.0).tpr(-0.1), r"fpr must be in \[0, 1\], got -0.1"),
    (lambda: fp.multiplicative_advantage(fp.GaussianCurve(1.0), 0.0), r"fpr must be in \(0, 1\]"),
    (lambda: fp.posterior(fp.GaussianCurve(1.0), 1.5, 0.1), r"prior must be in \[0, 1\], got 1.5"),
    (lambda: fp.posterior("g", 0.5, 0.1), r"curve must be a TradeOffCurve, got str"),
    (lambda: fp.relative_risk(fp.GaussianCurve(1.0), fpr_min=0.0), r"fpr_min must be in \(0, 1\]"),
    (lambda: fp.mu_for_attack_power(1e-4, 1e-3), r"max_power must be >= fpr"),
    (lambda: fp.mu_for_relative_risk(0.5, 1e-3), r"max_risk must be >= 1"),
    (lambda: fp.failure_mode(fp.GaussianCurve(1.0), tolerance=2.0), r"tolerance must be in \[0, 1\]"),
])
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("mech", [
    fp.Repeated(fp.Laplace(10.0), 100),  # 10-pure-DP at most; its numeric curve has f(0) = 1 - 2.8e-12
    fp.dpsgd(1.0, batch_size=256, dataset_size=60000, epochs=2, unit="user", examples_per_user=5),  # 1 - 2.2e-16
])
def test_a_numeric_tail_bound_is_not_a_blatant_disclosure(mech):
    """No part of these mechanisms reveals membership with certainty: the mass their numeric
    curves put at f(0) < 1 is the accountant's tail bound (kept, pessimistic), stated as
    such, and neither the failure mode nor the grade calls it catastrophic."""
    r = fp.privacy_report(mech)
    assert r.curve.f0 < 1.0 and r.failure_mode != "catastrophic" and "catastrophic" not in (r.grade.reason or "")
    assert any("bound on the tail mass" in w and "no part of this mechanism" in w for w in r.warnings)
    assert not any(w.startswith("Blatant disclosure") for w in r.warnings)


def test_a_delta_below_float_resolution_is_still_a_blatant_disclosure():
    """(1, 1e-20)-DP: f(0) = 1 - 1e-20 is 1.0 in floats, yet an output may reveal membership
    with probability 1e-20 (it was graded 'strong' with mu = inf and no flag)."""
    assert fp.failure_mode(fp.EpsDeltaCurve(1.0, 1e-20)) == "catastrophic"
    r = fp.privacy_report(fp.ApproxDP(1.0, 1e-20))
    assert r.failure_mode == "catastrophic" and r.grade.label == "weak"
    assert any("with probability 1e-20" in w for w in r.warnings)
