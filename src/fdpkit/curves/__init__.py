"""Trade-off curves: the core maths of fdpkit (no I/O, no plots, no accountants)."""

from fdpkit.curves.base import CurveGrid, TradeOffCurve, check_curve, register_operation
from fdpkit.curves.combine import EnvelopeCurve, envelope, worst_case
from fdpkit.curves.epsdelta import EpsDeltaCurve, RandomizedResponseCurve, UniformSamplingCurve
from fdpkit.curves.gaussian import GaussianCurve
from fdpkit.curves.group import group_curve
from fdpkit.curves.laplace import LaplaceCurve
from fdpkit.curves.lower_bound import piecewise_lower_bound
from fdpkit.curves.piecewise import PiecewiseLinearCurve
from fdpkit.curves.points import curve_from_points
from fdpkit.curves.renyi import RDPCurve, ZCDPCurve

# operations of the base class that need its subclasses (base.py never imports them)
register_operation("piecewise_lower_bound", piecewise_lower_bound)
register_operation("worst_case", worst_case)

__all__ = [
    "CurveGrid",
    "EnvelopeCurve",
    "EpsDeltaCurve",
    "GaussianCurve",
    "LaplaceCurve",
    "PiecewiseLinearCurve",
    "RDPCurve",
    "RandomizedResponseCurve",
    "TradeOffCurve",
    "UniformSamplingCurve",
    "ZCDPCurve",
    "check_curve",
    "curve_from_points",
    "envelope",
    "group_curve",
    "piecewise_lower_bound",
    "worst_case",
]

from fdpkit.curves import _repr as _repr  # noqa: E402

TradeOffCurve._repr_html_ = _repr.curve_html  # notebook card (see curves/_repr.py)
