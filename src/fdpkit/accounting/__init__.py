"""Mechanisms -> numeric curves. The only package that imports dp_accounting."""

from fdpkit.accounting.curve import (
    DISCRETIZATION_DEFAULT,
    Accounting,
    account,
    closed_form_curve,
    curve_from_pld,
    tradeoff_curve,
)

__all__ = [
    "DISCRETIZATION_DEFAULT",
    "Accounting",
    "account",
    "closed_form_curve",
    "curve_from_pld",
    "tradeoff_curve",
]
