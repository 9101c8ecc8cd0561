"""Monte Carlo power for tests without a closed form, simulated on sufficient statistics
(vectorised over replicates: no Python loop per replicate), with a seeded generator and
the Monte Carlo standard error of the estimate.

- t-test on a DP mean: the mean (sensitivity R/n) and the sum of squared deviations
  (sensitivity R^2/n, assuming data in a range of width R) are released with Gaussian
  noise; the budget mu is split across the two releases by GDP composition
  (mu_each = mu / sqrt(2)). x-bar ~ N(m, sd^2/n) and (n-1) s^2 / sd^2 ~ chi2_{n-1} are drawn
  directly (normal data within the range).
- regression coefficient in y = b0 + b1 x + e with x ~ Uniform(-1, 1), |y| clipped to
  y_bound: the five sufficient statistics (sum x, sum x^2, sum y, sum xy, sum y^2) are
  released with Gaussian noise, mu split over five releases; b1 is estimated from the noisy
  statistics and tested with its plug-in standard error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from fdpkit._lazy import lazy_module

if TYPE_CHECKING:
    from scipy import stats
else:  # loaded on first use (start-up time, issue 30)
    stats = lazy_module("scipy.stats")

from fdpkit._deprecation import renamed_keywords
from fdpkit._numerics import check_choice, check_positive, check_scalar
from fdpkit.errors import ParameterError
from fdpkit.utility.ztest import ALTERNATIVES, _level, _n

#: Default number of simulated replicates.
N_SIM = 20_000
#: Largest n of :func:`mc_regression_power`, which draws all n (x, y) pairs of every
#: replicate (memory and time grow as n x n_sim; the Z-test approximation is exact enough
#: far below this).
MAX_N_REGRESSION = 10**6
#: Largest n x n_sim of :func:`mc_regression_power` (about 5 s of drawing).
MAX_DRAWS_REGRESSION = 10**8
#: Most replicates of one simulation: :func:`mc_ttest_power` holds four arrays of n_sim
#: floats (10**7: 320 MB and about a second; 10**9 once asked numpy for 7.5 GiB).
MAX_N_SIM = 10**7
#: Largest noise sd (in units of the data scale) that :func:`mc_ttest_power` simulates; its
#: square must stay in float range.
_MAX_NOISE_SD = 1e150


@dataclass(frozen=True)
class MonteCarloPower:
    """A simulated power with its Monte Carlo standard error."""

    power: float
    standard_error: float
    n_sim: int
    seed: int
    method: str

    def to_dict(self) -> dict:
        """The object as JSON-ready data (dicts, lists, numbers and strings)."""
        return dict(self.__dict__)


def _reject(stat: np.ndarray, crit_hi: float, alternative: str) -> np.ndarray:
    if alternative == "larger":
        return stat > crit_hi
    if alternative == "smaller":
        return stat < -crit_hi
    return np.abs(stat) > crit_hi


def _result(rejected: np.ndarray, seed: int, method: str) -> MonteCarloPower:
    p = float(np.mean(rejected))
    n = rejected.size
    return MonteCarloPower(p, math.sqrt(max(p * (1 - p), 1.0 / n) / n), n, seed, method)


def _check_sim(n_sim: int, seed: int) -> tuple[int, int]:
    if not (isinstance(n_sim, int) and 100 <= n_sim <= MAX_N_SIM):
        raise ParameterError(f"n_sim must be an integer >= 100 and <= {MAX_N_SIM:,}, got {n_sim!r}", "n_sim")
    if not isinstance(seed, int):
        raise ParameterError(f"seed must be an integer, got {seed!r}", "seed")
    return n_sim, seed


@renamed_keywords(alpha="level")
def mc_ttest_power(*, effect: float, n: int, sd: float, mu: float, level: float = 0.05,
                   data_range: float = 1.0, alternative: str = "larger", n_sim: int = N_SIM,
                   seed: int = 0) -> MonteCarloPower:
    """Simulated power of a one-sample t-test computed from a DP mean and a DP variance.

    Examples
    --------
    >>> r = mc_ttest_power(effect=0.2, n=100, sd=0.25, mu=1.0, n_sim=2000, seed=1)
    >>> 0.9 < r.power <= 1 and r.standard_error < 0.01
    True
    """
    a = _level(level)
    check_choice("alternative", alternative, ALTERNATIVES)
    e = check_scalar("effect", effect)
    nn = int(_n(n))
    if nn < 2:
        raise ParameterError(f"n must be >= 2 for a t-test, got {n!r}", "n")
    s = check_scalar("sd", check_positive("sd", sd))
    r = check_scalar("data_range", check_positive("data_range", data_range))
    m = check_scalar("mu", check_positive("mu", mu, allow_inf=True))
    n_sim, seed = _check_sim(n_sim, seed)
    rng = np.random.default_rng(seed)
    mu_each = m / math.sqrt(2.0)
    # the t statistic is scale-free: measure effect, sd and range in units of the larger of
    # sd and range, so that no square below leaves float range
    unit = max(s, r)
    e, s, r = e / unit, s / unit, r / unit
    if math.isfinite(m) and not (r / nn) / mu_each < _MAX_NOISE_SD:
        raise ParameterError(f"mu={m!r} is too small: the noise sd relative to the data leaves float range "
                             f"(the power is the level, {a!r})", "mu")
    xbar = rng.normal(e, s / math.sqrt(nn), n_sim)
    ss = s * s * rng.chisquare(nn - 1, n_sim)
    if math.isfinite(m):
        xbar = xbar + rng.normal(0.0, (r / nn) / mu_each, n_sim)
        ss = ss + rng.normal(0.0, (r * r / nn) / mu_each, n_sim)
    var_hat = np.maximum(ss / (nn - 1), 1e-12)
    noise_var = ((r / nn) / mu_each) ** 2 if math.isfinite(m) else 0.0
    t = xbar / np.sqrt(var_hat / nn + noise_var)
    crit = stats.t.isf(a / 2 if alternative == "two-sided" else a, float(nn - 1))  # an int past int64 was a TypeError
    return _result(_reject(t, crit, alternative), seed, "t-test on DP mean and variance (simulated)")


@renamed_keywords(alpha="level")
def mc_regression_power(*, slope: float, n: int, noise_sd: float, mu: float, level: float = 0.05,
                        y_bound: float = 1.0, alternative: str = "two-sided", n_sim: int = N_SIM,
                        seed: int = 0) -> MonteCarloPower:
    """Simulated power of the test of a regression slope from DP sufficient statistics.

    Examples
    --------
    >>> r = mc_regression_power(slope=0.3, n=500, noise_sd=0.3, mu=1.0, n_sim=1000, seed=2)
    >>> 0 < r.power <= 1
    True
    """
    a = _level(level)
    check_choice("alternative", alternative, ALTERNATIVES)
    b1 = check_scalar("slope", slope)
    nn = int(_n(n))
    if nn < 3:
        raise ParameterError(f"n must be >= 3 for a regression, got {n!r}", "n")
    if nn > MAX_N_REGRESSION:
        raise ParameterError(f"n must be at most {MAX_N_REGRESSION:,} for the simulated regression "
                             f"(it draws n values per replicate), got {n!r}", "n")
    sig = check_scalar("noise_sd", check_positive("noise_sd", noise_sd))
    yb = check_scalar("y_bound", check_positive("y_bound", y_bound))
    m = check_scalar("mu", check_positive("mu", mu, allow_inf=True))
    n_sim, seed = _check_sim(n_sim, seed)
    if nn * n_sim > MAX_DRAWS_REGRESSION:
        raise ParameterError(f"n x n_sim must be at most {MAX_DRAWS_REGRESSION:,} (the simulation draws n pairs "
                             f"per replicate), got n={n!r}, n_sim={n_sim!r}", "n", ("n", "n_sim"))
    rng = np.random.default_rng(seed)
    out = np.empty(n_sim, dtype=bool)
    chunk = max(1, 2_000_000 // nn)  # bound memory: n x chunk draws at a time
    mu_each = m / math.sqrt(5.0)
    sens = np.array([1.0, 1.0, yb, yb, yb * yb])  # x in [-1, 1], |y| <= y_bound
    crit = stats.norm.isf(a / 2 if alternative == "two-sided" else a)
    for start in range(0, n_sim, chunk):
        k = min(chunk, n_sim - start)
        x = rng.uniform(-1.0, 1.0, (k, nn))
        y = np.clip(b1 * x + rng.normal(0.0, sig, (k, nn)), -yb, yb)
        st = np.stack([x.sum(1), (x * x).sum(1), y.sum(1), (x * y).sum(1), (y * y).sum(1)], axis=1)
        if math.isfinite(m):
            st = st + rng.normal(0.0, 1.0, st.shape) * (sens / mu_each)
        sx, sxx, sy, sxy, syy = st.T
        sxx_c = np.maximum(sxx - sx * sx / nn, 1e-9)
        slope_hat = (sxy - sx * sy / nn) / sxx_c
        resid = np.maximum(syy - sy * sy / nn - slope_hat * slope_hat * sxx_c, 1e-12) / (nn - 2)
        se = np.sqrt(resid / sxx_c)
        out[start:start + k] = _reject(slope_hat / se, crit, alternative)
    return _result(out, seed, "slope test on DP sufficient statistics (simulated)")
