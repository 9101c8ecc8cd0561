"""Power of Z-tests for a mean released with differential-privacy noise.

De Fondeville (Sec. 4, Eq. 9): n observations with measurement sd ``sd`` on a range of width
``data_range``; their mean has sensitivity Delta_q = data_range / n. A Gaussian mechanism with
mu-GDP adds noise of sd Delta_q / mu, so the released mean has

    sigma_n^2 = sd^2 / n + Delta_q^2 / mu^2,

and the one-sided level-alpha0 Z-test for a mean shift m has power

    power(m) = 1 - Phi(Phi^{-1}(1 - alpha0) - m / sigma_n).

mu = inf gives the non-private test. For Laplace noise (scale b = Delta_q / eps) the statistic
is Normal + Laplace; its CDF has a closed form (a normal-Laplace convolution), which is used
exactly here for the critical value and the power.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import special

from fdpkit._deprecation import renamed_keywords
from fdpkit._numerics import check_choice, check_nonnegative, check_positive, check_scalar, norm_isf, norm_sf
from fdpkit._solve import solve_monotone
from fdpkit.errors import ParameterError

ALTERNATIVES = ("larger", "smaller", "two-sided")


def _level(level: Any, name: str = "level") -> float:
    a = check_scalar(name, level)
    if not 0.0 < a < 1.0:
        raise ParameterError(f"{name} must be in (0, 1), got {level!r}", name)
    return a


def _n(n: Any, name: str = "n") -> float:
    """A number of observations: finite and at least 1 (a sample of 1e-300 people is not
    a sample; below one observation the sd formulas would divide towards overflow)."""
    v = check_scalar(name, n)
    if not (v > 0 and math.isfinite(v)):
        raise ParameterError(f"{name} must be a positive number, got {n!r}", name)
    if v < 1.0:
        raise ParameterError(f"{name} must be at least 1 (a number of observations), got {n!r}", name)
    return v


def noise_sd(*, n: float, data_range: float, mu: float) -> float:
    """sd of the Gaussian-mechanism noise on a mean of n values in a range of width
    ``data_range``: (data_range / n) / mu (0 for mu = inf)."""
    n = _n(n)
    r = check_scalar("data_range", check_positive("data_range", data_range))
    m = check_scalar("mu", check_positive("mu", mu, allow_inf=True))
    return 0.0 if math.isinf(m) else (r / n) / m


def released_sd(*, n: float, sd: float, mu: float, data_range: float = 1.0) -> float:
    """sigma_n of the released mean (de Fondeville Eq. 9)."""
    s = check_scalar("sd", check_nonnegative("sd", sd))
    return math.hypot(s / math.sqrt(_n(n)), noise_sd(n=n, data_range=data_range, mu=mu))


def _power_from_z(shift: float, level: float, alternative: str) -> float:
    if alternative == "larger":
        return float(norm_sf(norm_isf(level) - shift))
    if alternative == "smaller":
        return float(norm_sf(norm_isf(level) + shift))
    z = float(norm_isf(level / 2.0))
    return float(norm_sf(z - shift) + norm_sf(z + shift))


@renamed_keywords(alpha="level")
def ztest_power(*, effect: float, n: float, sd: float, mu: float, level: float = 0.05,
                data_range: float = 1.0, alternative: str = "larger") -> float:
    """Power of the Z-test for a mean released under μ-GDP (de Fondeville Eq. 9).

    Parameters
    ----------
    effect : float
        True shift of the mean under the alternative (same unit as the data).
    n : float
        Number of observations (> 0).
    sd : float
        Measurement sd of one observation (≥ 0).
    mu : float
        GDP parameter of the release (> 0); ``inf`` gives the non-private power.
    level : float
        Test level alpha0 in (0, 1).
    data_range : float
        Width of the data range (sensitivity of the sum); the mean's is data_range / n.
    alternative : {"larger", "smaller", "two-sided"}

    Examples
    --------
    >>> round(ztest_power(effect=0.2, n=15, sd=0.25, mu=1.0, level=0.01), 4)
    0.4321
    >>> ztest_power(effect=0.2, n=100, sd=0.25, mu=float("inf"), level=0.01) > 0.999
    True
    """
    a = _level(level)
    check_choice("alternative", alternative, ALTERNATIVES)
    e = check_scalar("effect", effect)
    s_n = released_sd(n=n, sd=sd, mu=mu, data_range=data_range)
    if s_n == 0.0:
        raise ParameterError(f"sd must be > 0 for the non-private power (mu = inf), got sd={sd!r}: a noiseless mean "
                             "of data without variance has no test", "sd", ("sd", "mu"))
    if math.isinf(s_n):
        raise ParameterError(f"sd, n, data_range and mu give a released sd outside float range "
                             f"(sd={sd!r}, n={n!r}, data_range={data_range!r}, mu={mu!r})", "mu", ("mu", "sd", "n", "data_range"))
    return _power_from_z(e / s_n, a, alternative)


# ----------------------------------------------------------------------------- Laplace
_LOG_HALF = math.log(0.5)
_SQRT_HALF = math.sqrt(0.5)


def _log_quarter_erfcx(z: float) -> float:
    """log(erfcx(z / sqrt 2) / 4) for z >= 0, where erfcx(u) = e^{u^2} erfc(u) (no overflow)."""
    return math.log(0.25 * float(special.erfcx(z * _SQRT_HALF)))


def _normal_laplace_logsf_upper(x: float, s: float, b: float) -> float:
    """log P(N(0, s^2) + Laplace(0, b) > x) for x >= 0, s > 0, b > 0, stable for every ratio
    s / b and every x (no e^{s^2/(2b^2)} is ever formed).

    With g = e^{-x^2/(2 s^2)}, z = s/b - x/s and w = x/s + s/b >= 0, the closed form
    P(X > x) = Phi(-x/s) + T1 - T2, T1 = 1/2 e^{s^2/(2b^2) - x/b} Phi(-z),
    T2 = 1/2 e^{s^2/(2b^2) + x/b} Phi(-w), reads, since Phi(-u) = erfcx(u/sqrt 2) e^{-u^2/2} / 2
    and z^2/2 = w^2/2 - 2x/b:

        Phi(-x/s) = g erfcx(x/(s sqrt 2)) / 2,   T2 = g erfcx(w / sqrt 2) / 4,
        T1 = g erfcx(z / sqrt 2) / 4 (z >= 0),   T1 = 1/2 e^{s^2/(2b^2) - x/b} Phi(-z) (z < 0).

    In the last case x/b - s^2/(2b^2) >= s^2/(2b^2) >= 0, so the exponent has no cancellation.
    """
    log_g = -0.5 * (x / s) ** 2 if x / s < 1e154 else -math.inf
    if log_g == -math.inf:
        return -math.inf  # the normal part alone is below e^{-1e300}; so is the sum
    t0 = log_g + math.log(0.5 * float(special.erfcx(x / s * _SQRT_HALF)))
    z = s / b - x / s
    if z >= 0.0:
        t1 = log_g + _log_quarter_erfcx(z)
    else:
        t1 = _LOG_HALF + (0.5 * (s / b) - x / s) * (s / b) + float(special.log_ndtr(-z))
    t2 = log_g + _log_quarter_erfcx(x / s + s / b)
    pos = float(np.logaddexp(t0, t1))
    if t2 >= pos:  # rounding only: the probability is then below every term's precision
        return pos + math.log(DBL_EPSILON)
    return pos + math.log1p(-math.exp(t2 - pos))


#: Relative precision of a double, used as the floor of a cancelled difference.
DBL_EPSILON = float(np.finfo(float).eps)


def _normal_laplace_logsf(x: np.ndarray, s: float, b: float) -> np.ndarray:
    """log P(N(0, s^2) + Laplace(0, b) > x) elementwise (s > 0, b > 0), stable in both tails:
    x >= 0 through :func:`_normal_laplace_logsf_upper`, x < 0 through the symmetry
    P(X > x) = 1 - P(X > -x) (the result is >= 1/2 there, so nothing cancels).
    """
    out = []
    for xi in np.atleast_1d(np.asarray(x, dtype=float)):
        if xi >= 0.0:
            out.append(_normal_laplace_logsf_upper(float(xi), s, b))
        else:
            out.append(math.log1p(-math.exp(_normal_laplace_logsf_upper(-float(xi), s, b))))
    return np.asarray(out, dtype=float).reshape(np.shape(x))


#: Laplace noise with scale below this fraction of the normal sd is numerically negligible
#: (its variance 2 b^2 is then below 2e-24 of the normal one).
_NEGLIGIBLE_LAPLACE = 1e-12


def _sf(x: float, s: float, b: float) -> float:
    """P(N(0, s^2) + Laplace(0, b) > x) for s, b >= 0 (not both 0) and any x, infinities
    included."""
    if math.isinf(x):
        return 0.0 if x > 0 else 1.0
    if b == 0.0 or b < _NEGLIGIBLE_LAPLACE * s:
        return float(norm_sf(x / s))
    if s == 0.0:
        return 0.5 * math.exp(-x / b) if x >= 0 else 1.0 - 0.5 * math.exp(x / b)
    return float(math.exp(_normal_laplace_logsf(np.array([x]), s, b)[0]))


@renamed_keywords(alpha="level")
def ztest_power_laplace(*, effect: float, n: float, sd: float, epsilon: float, level: float = 0.05,
                        data_range: float = 1.0, alternative: str = "larger") -> float:
    """Power of the Z-test for a mean released with the Laplace mechanism (scale
    (data_range / n) / ε): exact, via the normal-Laplace convolution for both the
    critical value and the power.

    Examples
    --------
    >>> round(ztest_power_laplace(effect=0.2, n=15, sd=0.25, epsilon=1.0, level=0.01), 4)
    0.1863
    """
    a = _level(level)
    check_choice("alternative", alternative, ALTERNATIVES)
    e = check_scalar("effect", effect)
    nn = _n(n)
    s = check_scalar("sd", check_nonnegative("sd", sd)) / math.sqrt(nn)
    eps = check_scalar("epsilon", check_positive("epsilon", epsilon, allow_inf=True))
    r = check_scalar("data_range", check_positive("data_range", data_range))
    b = 0.0 if math.isinf(eps) else (r / nn) / eps
    if s == 0.0 and b == 0.0:
        raise ParameterError("sd must be > 0 when epsilon is inf", "sd", ("sd", "epsilon"))
    # work in units of the statistic's total sd (the test is scale-free): no overflow below
    scale = math.hypot(s, math.sqrt(2.0) * b)
    if not (math.isfinite(scale) and scale > 0.0):
        raise ParameterError(f"sd, n, data_range and epsilon give a noise scale outside float range "
                             f"(sd={sd!r}, n={nn!r}, data_range={r!r}, epsilon={eps!r})", "epsilon", ("epsilon", "sd", "n", "data_range"))
    s, b, e = s / scale, b / scale, e / scale
    tail = a / 2.0 if alternative == "two-sided" else a
    # level > 1/2 puts the critical value below 0: bracket both signs (rounded up: the power
    # is never overstated by the solver)
    crit = solve_monotone(lambda x: _sf(x, s, b) - tail, low=-5.0, high=5.0, side="high").root
    if alternative == "larger":
        return _sf(crit - e, s, b)
    if alternative == "smaller":
        return _sf(crit + e, s, b)
    return _sf(crit - e, s, b) + _sf(crit + e, s, b)
