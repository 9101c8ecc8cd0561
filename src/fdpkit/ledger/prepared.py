"""A mechanism made ready for the ledger before any transaction: parsed, refused over its
cost budget or when it cannot be composed, accounted alone; the digest that binds a
composed state to its releases (the approval record: :mod:`fdpkit.ledger.record`)."""

from __future__ import annotations

import functools
import hashlib
import math
from dataclasses import dataclass, field
from typing import Any

from fdpkit.accounting import RUNNING_DISCRETIZATION, Composition, CostBudget, estimate_cost, gaussian_mu
from fdpkit.convert import epsilon_for_delta_from_mu
from fdpkit.ledger.chain import canonical
from fdpkit.ledger.rules import LedgerError
from fdpkit.ledger.totals import DELTA_REF
from fdpkit.mechanisms import Mechanism, mechanism_from_dict, mechanism_from_json

#: The cost budget of check / propose / record (as :func:`fdpkit.privacy_report`'s ``budget``).
DEFAULT_BUDGET = CostBudget()


def parse_mechanism(mechanism: Any) -> Mechanism:
    """A mechanism from a Mechanism, a spec dict or JSON text (the CLI/web specs)."""
    try:
        if isinstance(mechanism, (str, bytes)):
            return mechanism_from_json(mechanism)
        return mechanism_from_dict(mechanism)
    except ValueError as exc:
        raise LedgerError(str(exc)) from None


@dataclass(frozen=True)
class Prepared:
    """A mechanism checked and accounted before any transaction."""

    mechanism: Mechanism
    spec: str
    gaussian_mu: float | None
    epsilon_ref: float
    #: the mechanism's own composition state (None for the Gaussian family)
    alone: Composition | None = field(default=None, repr=False)

    def after(self, state: Composition) -> Composition:
        """``state`` followed by this mechanism (one composition at most)."""
        if self.alone is None:
            return Composition(state.count + 1, state.gaussian_mu_sq + self.gaussian_mu ** 2, state.pld,
                               state.discretization)
        return state.merge(self.alone)


@functools.lru_cache(maxsize=256)
def _gdp_epsilon_ref(mu: float) -> float:
    return float(epsilon_for_delta_from_mu(mu, DELTA_REF))


def prepare(mechanism: Any, budget: CostBudget | None = DEFAULT_BUDGET) -> Prepared:
    """Parse and account a mechanism (its exact mu if Gaussian-family, its own epsilon at
    delta = 1e-5) before any transaction, refusing it first when its accounting would be
    over ``budget`` (None: no limit), and refusing one that cannot be composed with
    others (all of its privacy loss infinite, e.g. delta = 1): nothing that breaks the
    accounting of a total enters the ledger."""
    mech = parse_mechanism(mechanism)
    mu = gaussian_mu(mech)
    alone = None
    try:
        if budget is not None:
            estimate_cost(mech, RUNNING_DISCRETIZATION).check(budget)
        if mu is not None:
            eps = _gdp_epsilon_ref(mu)
        else:
            alone = Composition.empty().add([mech])
            eps = alone.epsilon_for_delta(DELTA_REF)
            if not math.isfinite(eps):  # infinite loss beyond delta: try one composition with a Gaussian
                Composition(1, 1.0, None, alone.discretization).merge(alone).epsilon_for_delta(DELTA_REF)
    except ValueError as exc:
        raise LedgerError(f"mechanism cannot be accounted: {exc}") from None
    except (IndexError, ArithmeticError, MemoryError):
        raise LedgerError("mechanism cannot be composed with other releases: its privacy loss is "
                          "infinite (or out of range) with too much probability") from None
    return Prepared(mech, canonical(mech.to_dict()), mu, eps, alone)


def state_digest(ids: list[int], epsilon_sum: float, state: bytes) -> str:
    """SHA-256 binding a composed state to the releases it composes (recorded in the chain
    by every ``release.released`` event; the cache is trusted only when it matches)."""
    head = canonical({"ids": sorted(int(i) for i in ids), "epsilon_sum": float(epsilon_sum)})
    return hashlib.sha256(head.encode("utf-8") + b"\0" + state).hexdigest()
