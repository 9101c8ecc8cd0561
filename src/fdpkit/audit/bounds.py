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


#: Relative steps by which a quantile that fails its check is moved towards the safe side,
#: to bracket the exact one before the bisection (the end, 0 or 1, is always safe).
_BRACKET_STEPS = (1e-12, 1e-9, 1e-6, 1e-3)


def _safe(a: np.ndarray, b: np.ndarray, x: np.ndarray, level: float, upper: bool) -> np.ndarray:
    """Whether ``x`` lies on the safe side of the level-quantile of Beta(a, b), by the
    distribution function itself: I_x(a, b) <= level (lower), 1 - I_x(a, b) <= level (upper)."""
    with np.errstate(all="ignore"):
        tail = special.betaincc(a, b, x) if upper else special.betainc(a, b, x)
    return tail <= level


def beta_quantile(a: np.ndarray, b: np.ndarray, level: float, *, upper: bool) -> np.ndarray:
    """The level-quantile of Beta(a, b) from below (``upper=False``: the largest x with
    I_x(a, b) <= level) or from above (``upper=True``: the smallest x with
    1 - I_x(a, b) <= level), never on the optimistic side of the exact one.

    SciPy's inverses (``betaincinv``/``betainccinv``) give the first guess; every guess is
    checked with the distribution function (``betainc``/``betaincc``, reliable where the
    inverses are not: for a = 1000, b = 1e9 ``betaincinv`` returns 1.9e-6 at every level,
    a point where I_x = 1, so 1000 of 1e9 gave a lower bound of twice the observed rate), and
    one that fails is replaced by a bisection on the bit patterns of the doubles between a
    safe point and the guess (exact to one unit in the last place).

    >>> x = beta_quantile(np.array([1000.0]), np.array([1e9 - 999]), 1e-4, upper=False)
    >>> bool(x[0] < 1000 / 1e9)
    True
    """
    a, b = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
    with np.errstate(all="ignore"):
        x = special.betainccinv(a, b, level) if upper else special.betaincinv(a, b, level)
    end = 1.0 if upper else 0.0  # always safe: 1 - I_1 = 0, I_0 = 0
    x = np.where(np.isfinite(x), np.clip(x, 0.0, 1.0) + 0.0, 1.0 - end)  # NaN: the unsafe end, bisected; -0.0 -> 0.0
    bad = np.flatnonzero(~_safe(a, b, x, level, upper))
    if bad.size == 0:
        return x
    a_b, b_b, guess = a.ravel()[bad], b.ravel()[bad], x.ravel()[bad]
    good = np.full(bad.size, end)
    found = np.zeros(bad.size, dtype=bool)
    for step in _BRACKET_STEPS:  # a safe point near the guess: few bisection steps
        trial = np.clip(guess * (1.0 + step) if upper else guess * (1.0 - step), 0.0, 1.0)
        hit = ~found & _safe(a_b, b_b, trial, level, upper)
        good[hit], found = trial[hit], found | hit
    safe_bits, unsafe_bits = good.view(np.int64).copy(), guess.view(np.int64).copy()
    while True:  # non-negative doubles are ordered like their bit patterns
        open_ = np.abs(safe_bits - unsafe_bits) > 1
        if not open_.any():
            break
        mid = (safe_bits + unsafe_bits) // 2
        ok = _safe(a_b, b_b, mid.view(np.float64), level, upper)
        safe_bits = np.where(open_ & ok, mid, safe_bits)
        unsafe_bits = np.where(open_ & ~ok, mid, unsafe_bits)
    out = x.copy().ravel()
    out[bad] = safe_bits.view(np.float64)
    return out.reshape(x.shape)


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
    upper = np.where(full, 1.0, beta_quantile(a, b, level, upper=True))
    comp = np.where(full, 0.0, beta_quantile(b, a, level, upper=False))
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
    lower = np.where(none, 0.0, beta_quantile(a, b, level, upper=False))
    comp = np.where(none, 1.0, beta_quantile(b, a, level, upper=True))
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
