"""Rényi-family guarantees as value objects: rho-zCDP and a finite RDP list.

Users often arrive with a guarantee rather than a mechanism: Opacus and TF Privacy print
(order, epsilon) pairs from their RDP accountants, and Tumult Analytics and the US Census
TopDown release state rho-zCDP budgets. ``ZCDP`` and ``RDP`` describe such a guarantee
(the worst case over every mechanism that satisfies it) and can be used wherever a
mechanism is: curves, reports, specs, composition. They hold no algorithm; the curves are
in :mod:`fdpkit.curves.renyi` and the accounting in :mod:`fdpkit.accounting.rdp`.
"""

from __future__ import annotations

from dataclasses import dataclass

from fdpkit.curves.renyi import check_rdp, check_rho
from fdpkit.mechanisms.base import Mechanism


@dataclass(frozen=True)
class ZCDP(Mechanism):
    """Any ρ-zCDP mechanism: (t, ρ t)-RDP for every order t > 1 (Bun & Steinke 2016;
    Gomez et al. Def. 2.2). A Gaussian mechanism with μ = √(2 ρ) is exactly ρ-zCDP.

    Examples
    --------
    >>> ZCDP(0.5).to_dict()
    {'kind': 'zcdp', 'rho': 0.5}
    >>> ZCDP(-1)
    Traceback (most recent call last):
    ...
    fdpkit.errors.ParameterError: rho must be >= 0, got -1.0
    """

    kind = "zcdp"
    unbounded_loss = True
    rho: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "rho", check_rho(self.rho))

    def label(self) -> str:
        """A short name for reports, tables and plot legends."""
        return f"ρ = {self.rho:g} zCDP"


@dataclass(frozen=True)
class RDP(Mechanism):
    """Any mechanism satisfying (tⱼ, εⱼ)-RDP for every listed pair, for both orderings
    of every pair of neighbouring datasets (Mironov 2017; as RDP accountants print them).

    Parameters
    ----------
    orders : sequence of float
        Rényi orders tⱼ > 1, distinct (stored sorted).
    epsilons : sequence of float
        ε(tⱼ) ≥ 0, non-decreasing in the order (``inf`` allowed: no constraint).

    Examples
    --------
    >>> RDP([2, 4], [0.1, 0.3]).to_dict()
    {'kind': 'rdp', 'orders': [2.0, 4.0], 'epsilons': [0.1, 0.3]}
    >>> RDP([2, 4], [0.3, 0.1])
    Traceback (most recent call last):
    ...
    ValueError: epsilons must be non-decreasing in the order (Rényi divergence grows with t), got eps(2) = 0.3 > eps(4) = 0.1
    """

    kind = "rdp"
    unbounded_loss = True
    orders: tuple
    epsilons: tuple

    def __post_init__(self) -> None:
        o, e = check_rdp(self.orders, self.epsilons)
        object.__setattr__(self, "orders", tuple(float(x) for x in o))
        object.__setattr__(self, "epsilons", tuple(float(x) for x in e))

    def to_dict(self) -> dict:
        """The object as JSON-ready data (dicts, lists, numbers and strings)."""
        return {"kind": self.kind, "orders": list(self.orders), "epsilons": list(self.epsilons)}

    def label(self) -> str:
        """A short name for reports, tables and plot legends."""
        return f"RDP at {len(self.orders)} orders ({self.orders[0]:g} to {self.orders[-1]:g})"

    def describe(self) -> str:
        """A one-line human-readable description (used in reports)."""
        pairs = ", ".join(f"({t:g}, {e:.4g})" for t, e in zip(self.orders[:4], self.epsilons[:4]))
        more = f", ... ({len(self.orders)} pairs)" if len(self.orders) > 4 else ""
        return f"RDP(orders, epsilons = {pairs}{more})"
