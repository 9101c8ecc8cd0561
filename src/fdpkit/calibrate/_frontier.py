"""Where a calibration search meets its cost budget.

A candidate of :func:`fdpkit.calibrate_dpsgd`'s search whose accounting run the cost budget
refuses (:class:`fdpkit.accounting.BudgetExceeded`: typically a tiny noise multiplier, whose
privacy-loss grid is huge) does not end the search: :meth:`CostFrontier.retreat` moves to the
safe side (more noise, a smaller sample rate or batch, fewer steps: the cheap side too) and
returns the value closest to the refused one that the budget allows, found by bisection on
the cost estimate alone (no accounting run). The search goes on from there; only an answer
that lies beyond what the budget allows (:func:`answer_beyond`) is a budget error.
"""

from __future__ import annotations

import math
from typing import Any, Callable

#: The reason given with a safe value returned at the edge of what the budget allows.
BUDGET_NOTE = ("{side} values of {unknown} need more than the cost budget allows ({why}); the value returned is the "
               "closest to them that meets the target, and may not be the tightest: pass a larger budget= for a "
               "tighter one")


class CostFrontier:
    """The values a search found affordable or refused, per discretization, and the retreat
    from a refused one to the closest affordable value on the safe side.

    Parameters
    ----------
    problem : object
        The search's one-unknown family (``lo``, ``hi``, ``integer``, ``increasing``,
        ``clamp``): the safe side is smaller values when ``increasing``, larger otherwise.
    affordable : callable
        ``affordable(x, d)``: whether the budget allows the accounting run at ``x`` and
        discretization key ``d`` (a cost estimate, no accounting).
    rtol : float
        Relative precision of the edge (continuous unknowns; whole ones to 1).
    """

    def __init__(self, problem: Any, affordable: Callable[[float, Any], bool], rtol: float) -> None:
        self.p = problem
        self.affordable = affordable
        self.rtol = rtol
        self.most = problem.lo if problem.increasing else problem.hi
        self.seen: dict[tuple[float, Any], bool] = {}

    def _ok(self, x: float, d: Any) -> bool:
        key = (x, d)
        if key not in self.seen:
            self.seen[key] = self.affordable(x, d)
        return self.seen[key]

    def _safer(self, a: float, b: float) -> bool:
        """Whether ``a`` lies strictly on the safe side of ``b``."""
        return a < b if self.p.increasing else a > b

    def _toward_safe(self, x: float, factor: float) -> float:
        return self.p.clamp(x / factor if self.p.increasing else x * factor)

    def _apart(self, bad: float, ok: float) -> bool:
        if self.p.integer:
            return abs(bad - ok) > 1
        return abs(math.log(bad / ok)) > self.rtol

    def retreat(self, x: float, d: Any, refusal: Exception) -> float:
        """The affordable value closest to the refused ``x`` on its safe side (within
        ``rtol``; whole unknowns: the next whole value).

        Raises
        ------
        BudgetExceeded
            ``refusal``, when even the safe end of the search's range is refused.
        """
        bad = float(round(x)) if self.p.integer else x
        self.seen[(bad, d)] = False
        if bad == self.most:
            raise refusal
        # the nearest value known on either side, else steps growing by factors 2, 4, 16, ...
        oks = [v for (v, k), fine in self.seen.items() if k == d and fine and self._safer(v, bad)]
        bads = [v for (v, k), fine in self.seen.items() if k == d and not fine and self._safer(v, bad)]
        if oks:
            ok = max(oks) if self.p.increasing else min(oks)
        else:
            factor, ok = 2.0, self._toward_safe(bad, 2.0)
            while not self._ok(ok, d):
                if ok == self.most:
                    raise refusal
                bad, factor = ok, factor * factor
                ok = self._toward_safe(ok, factor)
        closer = [v for v in bads if self._safer(v, bad) and self._safer(ok, v)]
        if closer:
            bad = min(closer) if self.p.increasing else max(closer)
        while self._apart(bad, ok):  # bisection in log x on the cost estimate
            mid = math.sqrt(bad * ok)
            if self.p.integer:
                low, high = sorted((bad, ok))
                mid = min(high - 1.0, max(low + 1.0, float(math.floor(mid))))
            if self._ok(mid, d):
                ok = mid
            else:
                bad = mid
        return ok


def answer_beyond(gap: float, x: float, least: float, slope: float) -> bool:
    """Whether the search's log-log slope puts the target's boundary between ``x`` (a safe
    value at the edge of the budget, ``gap`` = log(metric / target) <= 0 there) and the least
    private end ``least`` of the range, i.e. the answer needs more than the budget allows;
    False where the target is estimated to hold all the way (the edge value is then returned,
    flagged)."""
    return gap + slope * (math.log(least) - math.log(x)) > 0


def budget_note(problem: Any, refusal: Exception) -> str:
    """The reason returned with a safe value at the budget's edge (``problem`` as for
    :class:`CostFrontier`; ``refusal`` the budget's refusal of a value past it)."""
    side = "larger" if problem.increasing else "smaller"
    return BUDGET_NOTE.format(side=side, unknown=problem.unknown, why=refusal)
