"""fp.audit_one_run: Steinke, Nasr & Jagielski's one-run bound (p-value cross-checked against
a direct transcription of their Algorithm 2), its coverage, and the violation test."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

import fdpkit as fp
from fdpkit.audit.one_run import p_value

DELTA = 1e-5
#: coverage: at 95% confidence the bound may exceed the truth in 5% of runs; allow sampling
#: noise over RUNS runs (binomial 5% of 50: P[> 8] < 2%)
RUNS = 50
MAX_EXCEEDING = 8
CANARIES = 400


def _direct_p_value(m, r, v, eps, delta):
    """Steinke et al. 2023, Algorithm 2, written out term by term (the cross-check)."""
    q = math.exp(eps) / (1 + math.exp(eps))
    beta = stats.binom.sf(v - 1, r, q)
    alpha, total = 0.0, 0.0
    for i in range(1, v + 1):
        total += stats.binom.pmf(v - i, r, q)
        alpha = max(alpha, total / i)
    return min(1.0, beta + 2 * m * delta * alpha)


@pytest.mark.parametrize("m, r, v, eps, delta", [
    (1000, 100, 80, 1.0, 1e-5), (1000, 100, 80, 2.0, 1e-3), (100, 10, 3, 0.5, 0.01),
    (5000, 1000, 700, 0.7, 1e-6), (50, 50, 50, 3.0, 0.0), (1000, 400, 390, 30.0, 1e-3),
])
def test_p_value_matches_algorithm_2(m, r, v, eps, delta):
    assert float(p_value(m, r, v, eps, delta)) == pytest.approx(_direct_p_value(m, r, v, eps, delta), rel=1e-9, abs=1e-15)


def _run(rng, mu, m=CANARIES):
    inc = rng.random(m) < 0.5
    return rng.normal(mu * inc, 1.0), inc


def test_coverage_over_simulated_runs():
    mu = 2.0
    truth = fp.GaussianCurve(mu).epsilon_for_delta(DELTA)
    rng = np.random.default_rng(2026)
    lows = [fp.audit_one_run(*_run(rng, mu), delta=DELTA).epsilon_lower for _ in range(RUNS)]
    assert sum(e > truth for e in lows) <= MAX_EXCEEDING
    assert 0 < np.median(lows) < truth


def test_pure_dp_lower_bound_is_valid_for_randomized_response():
    # binary randomized response at eps: the best possible guesser is right w.p. e^eps/(1+e^eps)
    eps = 1.0
    rng = np.random.default_rng(7)
    exceed = 0
    for _ in range(RUNS):
        inc = rng.random(CANARIES) < 0.5
        keep = rng.random(CANARIES) < math.exp(eps) / (1 + math.exp(eps))
        out = np.where(keep, inc, ~inc).astype(float) + 1e-3 * rng.random(CANARIES)
        exceed += fp.audit_one_run(out, inc, delta=0.0).epsilon_lower > eps
    assert exceed <= MAX_EXCEEDING


def test_violation_against_certified_curve():
    rng = np.random.default_rng(3)
    scores, inc = _run(rng, 1.0, m=1000)
    ok = fp.audit_one_run(scores, inc, delta=DELTA, mechanism=fp.Gaussian(1.0))
    assert ok.violation is False and ok.epsilon_gap > 0 and ok.mu_gap > 0
    bad = fp.audit_one_run(scores, inc, delta=DELTA, mechanism=fp.Gaussian(4.0))  # certified mu 0.25
    assert bad.violation is True and "VIOLATION" in bad.verdict
    assert bad.p_value_certified <= 0.05
    rep = fp.privacy_report(fp.Gaussian(1.0))
    assert fp.audit_one_run(scores, inc, delta=DELTA, mechanism=rep).violation is False


def test_guesses_fixed_in_advance_and_bad_input():
    rng = np.random.default_rng(4)
    scores, inc = _run(rng, 3.0)
    one = fp.audit_one_run(scores, inc, guesses=(20, 20))
    assert one.choices == ((20, 20),) and one.guesses == 40 and one.level == pytest.approx(0.05)
    with pytest.raises(ValueError, match="included"):
        fp.audit_one_run(scores, inc[:-1])
    with pytest.raises(ValueError, match="included"):
        fp.audit_one_run(scores, np.full(scores.size, 2.0))
    with pytest.raises(ValueError, match="scores"):
        fp.audit_one_run([], [])
    with pytest.raises(ValueError, match="confidence"):
        fp.audit_one_run(scores, inc, confidence=1.0)
    with pytest.raises(ValueError, match="guesses"):
        fp.audit_one_run(scores, inc, guesses=(500, 0))


@pytest.mark.parametrize("kwargs, name", [
    # plain ValueErrors before: the message named the argument, ``parameter`` was missing
    (dict(scores=[], included=[]), "scores"),
    (dict(scores=[1.0, float("inf")], included=[0, 1]), "scores"),
    (dict(scores=[1.0, 2.0], included=[0]), "included"),
    (dict(scores=[1.0, 2.0], included=[0, 2]), "included"),
    (dict(scores=[1.0, 2.0], included=[0, 1], guesses=(1,)), "guesses"),
    (dict(scores=[1.0, 2.0], included=[0, 1], guesses=(1.5, 0)), "guesses"),
    (dict(scores=[1.0, 2.0], included=[0, 1], guesses=(5, 0)), "guesses"),
    (dict(scores=[1.0, 2.0], included=[0, 1], delta=1.0), "delta"),
    (dict(scores=[1.0, 2.0], included=[0, 1], confidence=0.0), "confidence"),
    # 10**7 canaries were accepted: over 11 s of CPU, then a 0.9 GiB array (MemoryError under a
    # 3 GiB limit); at most 10**6 now, refused before any work
    (dict(scores=np.zeros(10**6 + 1), included=np.zeros(10**6 + 1, dtype=int)), "scores"),
])
def test_bad_input_is_a_parameter_error(kwargs, name):
    with pytest.raises(fp.ParameterError, match=name) as info:
        fp.audit_one_run(**kwargs)
    assert info.value.parameter == name


def test_verdict_p_value_is_not_printed_below_itself():
    # before: "{:.2g}" printed 0.5546 as 0.55 (the evidence against the curve read stronger than it is)
    import re

    rng = np.random.default_rng(3)
    inc = rng.random(1000) < 0.5
    a = fp.audit_one_run(rng.normal(2.0 * inc, 1.0), inc, delta=1e-5, mechanism=fp.Gaussian(1.0))
    printed = float(re.search(r"adjusted p-value ([0-9.e+-]+)\)", a.verdict).group(1))
    assert a.p_value_certified == pytest.approx(0.5546, abs=1e-4) and printed == 0.56
