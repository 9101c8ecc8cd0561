r"""Fixed-size batches drawn without replacement, zero-out: the tight single step.

One DP-SGD step with a batch of m of the n examples drawn uniformly without replacement
(q = m / n) releases the sum of the batch's clipped gradients (norm <= C) plus
N(0, sigma^2 C^2 I). Units below: C = 1, so every gradient lies in the unit ball and the
noise is N(0, sigma^2 I). Under zero-out the neighbouring datasets D (example i has
gradient g) and D' (example i's gradient is 0) differ in one gradient, and the relation is
symmetric: both orderings (D, D') and (D', D) must be covered.

Why the Poisson pair is not enough
----------------------------------
Whether i is in the batch changes how many *other* examples are in it, so Poisson's
add/remove pair does not dominate (``tests/dpsgd/test_dpsgd_fixed_size_instance.py`` shows
an attainable instance above it). Dong, Roth & Su (2022, Thm. 4.2) give C_q(G_{2/sigma})
per step (batches that differ in one element), which is sound but loose for zero-out.

The exact per-step bound (derivation)
-------------------------------------
**Coupling.** Draw U, a uniform (m - 1)-subset of the n - 1 other examples, and j, uniform
among the others outside U. With probability q the batch is U + {i}, otherwise U + {j}:
a uniform m-subset, the same on both datasets. With s_U the sum over U and h_j the
gradient of j, the outputs are the mixtures

    M(D)  = E_{U,j}[(1 - q) N(s_U + h_j) + q N(s_U + g)],
    M(D') = E_{U,j}[(1 - q) N(s_U + h_j) + q N(s_U)].

**Joint convexity** of the hockey-stick divergence H_gamma(P || Q) = sup_S P(S) - gamma Q(S)
(gamma = e^eps) and a shift by s_U give, for every eps,

    H_gamma(M(D) || M(D')) <= sup_{|g|, |h| <= 1} H_gamma(A_{g,h} || B_h),           (1)
    A_{g,h} = (1 - q) N(h) + q N(g),   B_h = (1 - q) N(h) + q N(0)   (noise sigma^2 I).

Every member of (1) is attained (all other examples with gradient h), so the supremum is
the exact worst case of one step, and it is attained by a single configuration on each
side of eps = 0:

**gamma >= 1.** H_gamma(A || B) = sup_S [q N(g)(S) - (gamma - 1)(1 - q) N(h)(S) - gamma q N(0)(S)].
For any set S with N(0)(S) = Phi-bar(t/sigma), the Neyman-Pearson lemma for Gaussian
shifts gives N(g)(S) <= Phi-bar((t - |g|)/sigma) and N(h)(S) >= Phi-bar((t + |h|)/sigma),
and both are attained by the half space {x . u > t} when g = u and h = -u (|u| = 1). The
coefficient of N(h) is <= 0, so

    sup (1) = H_gamma(A_{u,-u} || B_{-u}) = H_gamma(P_2 || P_1),                      (2)

with P_c = (1 - q) N(0, sigma^2) + q N(c, sigma^2) on the line (shifted by u): the example
and the displaced one pull in *opposite* directions. **gamma < 1.** The coefficient of
N(h) is (1 - gamma)(1 - q) >= 0, so N(h)(S) <= Phi-bar((t - |h|)/sigma) instead, attained
with g = h = u: the worst pair is N(u) against (1 - q) N(u) + q N(0), i.e. the Poisson
*add* pair N(0) vs P_1, whose divergence is 1 - gamma + gamma H_{1/gamma}(P_1 || N(0))
(Eq. (2) of :mod:`fdpkit.accounting.from_curve`).

So the step's tight trade-off function for the ordering (D, D') is the convex curve f*
whose privacy profile is

    delta_R(eps) = H_{e^eps}(P_2 || P_1)                           for eps >= 0,      (3)
    delta_R(eps) = 1 - e^eps + e^eps H_{e^-eps}(P_1 || N(0))       for eps <  0,

and for the ordering (D', D) it is f*^{-1} (profile delta_A, the same two pieces swapped).
f* = min{T(P_2, P_1), T(N(0), P_1)}** is one curve that bounds every step of a run for the
ordered pair, whatever the other examples' gradients (chosen adaptively), so the run is
f*^{(x)T}-DP for (D, D') and (f*^{-1})^{(x)T} for (D', D) (Dong et al. Thm. 3.2): the two
PLD directions are composed separately, and soundly (the pitfall of Lebeda et al. 2024,
composing per-direction worst-case pairs that are not one curve per ordering, does not
arise: (3) is the supremum over the whole family at every eps).

**Closed forms.** P_2 > gamma P_1 iff, with v = e^{x / sigma^2},
q e^{-2/sigma^2} v^2 - gamma q e^{-1/(2 sigma^2)} v - (gamma - 1)(1 - q) > 0: a half line
x > x*, with

    x*/sigma^2 = eps + 3/(2 sigma^2) + ln((1 + sqrt(1 + z)) / 2),
    z = 4 (1 - q) e^{-1/sigma^2} (e^eps - 1) e^{-2 eps} / q,                            (4)
    H(P_2 || P_1) = q Phi-bar((x* - 2)/sigma) - e^eps q Phi-bar((x* - 1)/sigma)
                    - (e^eps - 1)(1 - q) Phi-bar(x*/sigma);

H(P_1 || N(0)) is the Poisson subsampled Gaussian's REMOVE direction
(:mod:`fdpkit.accounting.single_step`). Both are evaluated on the loss grid, raised by
their round-off bounds and turned into the pessimistic connect-the-dots PMF exactly as the
Poisson step is (:func:`fdpkit.accounting.single_step.pmf_from_deltas`).

Replace-one needs no new analysis: its family contains N(0) vs P_2 and P_2 vs N(0)
themselves (others with gradient g', example g = -g' or the reverse), so C_q(G_{2/sigma})
is already the tight single step; it stays symmetrised per step (both orientations occur
for one ordered pair, Lebeda et al. 2024).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from fdpkit.accounting.single_step import (
    LOG_MASS_TRUNCATION_BOUND,
    ROUNDOFF_UNITS,
    StepArrays,
    deltas_on_grid,
    noise_model,
    pmf_from_deltas,
)

_U = float(np.finfo(float).eps) / 2.0


def collinear_delta(sigma: float, q: float, eps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """H_{e^eps}(P_2 || P_1) of Eq. (4) for eps >= 0 and its round-off bound.

    Parameters
    ----------
    sigma : float
        Noise multiplier (noise sd in clipping norms).
    q : float
        Sampling fraction m / n, in (0, 1].
    eps : ndarray
        Non-negative losses.

    Returns
    -------
    (ndarray, ndarray)
        delta and a bound on its floating-point error (relative to the terms of Eq. 4).

    Examples
    --------
    >>> d, _ = collinear_delta(1.0, 1.0, np.array([0.0]))  # q = 1: G_1 at eps = 0
    >>> round(float(d[0]), 6) == round(2 * float(special.ndtr(0.5)) - 1, 6)
    True
    """
    eps = np.asarray(eps, dtype=float)
    r = 1.0 / (sigma * sigma)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        log_em1 = np.log(np.expm1(eps))  # -inf at eps = 0 (z = 0)
        log1mq = math.log1p(-q) if q < 1.0 else -math.inf
        log_z = math.log(4.0) + log1mq - r + log_em1 - 2.0 * eps - math.log(q)
        log_half_root = np.logaddexp(0.0, 0.5 * np.logaddexp(0.0, log_z)) - math.log(2.0)
        x = sigma * sigma * (eps + 1.5 * r + log_half_root)
        la = special.log_ndtr(-(x - 2.0) / sigma)
        lb1 = special.log_ndtr(-(x - 1.0) / sigma)
        lb2 = special.log_ndtr(-x / sigma)
        a = np.exp(math.log(q) + la)
        b = np.exp(eps + math.log(q) + lb1) + np.exp(log_em1 + log1mq + lb2)
    delta = a - b
    if np.any(~np.isfinite(delta)):
        raise ValueError("the fixed-size step's hockey-stick divergence is not a number "
                         f"(noise_multiplier={sigma!r}, sample rate {q!r})")
    logs = np.maximum(np.abs(lb1), np.abs(np.where(np.isfinite(lb2), lb2, 0.0)))
    bound = ROUNDOFF_UNITS * _U * (a + b * (2.0 + np.abs(eps) + logs + np.abs(la)))
    return np.clip(delta, 0.0, 1.0), bound


def _collinear_top(sigma: float, q: float) -> float:
    """A loss above which P_2 has mass below e^LOG_MASS_TRUNCATION_BOUND: the grid's top."""
    x = 2.0 - float(special.ndtri(0.5 * math.exp(LOG_MASS_TRUNCATION_BOUND))) * sigma
    r = 1.0 / (sigma * sigma)
    up = np.logaddexp(math.log1p(-q) if q < 1 else -math.inf, math.log(q) + (2 * x - 2) * r)
    low = np.logaddexp(math.log1p(-q) if q < 1 else -math.inf, math.log(q) + (x - 0.5) * r)
    return max(float(up - low), 0.0)


def zero_out_step(sigma: float, q: float, discretization: float) -> tuple[StepArrays, StepArrays]:
    """(remove, add): the pessimistic PMFs of one fixed-size zero-out step, Eq. (3).

    ``remove`` carries delta_R (the ordering: example present, then zeroed) and ``add``
    delta_A (the reverse); compose them separately (module docs).

    Parameters
    ----------
    sigma : float
        Noise multiplier.
    q : float
        Batch size over dataset size, in (0, 1].
    discretization : float
        The loss grid width d.

    Returns
    -------
    (StepArrays, StepArrays)

    Examples
    --------
    >>> remove, add = zero_out_step(1.0, 0.1, 1e-2)
    >>> bool(0 <= remove.pmf.infinity_mass < 1e-12 and add.pmf.probs.sum() > 0.99)
    True
    """
    d = float(discretization)
    poisson = noise_model(sigma, q)  # Poisson REMOVE: H(P_1 || N(0))
    e_col = _collinear_top(sigma, q)
    e_poi = max(poisson.bounds()[1], 0.0)

    def grid(lo: float, hi: float) -> np.ndarray:
        # the top is at least d: each direction's largest loss is positive, and a grid
        # ending at 0 (tops that round to 0, noise of 1e16 and more) moved the round-off
        # envelope of delta(0) to +inf (single_step._step)
        return np.arange(math.floor(lo / d), max(math.ceil(hi / d), 1) + 1) * d

    def profile(eps: np.ndarray, upper, lower) -> tuple[np.ndarray, np.ndarray]:
        """upper(eps) for eps >= 0; 1 - e^eps + e^eps lower(-eps) below 0 (Eq. 3)."""
        out, bound = np.empty_like(eps), np.empty_like(eps)
        pos = eps >= 0
        out[pos], bound[pos] = upper(eps[pos])
        e = eps[~pos]
        dl, bl = lower(-e)
        w = np.exp(e)
        out[~pos] = -np.expm1(e) + w * dl
        bound[~pos] = w * bl + ROUNDOFF_UNITS * _U * (out[~pos] + w * dl)
        return np.clip(out, 0.0, 1.0), bound

    def col(e: np.ndarray):
        return collinear_delta(sigma, q, e)

    def poi(e: np.ndarray):
        return deltas_on_grid(poisson, e)

    eps_r = grid(-e_poi, e_col)
    eps_a = grid(-e_col, e_poi)
    remove = pmf_from_deltas(eps_r, *profile(eps_r, col, poi), d)
    add = pmf_from_deltas(eps_a, *profile(eps_a, poi, col), d)
    return remove, add


__all__ = ["collinear_delta", "zero_out_step"]
