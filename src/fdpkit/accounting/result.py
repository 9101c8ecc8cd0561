"""What accounting returns, and the discretization it runs at.

:class:`Accounting` holds a mechanism's curve and privacy profile with how they were
obtained (closed form, PLD or RDP); the discretization constants are the PLD grid's
default and allowed range, shared by the accountant, the cost model and their callers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fdpkit.errors import ParameterError
from fdpkit._numerics import check_nonnegative, check_probability, check_scalar
from fdpkit.accounting._pld_adapter import as_dp_accounting
from fdpkit.accounting.profile import PldProfile
from fdpkit.curves import TradeOffCurve
from fdpkit.mechanisms import Mechanism

#: Default value_discretization_interval of the PLD (dp_accounting's default, Gomez et al.).
DISCRETIZATION_DEFAULT = 1e-4
#: Allowed range of the discretization interval.
DISCRETIZATION_RANGE = (1e-8, 1.0)


def check_discretization(discretization: Any) -> float:
    """``discretization`` as a float in :data:`DISCRETIZATION_RANGE` (a ValueError naming it otherwise)."""
    d = check_scalar("discretization", discretization)
    lo, hi = DISCRETIZATION_RANGE
    if not (lo <= d <= hi):
        raise ParameterError(f"discretization must be in [{lo:g}, {hi:g}], got {discretization!r}", "discretization")
    return d


@dataclass(frozen=True)
class Accounting:
    """A mechanism's curve and privacy profile, with how they were obtained.

    Attributes
    ----------
    mechanism : Mechanism
    curve : TradeOffCurve
        Exact (closed form) or a pessimistic lower bound (PLD).
    method : str
        ``"closed form"`` or ``"PLD"``.
    discretization : float or None
        The PLD's value discretization interval (None for closed forms).
    pld : object or None
        The dp_accounting PrivacyLossDistribution behind a numeric curve. fdpkit builds it
        with NumPy and makes dp_accounting's object of it on first access of this attribute
        (then the same object on every access), so that accounting does not import
        dp_accounting where it does not use it.
    """

    mechanism: Mechanism
    curve: TradeOffCurve
    method: str
    discretization: float | None
    pld: Any = field(default=None, repr=False)

    def epsilon_for_delta(self, delta: float) -> float:
        """ε at δ from the accountant's own profile (closed forms: exact)."""
        delta = float(check_probability("delta", check_scalar("delta", delta)))
        held = self.__dict__.get("pld")  # the arrays: no dp_accounting object needed
        if held is not None:
            if "_profile" not in self.__dict__:
                object.__setattr__(self, "_profile", PldProfile(held))
            return self.__dict__["_profile"].epsilon_for_delta(delta)
        return float(self.curve.epsilon_for_delta(delta))

    def delta_for_epsilon(self, epsilon: float) -> float:
        """δ at ε from the accountant's own profile (closed forms: exact)."""
        epsilon = float(check_nonnegative("epsilon", check_scalar("epsilon", epsilon), allow_inf=True))
        if self.__dict__.get("pld") is not None:  # dp_accounting's own sum, as before
            return float(self.pld.get_delta_for_epsilon(epsilon))
        return float(self.curve.delta_for_epsilon(epsilon))


class _DpAccountingOnRead:
    """:attr:`Accounting.pld`: holds what the accountant passed (a
    :class:`~fdpkit.accounting._pld_adapter.NativePld`, dp_accounting's object or None) in
    the instance ``__dict__`` and reads it as dp_accounting's object, built on first read
    and kept (a data descriptor, so reads and the dataclass ``__init__`` come here)."""

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return None  # the field's default, as the class attribute read before
        held = obj.__dict__.get("pld")
        pld = as_dp_accounting(held)
        if pld is not held:
            obj.__dict__["pld"] = pld
        return pld

    def __set__(self, obj: Any, value: Any) -> None:  # __init__ only: the dataclass is frozen
        obj.__dict__["pld"] = value


# after @dataclass, which took the field's default (None) from the class attribute
Accounting.pld = _DpAccountingOnRead()  # type: ignore[assignment]


__all__ = ["DISCRETIZATION_DEFAULT", "DISCRETIZATION_RANGE", "Accounting", "check_discretization"]
