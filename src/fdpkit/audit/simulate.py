r"""Monte Carlo membership tests against a mechanism itself: the optimal attack on a canary.

The canary is one record whose contribution to every release is the full sensitivity
Delta (the worst case the accountant certifies). A member trial runs the mechanism with
the canary, a non-member trial without it; the attacker sees every output and scores it
by the privacy loss L = log p_member(o) / p_nonmember(o). By Neyman-Pearson, thresholding
L is the most powerful test at every FPR, so the simulated ROC estimates the mechanism's
own trade-off curve for that direction (at or above the certified curve's TPR only if the
accounting is wrong).

Privacy losses, per mechanism (o is one output; "member" adds Delta):

- Gaussian(sigma, Delta): L = (Delta o - Delta^2/2) / sigma^2. A composition of Gaussians
  (mu = sqrt(sum mu_i^2)) has L ~ N(+mu^2/2, mu^2) for members and N(-mu^2/2, mu^2)
  otherwise (Dong et al. 2022, Cor. 3.3), drawn directly.
- Laplace(b, Delta): L = (|o| - |o - Delta|) / b, in [-eps, eps] with eps = Delta/b.
- RandomizedResponse(eps): the canary's bit is 1 (member) or 0; L = +eps if 1 is reported,
  -eps otherwise.
- Subsampled(inner, q): the canary is used with probability q, so
  p_member = (1 - q) p_out + q p_in and L = log(1 - q + q e^{L_inner}), computed as
  ``logaddexp(log1p(-q), log q + L_inner)`` (Poisson sampling, add/remove adjacency).
- Repeated(inner, T) and Composed(parts): independent releases, L is the sum of the
  releases' losses. DP-SGD with every iterate observed is Repeated(Subsampled(Gaussian)):
  the canary gradient (norm = clipping norm) enters each noisy step with probability q.

A single Gaussian or Laplace release is scored by its output o (L is non-decreasing in o,
so every threshold on o is an optimal, possibly randomised, likelihood-ratio test), and a
single randomized response by the reported bit plus U/2, U uniform: a random tie-break,
which reaches the points between the curve's vertices. Work is chunked so memory stays
below about ``CHUNK_ELEMENTS`` floats whatever the number of trials and steps.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fdpkit.errors import ParameterError
from fdpkit._numerics import check_real
from fdpkit.accounting import closed_form_curve
from fdpkit.audit.empirical import run_audit
from fdpkit.curves import GaussianCurve
from fdpkit.mechanisms import Composed, Gaussian, Laplace, Mechanism, RandomizedResponse, Repeated, Subsampled, mechanism_from_dict

#: Largest block of random numbers drawn at once (memory bound: 8 MiB per array).
CHUNK_ELEMENTS = 1 << 20
#: Most trials per class one simulation may run (memory: two float arrays of this length,
#: 160 MB each at the cap; refused beyond with a ValueError naming ``trials``).
MAX_TRIALS = 20_000_000


@dataclass(frozen=True)
class SimulatedAttack:
    """Scores of the optimal canary attack: ``member_scores`` and ``nonmember_scores``
    (higher = member), ready for :func:`fdpkit.run_audit`."""

    mechanism: Any
    trials: int
    seed: int | None
    score: str
    member_scores: np.ndarray = field(repr=False)
    nonmember_scores: np.ndarray = field(repr=False)

    def audit(self, *, confidence: float = 0.95, delta: float = 1e-5, mechanism: Any = "self", **kwargs: Any):
        """Audit these scores; by default against the simulated mechanism itself."""
        target = self.mechanism if mechanism == "self" else mechanism
        return run_audit(self.member_scores, self.nonmember_scores, confidence=confidence, delta=delta,
                         mechanism=target, **kwargs)


def _gaussian_mu(mech: Any) -> float | None:
    curve = closed_form_curve(mech)
    return float(curve.mu) if isinstance(curve, GaussianCurve) else None


def _losses(mech: Any, rng: np.random.Generator, n: int, member: bool) -> np.ndarray:
    """n independent privacy losses L of ``mech`` under the member or non-member hypothesis."""
    plain = mech.elementary() if hasattr(mech, "elementary") else mech
    if plain is None:  # a DP-SGD run without an elementary form
        raise ParameterError(f"DP-SGD with sampling {mech.sampling!r}, relation {mech.relation!r}"
                             f"{' and group privacy' if mech.examples_per_user else ''} cannot be simulated; "
                             "simulation covers Poisson add-remove/zero-out and shuffled batches", "mechanism")
    mech = plain
    mu = _gaussian_mu(mech)
    if mu is not None:
        return rng.normal(mu * mu / 2.0 if member else -mu * mu / 2.0, mu, n)
    if isinstance(mech, Gaussian):  # pragma: no cover - handled by the closed form
        o = rng.normal(mech.sensitivity if member else 0.0, mech.sigma, n)
        return (mech.sensitivity * o - mech.sensitivity ** 2 / 2.0) / mech.sigma ** 2
    if isinstance(mech, Laplace):
        o = rng.laplace(mech.sensitivity if member else 0.0, mech.scale, n)
        return (np.abs(o) - np.abs(o - mech.sensitivity)) / mech.scale
    if isinstance(mech, RandomizedResponse):
        p_true = 1.0 / (1.0 + math.exp(-mech.epsilon))  # e^eps / (1 + e^eps)
        says_one = rng.random(n) < (p_true if member else 1.0 - p_true)
        return np.where(says_one, mech.epsilon, -mech.epsilon)
    if isinstance(mech, Subsampled):
        q = mech.sample_rate
        if member and q < 1.0:
            used = rng.random(n) < q
            inner = np.empty(n)
            k = int(used.sum())
            inner[used] = _losses(mech.inner, rng, k, True)
            inner[~used] = _losses(mech.inner, rng, n - k, False)
        else:
            inner = _losses(mech.inner, rng, n, member if q >= 1.0 else False)
        if q >= 1.0:
            return inner
        return np.logaddexp(math.log1p(-q), math.log(q) + inner)
    if isinstance(mech, Repeated):
        total = np.zeros(n)
        block = max(1, CHUNK_ELEMENTS // max(n, 1))
        left = mech.times
        while left > 0:
            b = min(block, left)
            total += _losses(mech.inner, rng, n * b, member).reshape(n, b).sum(axis=1)
            left -= b
        return total
    if isinstance(mech, Composed):
        total = np.zeros(n)
        for part in mech.parts:
            total += _losses(part, rng, n, member)
        return total
    raise ParameterError(f"mechanism {mech.kind!r} describes a class of mechanisms, not one that can be simulated; "
                         "simulate a concrete one (gaussian, laplace, randomized_response, subsampled, "
                         "repeated, composed, dpsgd)", "mechanism")


def _scores(mech: Any, rng: np.random.Generator, n: int, member: bool) -> np.ndarray:
    if isinstance(mech, Gaussian):
        return rng.normal(mech.sensitivity if member else 0.0, mech.sigma, n)
    if isinstance(mech, Laplace):
        return rng.laplace(mech.sensitivity if member else 0.0, mech.scale, n)
    if isinstance(mech, RandomizedResponse):
        bit = (_losses(mech, rng, n, member) > 0).astype(float)
        return bit + 0.5 * rng.random(n)
    return _losses(mech, rng, n, member)


def _score_kind(mech: Any) -> str:
    if isinstance(mech, (Gaussian, Laplace)):
        return "output"
    if isinstance(mech, RandomizedResponse):
        return "reported bit + U/2 (random tie-break)"
    return "privacy loss"


def simulate_attack(mechanism: Any, *, trials: int, seed: int | None) -> SimulatedAttack:
    """Run the optimal membership-inference attack on a canary against ``mechanism``.

    Parameters
    ----------
    mechanism : Mechanism or dict
        Gaussian, Laplace, RandomizedResponse, Subsampled, Repeated, Composed or dpsgd
        (DP-SGD on one canary with every iterate observed).
    trials : int
        Trials per class: ``trials`` member and ``trials`` non-member runs, a whole number
        in [1, ``MAX_TRIALS``] (20,000,000: the score arrays take 16 bytes per trial).
    seed : int or None
        Seed of NumPy's ``default_rng`` (None: fresh entropy, not reproducible).

    Returns
    -------
    SimulatedAttack
        ``member_scores`` and ``nonmember_scores`` (higher = member) for :func:`fdpkit.run_audit`.

    Notes
    -----
    The attack scores each trial by its privacy loss (module docs); by the Neyman-Pearson
    lemma no attack on that canary does better. Without noise the same attack separates
    members from non-members perfectly (TPR 1 at FPR 0).

    Examples
    --------
    >>> from fdpkit.mechanisms import Gaussian
    >>> sim = simulate_attack(Gaussian(1.0), trials=1000, seed=0)
    >>> sim.member_scores.shape, sim.score
    ((1000,), 'output')
    """
    mech = mechanism_from_dict(mechanism) if isinstance(mechanism, dict) else mechanism
    if not isinstance(mech, Mechanism):
        raise ParameterError(f"mechanism must be an fdpkit mechanism, got {type(mechanism).__name__}", "mechanism")
    t = int(check_real("trials", trials, low=1, high=MAX_TRIALS, integer=True, scalar=True))
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
        raise ParameterError(f"seed must be a whole number >= 0 or None, got {seed!r}", "seed")
    rng = np.random.default_rng(seed)
    out = {}
    for member in (True, False):
        parts, done = [], 0
        while done < t:
            k = min(CHUNK_ELEMENTS, t - done)
            parts.append(_scores(mech, rng, k, member))
            done += k
        out[member] = np.concatenate(parts)
    return SimulatedAttack(mech, t, None if seed is None else int(seed), _score_kind(mech), out[True], out[False])
