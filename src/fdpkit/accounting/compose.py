"""Composition of arbitrary trade-off curves (Dong, Roth & Su 2022, Sec. 3).

Each curve becomes a pessimistic privacy loss distribution (derivation in
:mod:`fdpkit.accounting.from_curve`), dp_accounting composes the distributions, and the
composed distribution's certified curve (:func:`fdpkit.accounting.pld_curve.curve_from_pld`)
is returned: a lower bound of the composed curve and of its inverse.
"""

from __future__ import annotations

from fdpkit.accounting import _pld_adapter as _adapter
from fdpkit.accounting.pld_curve import curve_from_pld
from fdpkit.accounting.result import DISCRETIZATION_DEFAULT, check_discretization
from fdpkit.accounting.from_curve import _check_curve, pld_from_curve
from fdpkit.accounting.pld import TAIL_MASS_TRUNCATION
from fdpkit.curves import PiecewiseLinearCurve, TradeOffCurve


def compose_curves(*curves: TradeOffCurve, discretization: float = DISCRETIZATION_DEFAULT
                   ) -> PiecewiseLinearCurve:
    """A lower bound of the composition f₁ ⊗ … ⊗ fₖ of trade-off curves.

    Each curve becomes a pessimistic privacy loss distribution on a grid of width
    ``discretization`` (connect-the-dots from its privacy profile, both orderings of the
    neighbouring pair; see the module docs), dp_accounting composes them, and the composed
    distribution's certified curve is returned (Dong, Roth & Su 2022, Thm. 3.2: the
    composition of fᵢ-DP mechanisms is (f₁ ⊗ … ⊗ fₖ)-DP).

    Parameters
    ----------
    *curves : TradeOffCurve
        One or more curves, exact or lower bounds (any source: closed forms, numeric
        accountants, published curves as :class:`PiecewiseLinearCurve`).
    discretization : float, default 1e-4
        Width of the privacy-loss grid, in [1e-6, 1]. Smaller is tighter and slower.

    Returns
    -------
    PiecewiseLinearCurve
        ``bound="lower"``: at or below the composition's true curve (and its inverse).

    Examples
    --------
    >>> from fdpkit import GaussianCurve, compose_curves
    >>> f = compose_curves(GaussianCurve(0.6), GaussianCurve(0.8), discretization=1e-3)
    >>> f.bound, bool(f.beta(0.1) <= GaussianCurve(1.0).beta(0.1))
    ('lower', True)
    """
    if not curves:
        raise ValueError("compose_curves needs at least one curve, got none")
    for i, c in enumerate(curves):
        _check_curve(f"curves[{i}]", c)
    d = check_discretization(discretization)
    plds = [pld_from_curve(c, d) for c in curves]
    out = plds[0]
    for p in plds[1:]:
        out = _adapter.compose(out, p, TAIL_MASS_TRUNCATION)
    return curve_from_pld(out)
