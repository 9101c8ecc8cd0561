"""One solver for every "find the parameter" question in fdpkit: bracket, then Brent.

Every inverse in fdpkit (epsilon for a delta, mu for a target power, a noise multiplier
for a target mu, ...) is a root of a monotone function of one variable. ``solve_monotone``
expands a bracket geometrically until the sign changes, then runs Brent's method
(scipy.optimize.brentq) and reports what happened in a frozen ``SolveResult``. The caller
says which side of the root is safe (``side``): the returned value is always the bracket
end on that side, so tolerance never moves an answer in the optimistic direction.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from fdpkit._lazy import lazy_module

if TYPE_CHECKING:
    from scipy import optimize
else:  # loaded on first use (start-up time, issue 30)
    optimize = lazy_module("scipy.optimize")

#: Default absolute and relative tolerances on the root.
XTOL = 1e-12
RTOL = 1e-10
MAX_EXPANSIONS = 200


@dataclass(frozen=True)
class SolveResult:
    """Outcome of :func:`solve_monotone`.

    Attributes
    ----------
    root : float
        The solution, taken from the safe side of the final bracket.
    converged : bool
        Whether the bracket was found and Brent's method met its tolerance.
    iterations : int
        Function evaluations spent (expansion plus Brent).
    bracket : tuple of float
        The final bracket ``(low, high)`` around the root.
    reason : str
        Empty when converged; otherwise why not.
    """

    root: float
    converged: bool
    iterations: int
    bracket: tuple[float, float]
    reason: str = ""


def solve_monotone(
    func: Callable[[float], float],
    *,
    low: float,
    high: float,
    lower_limit: float = -math.inf,
    upper_limit: float = math.inf,
    side: str = "low",
    xtol: float = XTOL,
    rtol: float = RTOL,
    log_scale: bool = False,
) -> SolveResult:
    """Find x with func(x) = 0 for a monotone ``func``.

    Parameters
    ----------
    func : callable
        Monotone (either direction) function of one float.
    low, high : float
        Initial guess of a bracket. It is expanded (geometrically when ``log_scale``, by
        doubling the width otherwise) until the sign of ``func`` changes, within
        ``[lower_limit, upper_limit]``.
    side : {"low", "high"}
        Which end of the final bracket to return: the one that is safe for the caller.
    log_scale : bool
        Expand and solve in log(x) (for positive x spanning many orders of magnitude).

    Returns
    -------
    SolveResult

    Examples
    --------
    >>> r = solve_monotone(lambda x: x * x - 2.0, low=1.0, high=2.0, side="high")
    >>> round(r.root, 9), r.converged
    (1.414213562, True)
    """
    if side not in ("low", "high"):
        raise ValueError(f"side must be 'low' or 'high', got {side!r}")
    count = 0

    def g(x: float) -> float:
        nonlocal count
        count += 1
        return func(math.exp(x) if log_scale else x)

    to_t = (lambda x: math.log(x)) if log_scale else (lambda x: x)
    from_t = (lambda t: math.exp(t)) if log_scale else (lambda t: t)
    lo_lim = to_t(lower_limit) if not (log_scale and lower_limit <= 0) else -math.inf
    hi_lim = to_t(upper_limit) if math.isfinite(upper_limit) or not log_scale else math.inf
    a, b = to_t(low), to_t(high)
    fa, fb = g(a), g(b)
    expansions = 0
    while fa * fb > 0 and expansions < MAX_EXPANSIONS:
        expansions += 1
        width = max(b - a, 1e-3)
        # expand past the end whose value is smaller in magnitude (nearer the root), within the limits
        if abs(fa) < abs(fb) and a > lo_lim:
            a = max(a - width, lo_lim)
            fa = g(a)
        elif b < hi_lim:
            b = min(b + width, hi_lim)
            fb = g(b)
        elif a > lo_lim:
            a = max(a - width, lo_lim)
            fa = g(a)
        else:
            break
    if fa == 0.0:
        return SolveResult(from_t(a), True, count, (from_t(a), from_t(a)))
    if fb == 0.0:
        return SolveResult(from_t(b), True, count, (from_t(b), from_t(b)))
    if not fa * fb < 0:  # no sign change, or a NaN at an end (brentq raised a bare ValueError on it)
        return SolveResult(
            math.nan,
            False,
            count,
            (from_t(a), from_t(b)),
            "no sign change found: the target is not reachable in the allowed range",
        )
    root, info = optimize.brentq(g, a, b, xtol=xtol, rtol=max(rtol, 4.5e-16), full_output=True)
    # Brent returns a point within xtol of the root; step to the safe side of it.
    step = xtol + rtol * abs(root)
    lo_t, hi_t = root - step, root + step
    lo_t, hi_t = max(lo_t, min(a, b)), min(hi_t, max(a, b))
    safe = lo_t if side == "low" else hi_t
    return SolveResult(
        from_t(safe), bool(info.converged), count, (from_t(lo_t), from_t(hi_t)),
        "" if info.converged else str(info.flag),
    )
