"""Leave exactly one unknown of the DP Z-test and solve for it (statsmodels ``solve_power``
pattern): explicit keywords, a frozen result with ``converged``, and a clear answer when the
target cannot be reached (never a silent bracket end).

Power is non-decreasing in mu, n and the effect, so each unknown is the smallest value
reaching the target power; n is an integer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from fdpkit.errors import ParameterError
from fdpkit._deprecation import renamed_keywords
from fdpkit._numerics import check_scalar, json_safe
from fdpkit._solve import solve_monotone
from fdpkit.utility.ztest import ztest_power

#: Largest n searched before a target is declared unreachable.
N_MAX = 10**9


@dataclass(frozen=True)
class PowerSolution:
    """Outcome of :func:`solve_ztest` / :func:`mu_min_for_power_loss`.

    Attributes
    ----------
    unknown : str
        The parameter solved for.
    value : float
        Its value (∞ when unreachable); n is an integer.
    power : float
        The power achieved with ``value`` (the largest reachable power when unreachable).
    converged : bool
        False when the target cannot be reached; ``reason`` then says why.
    iterations : int
    reason : str
    """

    unknown: str
    value: float
    power: float
    converged: bool
    iterations: int = 0
    reason: str = ""

    def to_dict(self) -> dict:
        """The object as JSON-ready data (dicts, lists, numbers and strings)."""
        return json_safe(dict(self.__dict__))


def _target(name: str, value: float) -> float:
    v = check_scalar(name, value)
    if not 0 < v < 1:
        raise ParameterError(f"{name} must be in (0, 1), got {value!r}", name)
    return v


@renamed_keywords(alpha="level")
def solve_ztest(*, mu: float | None = None, n: float | None = None, effect: float | None = None,
                power: float | None = None, sd: float, level: float = 0.05, data_range: float = 1.0,
                alternative: str = "larger") -> PowerSolution:
    """Solve the DP Z-test for the one parameter left as None.

    Examples
    --------
    >>> s = solve_ztest(n=100, effect=0.2, power=0.9, sd=0.25, level=0.01)
    >>> s.unknown, round(s.value, 3), s.converged
    ('mu', 0.202, True)
    >>> solve_ztest(mu=1.0, effect=0.2, power=0.9, sd=0.25, level=0.01).value
    31
    """
    given = {"mu": mu, "n": n, "effect": effect, "power": power}
    unknown = [k for k, v in given.items() if v is None]
    if len(unknown) != 1:
        raise ParameterError(f"exactly one of mu, n, effect, power must be None, got {len(unknown)} "
                             f"({', '.join(unknown) or 'none'})", (unknown or list(given))[0], tuple(unknown or given))
    unknown = unknown[0]
    kw = dict(sd=sd, level=level, data_range=data_range, alternative=alternative)
    if unknown == "power":
        return PowerSolution("power", ztest_power(effect=effect, n=n, mu=mu, **kw), ztest_power(effect=effect, n=n, mu=mu, **kw), True)
    target = _target("power", power)
    if unknown == "mu":
        best = ztest_power(effect=effect, n=n, mu=math.inf, **kw)
        if best < target:
            return PowerSolution("mu", math.inf, best, False, 1,
                                 f"unreachable: even without privacy noise the power is {best:.4g} < {target:g}")
        if ztest_power(effect=effect, n=n, mu=1e-6, **kw) >= target:
            return PowerSolution("mu", 1e-6, ztest_power(effect=effect, n=n, mu=1e-6, **kw), True, 1)
        res = solve_monotone(lambda m: ztest_power(effect=effect, n=n, mu=m, **kw) - target,
                             low=0.1, high=10.0, lower_limit=1e-6, upper_limit=1e6, side="high", log_scale=True)
        return PowerSolution("mu", res.root, ztest_power(effect=effect, n=n, mu=res.root, **kw),
                             res.converged, res.iterations, res.reason)
    if unknown == "effect":
        res = solve_monotone(lambda e: ztest_power(effect=e, n=n, mu=mu, **kw) - target,
                             low=1e-3, high=10.0, lower_limit=1e-12, upper_limit=1e12, side="high", log_scale=True)
        return PowerSolution("effect", res.root, ztest_power(effect=res.root, n=n, mu=mu, **kw),
                             res.converged, res.iterations, res.reason)
    # n: smallest integer reaching the target
    f = lambda k: ztest_power(effect=effect, n=k, mu=mu, **kw)  # noqa: E731
    if f(N_MAX) < target:
        return PowerSolution("n", math.inf, f(N_MAX), False, 1,
                             f"unreachable: power stays below {target:g} for n up to {N_MAX:g}")
    lo, hi, it = 0, 1, 0
    while f(hi) < target:
        lo, hi, it = hi, hi * 2, it + 1
    while hi - lo > 1:
        mid, it = (lo + hi) // 2, it + 1
        if f(mid) >= target:
            hi = mid
        else:
            lo = mid
    return PowerSolution("n", hi, f(hi), True, it)


@renamed_keywords(alpha="level")
def mu_min_for_power_loss(*, n: float, effect: float, sd: float, level: float = 0.05,
                          data_range: float = 1.0, max_relative_loss: float = 0.01,
                          alternative: str = "larger") -> float:
    """Smallest μ whose power is at least (1 - max_relative_loss) x the non-private power
    (de Fondeville Sec. 4 and 5.2; μ_min = 7.9, 0.28, 0.048 for n = 15, 100, 500 at level
    0.01, sd 0.25, effect 0.2, data in [0, 1]).

    Examples
    --------
    >>> round(mu_min_for_power_loss(n=15, effect=0.2, sd=0.25, level=0.01), 2)
    7.91
    """
    loss = check_scalar("max_relative_loss", max_relative_loss)
    if not 0 < loss < 1:
        raise ParameterError(f"max_relative_loss must be in (0, 1), got {max_relative_loss!r}", "max_relative_loss")
    kw = dict(n=n, effect=effect, sd=sd, level=level, data_range=data_range, alternative=alternative)
    target = (1.0 - loss) * ztest_power(mu=math.inf, **kw)
    res = solve_monotone(lambda m: ztest_power(mu=m, **kw) - target, low=0.1, high=10.0,
                         lower_limit=1e-9, upper_limit=1e9, side="high", log_scale=True)
    if not res.converged:
        raise ParameterError(f"no mu reaches {(1 - loss) * 100:.6g}% of the non-private power: {res.reason}", "max_relative_loss")
    return res.root
