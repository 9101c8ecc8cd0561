"""Two-sample comparisons under DP noise: difference of means and of proportions.

Each group's statistic is released separately with a mu-GDP Gaussian mechanism (the groups
hold different people, so each person is covered by one release). Wald tests on the
difference, with the DP noise variance added to the sampling variance:

- means: Var = sd^2/n1 + sd^2/n2 + (R/n1)^2/mu^2 + (R/n2)^2/mu^2;
- proportions (unpooled): Var = p1(1-p1)/n1 + p2(1-p2)/n2 + (1/n1)^2/mu^2 + (1/n2)^2/mu^2.

With the Laplace mechanism (pure epsilon-DP) instead, the difference carries the difference
of two Laplace noises; :func:`two_sample_power_laplace` computes its power exactly (a
normal + Laplace-difference convolution, see there).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from fdpkit._deprecation import renamed_keywords
from fdpkit._numerics import (check_choice, check_nonnegative, check_positive, check_probability,
                              check_scalar, norm_sf)
from fdpkit._solve import solve_monotone
from fdpkit.errors import ParameterError
from fdpkit.utility.ztest import ALTERNATIVES, _level, _n, _power_from_z, _sf, noise_sd, released_sd


@renamed_keywords(alpha="level")
def two_sample_power(*, effect: float, n1: float, n2: float, sd: float, mu: float, level: float = 0.05,
                     data_range: float = 1.0, alternative: str = "larger") -> float:
    """Power of the two-sample Z-test for a difference of means released under μ-GDP.

    Examples
    --------
    >>> round(two_sample_power(effect=0.1, n1=200, n2=200, sd=0.25, mu=1.0), 3)
    0.986
    """
    a = _level(level)
    check_choice("alternative", alternative, ALTERNATIVES)
    e = check_scalar("effect", effect)
    n1, n2 = _n(n1, "n1"), _n(n2, "n2")
    s = math.hypot(released_sd(n=n1, sd=sd, mu=mu, data_range=data_range),
                   released_sd(n=n2, sd=sd, mu=mu, data_range=data_range))
    if s == 0.0:
        raise ParameterError(f"sd must be > 0 for the non-private power (mu = inf), got sd={sd!r}: a noiseless "
                             "difference of data without variance has no test", "sd", ("sd", "mu"))
    if math.isinf(s):
        raise ParameterError(f"sd, n1, n2, data_range and mu give a noise sd outside float range "
                             f"(sd={sd!r}, data_range={data_range!r}, mu={mu!r})", "mu", ("mu", "sd", "n1", "n2", "data_range"))
    return _power_from_z(e / s, a, alternative)


@renamed_keywords(alpha="level")
def two_proportion_power(*, p1: float, p2: float, n1: float, n2: float, mu: float, level: float = 0.05,
                         alternative: str = "larger") -> float:
    """Power of the two-sample test for proportions p1 > p2, each released under μ-GDP.

    Examples
    --------
    >>> round(two_proportion_power(p1=0.3, p2=0.2, n1=500, n2=500, mu=0.5), 3)
    0.975
    """
    a = _level(level)
    check_choice("alternative", alternative, ALTERNATIVES)
    q1 = float(check_probability("p1", check_scalar("p1", p1)))  # an array: was a TypeError
    q2 = float(check_probability("p2", check_scalar("p2", p2)))
    n1 = _n(n1, "n1")
    n2 = _n(n2, "n2")
    # the sd of the difference as a hypotenuse of the four sds: no square of a huge noise sd
    # (mu = 1e-300 gives noise sd 1e300) is ever formed
    sd_diff = math.hypot(*(math.sqrt(q * (1 - q) / n) for q, n in ((q1, n1), (q2, n2))),
                         *(noise_sd(n=n, data_range=1.0, mu=mu) for n in (n1, n2)))
    if sd_diff == 0.0:
        raise ParameterError("the difference has zero variance: p1 and p2 in {0, 1} with mu = inf", "mu", ("p1", "p2", "mu"))
    if math.isinf(sd_diff):
        raise ParameterError(f"mu={mu!r} gives a noise sd outside float range", "mu")
    return _power_from_z((q1 - q2) / sd_diff, a, alternative)


# ----------------------------------------------------------------------------- Laplace
#: Gauss-Laguerre nodes for the regime where the Laplace noise is smaller than the normal sd.
_LAGUERRE_NODES, _LAGUERRE_WEIGHTS = np.polynomial.laguerre.laggauss(96)
#: Relative gap between the two groups' Laplace scales below which they are treated as equal
#: (the partial-fraction formula cancels there); the error is O(gap^2).
_EQUAL_SCALES_RTOL = 1e-4


def _normal_laplace_sf(x: float, s: float, b: float) -> float:
    """P(N(0, s^2) + Laplace(0, b) > x): the closed form (:mod:`fdpkit.utility.ztest`) when
    b >= s, else Gauss-Laguerre over the Laplace variable (the closed form cancels there):
    (1/2) int_0^inf e^{-t} [Phi(-(x - b t)/s) + Phi(-(x + b t)/s)] dt."""
    if b >= s or s == 0.0:
        return _sf(x, s, b)
    t = _LAGUERRE_NODES
    return float(0.5 * np.dot(_LAGUERRE_WEIGHTS, special.ndtr(-(x - b * t) / s) + special.ndtr(-(x + b * t) / s)))


def _laplace_difference_sf(x: float, s: float, b: float) -> float:
    """P(N(0, s^2) + L1 - L2 > x) for independent L1, L2 ~ Laplace(0, b).

    The characteristic function of L1 - L2 is 1/(1 + b^2 t^2)^2 = 1/(1 + b^2 t^2)
    + (b/2) d/db [1/(1 + b^2 t^2)], so with G the normal-Laplace survival function
    (:func:`fdpkit.utility.ztest._normal_laplace_logsf`, T1 and T2 its two exponential terms)

        sf(x) = G + (b/2) dG/db = Phi(-x/s) + T1 (1 + (x - s^2/b)/(2b)) - T2 (1 - (x + s^2/b)/(2b)),
        T1 = 1/2 e^{s^2/(2b^2) - x/b} Phi(x/s - s/b),  T2 = 1/2 e^{s^2/(2b^2) + x/b} Phi(-x/s - s/b);

    at s = 0 it is the known (1/2)(1 + x/(2b)) e^{-x/b} for x >= 0. Used where b >= s; for
    b < s (where T1 and T2 cancel) Gauss-Laguerre over the density (1/(4b))(1 + |y|/b)e^{-|y|/b}
    of L1 - L2.
    """
    if x < 0:
        return 1.0 - _laplace_difference_sf(-x, s, b)
    if s == 0.0:
        return 0.5 * (1.0 + x / (2.0 * b)) * math.exp(-x / b)
    if b < s:
        t = _LAGUERRE_NODES
        w = 0.25 * (1.0 + t) * _LAGUERRE_WEIGHTS
        return float(np.dot(w, special.ndtr(-(x - b * t) / s) + special.ndtr(-(x + b * t) / s)))
    c = s * s / (2.0 * b * b)
    log_terms = (
        (float(special.log_ndtr(-x / s)), 1.0),
        (math.log(0.5) + c - x / b + float(special.log_ndtr(x / s - s / b)), 1.0 + (x - s * s / b) / (2.0 * b)),
        (math.log(0.5) + c + x / b + float(special.log_ndtr(-x / s - s / b)), (x + s * s / b) / (2.0 * b) - 1.0),
    )
    pos = [lt + math.log(k) for lt, k in log_terms if k > 0]
    neg = [lt + math.log(-k) for lt, k in log_terms if k < 0]
    lp = float(np.logaddexp.reduce(pos))
    if not neg:
        return math.exp(lp)
    ln = float(np.logaddexp.reduce(neg))
    return math.exp(lp) * -math.expm1(min(ln - lp, 0.0))


def _difference_sf(x: float, s: float, b1: float, b2: float) -> float:
    """P(N(0, s^2) + Laplace(b1) - Laplace(b2) > x). Unequal scales by partial fractions of
    the characteristic function, 1/((1 + b1^2 t^2)(1 + b2^2 t^2))
    = [b1^2/(1 + b1^2 t^2) - b2^2/(1 + b2^2 t^2)] / (b1^2 - b2^2)."""
    if math.isinf(x):
        return 0.0 if x > 0 else 1.0
    if b1 == 0.0 and b2 == 0.0:
        return float(norm_sf(x / s))
    hi, lo = max(b1, b2), min(b1, b2)
    if hi - lo <= _EQUAL_SCALES_RTOL * hi:
        return _laplace_difference_sf(x, s, 0.5 * (b1 + b2))
    r = (lo / hi) ** 2
    return (_normal_laplace_sf(x, s, hi) - r * (_normal_laplace_sf(x, s, lo) if lo > 0 else 0.0)) / (1.0 - r)


@renamed_keywords(alpha="level")
def two_sample_power_laplace(*, effect: float, n1: float, n2: float, sd: float, epsilon: float,
                             level: float = 0.05, data_range: float = 1.0, alternative: str = "larger") -> float:
    """Power of the two-sample Z-test for a difference of means, each group's mean released
    with the Laplace mechanism at ``epsilon`` (scale bᵢ = (``data_range`` / nᵢ) / ε).

    The test statistic is D = (mean₁ + L₁) − (mean₂ + L₂) with D − effect distributed as
    N(0, sd²/n1 + sd²/n2) + L₁ − L₂. Its survival function is computed exactly (method
    "exact: normal + Laplace-difference convolution"): in closed form (the derivative identity
    in :func:`_laplace_difference_sf`; partial fractions for n1 ≠ n2) where the Laplace
    noise dominates, by 96-node Gauss-Laguerre quadrature of the normal CDF against the
    Laplace-difference density where the normal part dominates. The critical value solves
    sf(c) = level (level/2 two-sided) and is rounded up, so the power is never overstated by
    the solver; power = sf(c - effect) (+ sf(c + effect) two-sided). The same construction as
    :func:`fdpkit.utility.ztest.ztest_power_laplace` for one sample (de Fondeville Sec. 4).

    Parameters
    ----------
    effect : float
        True difference of the two means (group 1 minus group 2).
    n1, n2 : float
        Observations per group (> 0).
    sd : float
        Measurement sd of one observation (≥ 0).
    epsilon : float
        Laplace ε of each group's release (> 0; ``inf`` gives the non-private power).
    level, data_range, alternative
        As in :func:`two_sample_power`.

    Examples
    --------
    >>> round(two_sample_power_laplace(effect=0.1, n1=200, n2=200, sd=0.25, epsilon=1.0), 3)
    0.981
    """
    a = _level(level)
    check_choice("alternative", alternative, ALTERNATIVES)
    e = check_scalar("effect", effect)
    m1 = _n(n1, "n1")
    m2 = _n(n2, "n2")
    sd = check_scalar("sd", check_nonnegative("sd", sd))
    eps = check_scalar("epsilon", check_positive("epsilon", epsilon, allow_inf=True))
    r = check_scalar("data_range", check_positive("data_range", data_range))
    s = math.hypot(sd / math.sqrt(m1), sd / math.sqrt(m2))
    b1, b2 = (0.0, 0.0) if math.isinf(eps) else ((r / m1) / eps, (r / m2) / eps)
    if s == 0.0 and b1 == 0.0:
        raise ParameterError("sd must be > 0 when epsilon is inf", "sd", ("sd", "epsilon"))
    # work in units of the statistic's total sd (the test is scale-free): no overflow below
    total = math.hypot(s, math.sqrt(2.0) * b1, math.sqrt(2.0) * b2)
    if not (math.isfinite(total) and total > 0.0):
        raise ParameterError(f"sd, n1, n2, data_range and epsilon give a noise scale outside float range "
                             f"(sd={sd!r}, n1={m1!r}, n2={m2!r}, data_range={r!r}, epsilon={eps!r})", "epsilon", ("epsilon", "sd", "n1", "n2", "data_range"))
    s, b1, b2, e = s / total, b1 / total, b2 / total, e / total
    tail = a / 2.0 if alternative == "two-sided" else a
    # level > 1/2 puts the critical value below 0: bracket both signs
    crit = solve_monotone(lambda x: _difference_sf(x, s, b1, b2) - tail, low=-5.0, high=5.0, side="high").root
    if alternative == "larger":
        return _difference_sf(crit - e, s, b1, b2)
    if alternative == "smaller":
        return _difference_sf(crit + e, s, b1, b2)
    return _difference_sf(crit - e, s, b1, b2) + _difference_sf(crit + e, s, b1, b2)
