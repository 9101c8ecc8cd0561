"""The one validator of the curves the risk readings take (a private module of ``risk/``).

Every risk reading states how well an attack can do at most, so it must be read from a
curve that is exact or a lower bound: an upper-bound (optimistic) curve would understate
the risk and is refused. The advantage and the Bayes risk (:mod:`fdpkit.risk.bayes`) are
summaries of any curve and accept upper bounds too (``sound=False``).
"""

from __future__ import annotations

from typing import Any

from fdpkit.curves import TradeOffCurve


def check_risk_curve(curve: Any, name: str = "curve", *, sound: bool = True) -> TradeOffCurve:
    """Return ``curve`` if it is a :class:`TradeOffCurve` (and, with ``sound``, not an upper
    bound); else raise ``ValueError`` naming the argument ``name``."""
    if not isinstance(curve, TradeOffCurve):
        raise ValueError(f"{name} must be a TradeOffCurve, got {type(curve).__name__}")
    if sound and curve.bound == "upper":
        raise ValueError(
            f"{name}.bound is 'upper': risk read from an optimistic curve would understate it"
        )
    return curve
