"""Mechanisms -> numeric curves. The only package that imports dp_accounting."""

from fdpkit.accounting.curve import (
    DISCRETIZATION_DEFAULT,
    Accounting,
    closed_form_curve,
    curve_from_pld,
)
from fdpkit.accounting.dpsgd import account, group_curve, poisson_comparison, tradeoff_curve

__all__ = [
    "DISCRETIZATION_DEFAULT",
    "Accounting",
    "account",
    "closed_form_curve",
    "curve_from_pld",
    "group_curve",
    "poisson_comparison",
    "tradeoff_curve",
]
