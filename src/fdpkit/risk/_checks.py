"""The one check of the curves the risk readings take (a private module of ``risk/``): the
package's curve contract, :func:`fdpkit.curves.check_curve`, with optimistic curves refused.

Every risk reading states how well an attack can do at most, so it must be read from a
curve that is exact or a lower bound: an upper-bound (optimistic) curve would understate
the risk and is refused. The advantage and the Bayes risk (:mod:`fdpkit.risk.bayes`) are
summaries of any curve and accept upper bounds too (``sound=False``).
"""

from __future__ import annotations

from typing import Any

from fdpkit.curves import TradeOffCurve, check_curve

#: Why an upper-bound curve is refused (the end of the ValueError's message).
UPPER_REFUSED = "risk read from an optimistic curve would understate it"


def check_risk_curve(curve: Any, name: str = "curve", *, sound: bool = True) -> TradeOffCurve:
    """Return ``curve`` if it is a :class:`TradeOffCurve` (and, with ``sound``, not an upper
    bound); else raise ``ValueError`` naming the argument ``name``."""
    return check_curve(curve, name, upper=UPPER_REFUSED if sound else None)
