r"""Confidence bounds behind an audit: Clopper-Pearson with a Bonferroni correction.

One threshold
-------------
At a fixed threshold an attack flags k of n non-members (false positives) and j of m
members (true positives). Clopper & Pearson (1934) give exact one-sided bounds at level
a (``level``): with q_p(a, b) the p-quantile of Beta(a, b),

    FPR_upper = q_{1-a}(k + 1, n - k)   (1 if k = n),                          (1)
    TPR_lower = q_a(j, m - j + 1)        (0 if j = 0).                          (2)

Their complements are computed directly from the mirrored Beta quantiles (never as
``1 - x``), so that a TNR or FNR near 0 keeps its digits:

    TNR_lower = 1 - FPR_upper = q_a(n - k, k + 1),
    FNR_upper = 1 - TPR_lower = q_{1-a}(m - j + 1, j).

Thresholds chosen from the scores
---------------------------------
When the thresholds come from the scores themselves, (1) is still exact if the
threshold is placed at a fixed *rank* of the non-member scores: with t_c the (c+1)-th
largest non-member score and the test "score > t_c", the true FPR(t_c) = P(X > t_c) is
stochastically smaller than the (c+1)-th smallest of n uniforms, a Beta(c + 1, n - c)
variable, for any score distribution (ties included). So (1) with k = c bounds it at
level a. The member scores are independent of t_c, so given t_c the true-positive count
is Binomial(m, TPR(t_c)) and (2) holds conditionally, hence unconditionally.

Simultaneity
------------
The audit uses K thresholds fixed before looking at the scores (ranks, or the thresholds
of published counts) and two bounds at each. By Bonferroni's inequality all 2K bounds
hold together with probability at least ``confidence`` when each is taken at level

    a = (1 - confidence) / (2 K).                                               (3)

Lower bounds on mu and epsilon
------------------------------
A mu-GDP mechanism has TPR <= 1 - G_mu(FPR) = Phi(mu + Phi^{-1}(FPR)) at every threshold
(Dong, Roth & Su 2022, Def. 2.7), so on the event (3)

    mu >= Phi^{-1}(TPR_lower) - Phi^{-1}(FPR_upper)
        = Phi^{-1}(TPR_lower) + Phi^{-1}(TNR_lower),                             (4)

each probit evaluated from whichever of p and 1 - p is smaller (``ndtri`` of the small
one), so both tails keep their digits. An (epsilon, delta)-DP mechanism has
TPR <= e^eps FPR + delta and, for the swapped test, TNR <= e^eps FNR + delta
(Kairouz et al. 2015, Thm. 2.1; Jagielski et al. 2020, Sec. 4), so

    eps >= max{ log((TPR_lower - delta) / FPR_upper),
                log((TNR_lower - delta) / FNR_upper) }.                          (5)
"""

from __future__ import annotations

import numpy as np
from scipy import special

from fdpkit._numerics import MU_SAFETY_RTOL


def bonferroni_level(confidence: float, thresholds: int) -> float:
    """Per-bound level a = (1 - confidence) / (2 K), Equation (3)."""
    return (1.0 - confidence) / (2.0 * thresholds)


def clopper_pearson_upper(successes: np.ndarray, trials: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """One-sided Clopper-Pearson upper bound on a proportion and its complement.

    Returns ``(upper, 1 - upper)`` with both computed directly, Equation (1).

    >>> u, c = clopper_pearson_upper(np.array([0]), np.array([100]), 0.05)
    >>> round(float(u[0]), 6), round(float(c[0]), 6)   # 1 - 0.05**(1/100)
    (0.029513, 0.970487)
    """
    k = np.asarray(successes, dtype=float)
    n = np.asarray(trials, dtype=float)
    full = k >= n
    a, b = k + 1.0, np.where(full, 1.0, n - k)
    with np.errstate(all="ignore"):
        upper = np.where(full, 1.0, special.betainccinv(a, b, level))
        comp = np.where(full, 0.0, special.betaincinv(b, a, level))
    return upper, comp


def clopper_pearson_lower(successes: np.ndarray, trials: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """One-sided Clopper-Pearson lower bound on a proportion and its complement.

    Returns ``(lower, 1 - lower)`` with both computed directly, Equation (2).

    >>> lo, c = clopper_pearson_lower(np.array([100]), np.array([100]), 0.05)
    >>> round(float(lo[0]), 6), round(float(c[0]), 6)
    (0.970487, 0.029513)
    """
    k = np.asarray(successes, dtype=float)
    n = np.asarray(trials, dtype=float)
    none = k <= 0
    a, b = np.where(none, 1.0, k), n - k + 1.0
    with np.errstate(all="ignore"):
        lower = np.where(none, 0.0, special.betaincinv(a, b, level))
        comp = np.where(none, 1.0, special.betainccinv(b, a, level))
    return lower, comp


def probit_pair(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Phi^{-1}(p) given p and q = 1 - p, from the smaller of the two (tails keep digits)."""
    with np.errstate(divide="ignore"):
        return np.where(p <= q, special.ndtri(p), -special.ndtri(q))


def mu_lower_bounds(tpr_lower, fnr_upper, tnr_lower, fpr_upper) -> np.ndarray:
    """Equation (4) at every threshold (``-inf`` where TPR_lower or TNR_lower is 0),
    lowered by a relative ``MU_SAFETY_RTOL`` so rounding can never make it optimistic."""
    mu = probit_pair(tpr_lower, fnr_upper) + probit_pair(tnr_lower, fpr_upper)
    return mu - MU_SAFETY_RTOL * np.abs(mu)


def epsilon_lower_bounds(tpr_lower, fnr_upper, tnr_lower, fpr_upper, delta: float) -> tuple[np.ndarray, np.ndarray]:
    """Equation (5) at every threshold: (direct, mirror), ``-inf`` where uninformative."""
    with np.errstate(divide="ignore", invalid="ignore"):
        direct = np.where((tpr_lower > delta) & (fpr_upper > 0),
                          np.log(np.maximum(tpr_lower - delta, 1e-300)) - np.log(np.maximum(fpr_upper, 1e-300)),
                          -np.inf)
        mirror = np.where((tnr_lower > delta) & (fnr_upper > 0),
                          np.log(np.maximum(tnr_lower - delta, 1e-300)) - np.log(np.maximum(fnr_upper, 1e-300)),
                          -np.inf)
    return direct, mirror


def rank_grid(n: int, per_side: int) -> np.ndarray:
    """Non-member ranks c (0 <= c < n) at which thresholds are placed: ``per_side``
    log-spaced counts from each end, so both the low-FPR tail (direct bound) and the
    high-FPR tail (mirror bound) are covered. Depends on n only, never on the scores.

    >>> rank_grid(5, 100).tolist()
    [0, 1, 2, 3, 4]
    """
    j = np.unique(np.round(np.geomspace(1.0, float(n), max(per_side, 2))).astype(np.int64))
    c = np.unique(np.concatenate([j - 1, n - j]))
    return c[(c >= 0) & (c < n)]
