"""Layers 1, 2 and 4 for conversions: closed forms, round trips at extremes, invariants."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import fdpkit as fp

REL_TOL = 1e-9
ROUNDTRIP_RTOL = 1e-8


def naive_delta(mu, eps):
    return stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2)


def test_delta_matches_naive_formula_where_it_is_accurate():
    for mu in (0.3, 1.0, 2.0, 5.0):
        for eps in (0.0, 0.5, 1.0, 3.0):
            assert fp.delta_for_epsilon_from_mu(mu, eps) == pytest.approx(naive_delta(mu, eps), rel=1e-9, abs=1e-15)


def test_delta_down_to_1e_300():
    eps = fp.epsilon_for_delta_from_mu(1.0, 1e-300)
    assert math.isfinite(eps) and eps > 30
    assert fp.delta_for_epsilon_from_mu(1.0, eps) == pytest.approx(1e-300, rel=1e-6)
    assert fp.delta_for_epsilon_from_mu(0.1, 50.0) >= 0.0


@pytest.mark.parametrize("mu", [1e-3, 0.1, 1.0, 5.0, 40.0])
@pytest.mark.parametrize("delta", [1e-300, 1e-100, 1e-12, 1e-5, 0.1])
def test_mu_to_eps_to_mu(mu, delta):
    eps = fp.epsilon_for_delta_from_mu(mu, delta)
    if eps == 0.0:
        assert fp.delta_for_epsilon_from_mu(mu, 0.0) <= delta
        return
    assert fp.delta_for_epsilon_from_mu(mu, eps) <= delta * (1 + 1e-9)      # safe side
    back = fp.mu_for_epsilon_delta(eps, delta)
    assert back == pytest.approx(mu, rel=1e-6)
    assert fp.delta_for_epsilon_from_mu(back, eps) <= delta * (1 + 1e-9)


def test_edge_cases():
    assert fp.delta_for_epsilon_from_mu(0.0, 1.0) == 0.0
    assert fp.delta_for_epsilon_from_mu(1.0, math.inf) == 0.0
    assert fp.epsilon_for_delta_from_mu(1.0, 0.0) == math.inf
    assert fp.epsilon_for_delta_from_mu(0.0, 1e-5) == 0.0
    assert fp.epsilon_for_delta_from_mu(1.0, 0.9) == 0.0
    assert fp.mu_for_epsilon_delta(1.0, 0.0) == 0.0
    assert fp.mu_for_epsilon_delta(100.0, 1e-5) > 10


def test_vectorised():
    mus = np.array([0.5, 1.0, 2.0])
    d = fp.delta_for_epsilon_from_mu(mus, 1.0)
    assert d.shape == (3,) and np.all(np.diff(d) > 0)
    e = fp.epsilon_for_delta_from_mu(mus, 1e-5)
    assert e.shape == (3,) and np.all(np.diff(e) > 0)


def test_rule_of_thumb_is_explicit():
    assert fp.mu_rule_of_thumb(1.5) == pytest.approx(0.3)
    assert fp.mu_rule_of_thumb(1.5, divisor=3) == pytest.approx(0.5)


def test_delta_semantics_matches_profile():
    mu = fp.mu_from_pure_epsilon(1.0, delta=1e-5)
    assert mu == pytest.approx(fp.mu_for_epsilon_delta(1.0, 1e-5))


@settings(max_examples=50, deadline=None)
@given(st.floats(0.01, 10.0), st.floats(0.0, 20.0), st.floats(0.0, 1.0))
def test_profile_monotone(mu, eps, deps):
    assert fp.delta_for_epsilon_from_mu(mu, eps + deps) <= fp.delta_for_epsilon_from_mu(mu, eps) + 1e-15
    assert fp.delta_for_epsilon_from_mu(mu * 1.1, eps) >= fp.delta_for_epsilon_from_mu(mu, eps) - 1e-15


@pytest.mark.parametrize("call, match", [
    (lambda: fp.delta_for_epsilon_from_mu(-1.0, 1.0), r"mu must be >= 0, got -1.0"),
    (lambda: fp.delta_for_epsilon_from_mu(1.0, -0.5), r"epsilon must be >= 0, got -0.5"),
    (lambda: fp.delta_for_epsilon_from_mu(math.nan, 1.0), r"mu must not be NaN"),
    (lambda: fp.epsilon_for_delta_from_mu(1.0, 1.5), r"delta must be in \[0, 1\], got 1.5"),
    (lambda: fp.mu_for_epsilon_delta(1.0, -1e-5), r"delta must be in \[0, 1\]"),
    (lambda: fp.mu_from_pure_epsilon(1.0, fpr=0.01, recall=0.01), r"at most one of fpr, recall, delta"),
    (lambda: fp.mu_from_pure_epsilon(1.0, fpr=0.0), r"fpr must be in \(0, 1\), got 0.0"),
    (lambda: fp.mu_from_pure_epsilon(-1.0), r"epsilon must be >= 0"),
    (lambda: fp.mu_rule_of_thumb(1.0, divisor=0), r"divisor must be a positive number"),
])
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()
