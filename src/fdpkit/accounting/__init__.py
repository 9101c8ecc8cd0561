"""Mechanisms -> numeric curves. The only package that imports dp_accounting."""

from fdpkit.accounting.curve import (
    DISCRETIZATION_DEFAULT,
    Accounting,
    account,
    closed_form_curve,
    curve_from_pld,
    tradeoff_curve,
)
from fdpkit.accounting.cost import BudgetExceeded, CostBudget, CostEstimate, estimate_cost

__all__ = [
    "DISCRETIZATION_DEFAULT",
    "Accounting",
    "BudgetExceeded",
    "CostBudget",
    "CostEstimate",
    "account",
    "closed_form_curve",
    "curve_from_pld",
    "estimate_cost",
    "tradeoff_curve",
]
