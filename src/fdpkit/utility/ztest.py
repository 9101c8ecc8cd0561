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

from fdpkit._numerics import check_choice, check_nonnegative, check_positive, check_scalar, norm_isf, norm_sf
from fdpkit._solve import solve_monotone

ALTERNATIVES = ("larger", "smaller", "two-sided")


def _level(alpha: Any) -> float:
    a = check_scalar("alpha", alpha)
    if not 0.0 < a < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    return a


def _n(n: Any) -> float:
    v = check_scalar("n", n)
    if not (v > 0 and math.isfinite(v)):
        raise ValueError(f"n must be a positive number, got {n!r}")
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


def _power_from_z(shift: float, alpha: float, alternative: str) -> float:
    if alternative == "larger":
        return float(norm_sf(norm_isf(alpha) - shift))
    if alternative == "smaller":
        return float(norm_sf(norm_isf(alpha) + shift))
    z = float(norm_isf(alpha / 2.0))
    return float(norm_sf(z - shift) + norm_sf(z + shift))


def ztest_power(*, effect: float, n: float, sd: float, mu: float, alpha: float = 0.05,
                data_range: float = 1.0, alternative: str = "larger") -> float:
    """Power of the Z-test for a mean released under mu-GDP (de Fondeville Eq. 9).

    Parameters
    ----------
    effect : float
        True shift of the mean under the alternative (same unit as the data).
    n : float
        Number of observations (> 0).
    sd : float
        Measurement sd of one observation (>= 0).
    mu : float
        GDP parameter of the release (> 0); ``inf`` gives the non-private power.
    alpha : float
        Test level alpha0 in (0, 1).
    data_range : float
        Width of the data range (sensitivity of the sum); the mean's is data_range / n.
    alternative : {"larger", "smaller", "two-sided"}

    Examples
    --------
    >>> round(ztest_power(effect=0.2, n=15, sd=0.25, mu=1.0, alpha=0.01), 4)
    0.4321
    >>> ztest_power(effect=0.2, n=100, sd=0.25, mu=float("inf"), alpha=0.01) > 0.999
    True
    """
    a = _level(alpha)
    check_choice("alternative", alternative, ALTERNATIVES)
    e = check_scalar("effect", effect)
    s_n = released_sd(n=n, sd=sd, mu=mu, data_range=data_range)
    if s_n == 0.0:
        raise ValueError("sd must be > 0 when mu is inf (a noiseless, variance-free mean has no test)")
    return _power_from_z(e / s_n, a, alternative)


# ----------------------------------------------------------------------------- Laplace
def _normal_laplace_logsf(x: np.ndarray, s: float, b: float) -> np.ndarray:
    """log P(N(0, s^2) + Laplace(0, b) > x), stable in both tails.

    P(X > x) = Phi(-x/s) + 1/2 e^{s^2/(2b^2) - x/b} Phi(x/s - s/b)
                         - 1/2 e^{s^2/(2b^2) + x/b} Phi(-x/s - s/b)
    """
    x = np.asarray(x, dtype=float)
    c = s * s / (2.0 * b * b)
    t0 = special.log_ndtr(-x / s)
    t1 = np.log(0.5) + c - x / b + special.log_ndtr(x / s - s / b)
    t2 = np.log(0.5) + c + x / b + special.log_ndtr(-x / s - s / b)
    pos = np.logaddexp(t0, t1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return pos + np.log1p(-np.exp(np.minimum(t2 - pos, 0.0)))


#: Laplace noise with scale below this fraction of the normal sd is numerically negligible.
_NEGLIGIBLE_LAPLACE = 1e-12


def _sf(x: float, s: float, b: float) -> float:
    if b == 0.0 or b < _NEGLIGIBLE_LAPLACE * s:
        return float(norm_sf(x / s))
    if s == 0.0:
        return 0.5 * math.exp(-x / b) if x >= 0 else 1.0 - 0.5 * math.exp(x / b)
    return float(np.exp(_normal_laplace_logsf(np.array([x]), s, b))[0])


def ztest_power_laplace(*, effect: float, n: float, sd: float, epsilon: float, alpha: float = 0.05,
                        data_range: float = 1.0, alternative: str = "larger") -> float:
    """Power of the Z-test for a mean released with the Laplace mechanism (scale
    (data_range / n) / epsilon): exact, via the normal-Laplace convolution for both the
    critical value and the power.

    >>> round(ztest_power_laplace(effect=0.2, n=15, sd=0.25, epsilon=1.0, alpha=0.01), 4)
    0.1863
    """
    a = _level(alpha)
    check_choice("alternative", alternative, ALTERNATIVES)
    e = check_scalar("effect", effect)
    nn = _n(n)
    s = check_scalar("sd", check_nonnegative("sd", sd)) / math.sqrt(nn)
    eps = check_scalar("epsilon", check_positive("epsilon", epsilon, allow_inf=True))
    b = 0.0 if math.isinf(eps) else (check_scalar("data_range", check_positive("data_range", data_range)) / nn) / eps
    if s == 0.0 and b == 0.0:
        raise ValueError("sd must be > 0 when epsilon is inf")
    tail = a / 2.0 if alternative == "two-sided" else a
    scale = math.hypot(s, math.sqrt(2.0) * b)
    crit = solve_monotone(lambda x: _sf(x, s, b) - tail, low=0.0, high=5.0 * scale,
                          lower_limit=0.0, side="high").root
    if alternative == "larger":
        return _sf(crit - e, s, b)
    if alternative == "smaller":
        return _sf(crit + e, s, b)
    return _sf(crit - e, s, b) + _sf(crit + e, s, b)
