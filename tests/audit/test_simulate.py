"""simulate_attack: privacy losses against closed forms, chunking, seeds."""

import math

import numpy as np
import pytest

import fdpkit as fp
from fdpkit.audit import simulate as sim_mod
from fdpkit.audit import simulate_attack

#: Monte Carlo tolerance (standard errors) for means of simulated losses.
MC_SIGMAS = 5.0
TRIALS = 40_000

MECHANISMS = [
    fp.Repeated(fp.Laplace(2.0), 1),
    fp.Repeated(fp.Laplace(4.0), 5),
    fp.Subsampled(fp.Gaussian(1.0), 0.3),
    fp.dpsgd(2.0, 0.1, 40),
    fp.Composed((fp.Gaussian(3.0), fp.Laplace(3.0), fp.Subsampled(fp.Laplace(1.0), 0.2))),
    fp.Repeated(fp.RandomizedResponse(0.3), 4),
]


@pytest.mark.parametrize("mechanism", MECHANISMS, ids=lambda m: m.kind)
def test_privacy_losses_are_likelihood_ratios(mechanism):
    """E_out[e^L] = 1 and E_in[e^-L] = 1 for the privacy loss L of any mechanism."""
    s = simulate_attack(mechanism, trials=TRIALS, seed=1)
    assert s.score == "privacy loss"
    for x in (np.exp(s.nonmember_scores), np.exp(-s.member_scores)):
        assert abs(x.mean() - 1.0) < MC_SIGMAS * x.std() / math.sqrt(TRIALS) + 1e-3


def test_laplace_losses_match_kl_divergence():
    eps, steps = 0.5, 6
    s = simulate_attack(fp.Repeated(fp.Laplace(1 / eps), steps), trials=TRIALS, seed=2)
    kl = steps * (eps + math.exp(-eps) - 1)  # KL(Lap(1, b) || Lap(0, b)) per release
    assert abs(s.member_scores.mean() - kl) < MC_SIGMAS * s.member_scores.std() / math.sqrt(TRIALS)
    assert abs(s.nonmember_scores.mean() + kl) < MC_SIGMAS * s.nonmember_scores.std() / math.sqrt(TRIALS)
    assert np.all(np.abs(s.member_scores) <= steps * eps + 1e-12)


def test_gaussian_composition_is_drawn_exactly():
    s = simulate_attack(fp.Repeated(fp.Gaussian(2.0), 16), trials=TRIALS, seed=3)  # mu = 2
    assert abs(s.member_scores.mean() - 2.0) < 0.05 and abs(s.member_scores.std() - 2.0) < 0.05
    assert abs(s.nonmember_scores.mean() + 2.0) < 0.05


def test_chunking_bounds_memory_and_keeps_the_distribution(monkeypatch):
    monkeypatch.setattr(sim_mod, "CHUNK_ELEMENTS", 1000)
    s = simulate_attack(fp.dpsgd(2.0, 0.1, 40), trials=5000, seed=4)
    assert s.member_scores.shape == (5000,) and s.nonmember_scores.shape == (5000,)
    x = np.exp(s.nonmember_scores)
    assert abs(x.mean() - 1.0) < MC_SIGMAS * x.std() / math.sqrt(5000)


def test_seeded_and_reproducible():
    a = simulate_attack(fp.Laplace(1.0), trials=100, seed=9)
    b = simulate_attack({"kind": "laplace", "scale": 1.0}, trials=100, seed=9)
    c = simulate_attack(fp.Laplace(1.0), trials=100, seed=10)
    assert np.array_equal(a.member_scores, b.member_scores)
    assert not np.array_equal(a.member_scores, c.member_scores)
    assert a.score == "output"
    rr = simulate_attack(fp.RandomizedResponse(1.0), trials=100, seed=1)
    assert rr.score.startswith("reported bit") and np.all((rr.member_scores >= 0) & (rr.member_scores < 1.5))


def test_no_noise_limit_is_a_perfect_attack():
    s = simulate_attack(fp.Gaussian(1e-6), trials=200, seed=0)
    r = s.audit(mechanism=None)
    assert r.points.tpr[r.mu_index] == 1.0 and r.points.fpr[r.mu_index] == 0.0
