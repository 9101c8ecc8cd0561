"""Mechanisms known by their trade-off curve only, and de Fondeville's uniform sampling.

``CurveMechanism`` is a mechanism whose guarantee is a piecewise-linear f-DP curve (a
published curve, the output of another accountant, a curve fdpkit computed earlier). It
composes with every other mechanism: the accountant turns the curve into a pessimistic
privacy loss distribution (``fdpkit.accounting.from_curve``). Specs:
``{"kind": "curve", "alpha": [...], "tpr": [...], "bound": "lower"}`` (vertices, FPR and
TPR = 1 - beta).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from fdpkit._numerics import _short
from fdpkit.curves import check_curve
from fdpkit.errors import ParameterError
from fdpkit.curves.piecewise import MAX_VERTICES as _CURVE_MAX_VERTICES
from fdpkit.mechanisms.base import Mechanism, _number

#: Largest number of vertices a curve mechanism may carry (keeps specs and reports sane): the
#: cap of :class:`fdpkit.PiecewiseLinearCurve` on given vertices, 200,001, which accounts it.
MAX_VERTICES = _CURVE_MAX_VERTICES


def _floats(name: str, values: Any) -> tuple[float, ...]:
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__") or getattr(values, "ndim", 1) == 0:
        raise ParameterError(f"{name} must be a list of numbers, got {_short(values)}", name)
    out = tuple(_number(f"{name}[{i}]", v) for i, v in enumerate(values))
    if not 2 <= len(out) <= MAX_VERTICES:
        raise ParameterError(f"{name} must have between 2 and {MAX_VERTICES} entries, got {len(out)}", name)
    return out


@dataclass(frozen=True)
class CurveMechanism(Mechanism):
    """A mechanism given by a piecewise-linear trade-off curve (its vertices).

    Parameters
    ----------
    alpha : sequence of float
        Vertex false-positive rates, from 0 to 1.
    tpr : sequence of float
        Vertex true-positive rates 1 - β.
    bound : {"exact", "lower"}, default "lower"
        The curve is the mechanism's exact curve or a lower bound of it (an optimistic
        "upper" curve certifies nothing and is refused).

    Notes
    -----
    The vertices are checked like any :class:`fdpkit.PiecewiseLinearCurve` when the
    mechanism is accounted. Use :meth:`from_curve` to wrap any fdpkit curve.

    Examples
    --------
    >>> m = CurveMechanism([0, 0.2, 1], [0, 0.6, 1])
    >>> m.to_dict()["kind"], m.describe()
    ('curve', 'f-DP curve (3 vertices, lower bound)')
    """

    kind = "curve"
    alpha: tuple
    tpr: tuple
    bound: str = "lower"

    def __post_init__(self) -> None:
        a, t = _floats("alpha", self.alpha), _floats("tpr", self.tpr)
        if len(a) != len(t):
            raise ParameterError(f"alpha and tpr must have the same length, got {len(a)} and {len(t)}", "tpr", ("alpha", "tpr"))
        if self.bound not in ("exact", "lower"):
            raise ParameterError(f"bound must be 'exact' or 'lower', got {self.bound!r}", "bound")
        object.__setattr__(self, "alpha", a)
        object.__setattr__(self, "tpr", t)

    @classmethod
    def from_curve(cls, curve: Any) -> "CurveMechanism":
        """Wrap a trade-off curve: its sound piecewise-linear lower bound's vertices."""
        check_curve(curve, "curve", upper="it certifies nothing")
        pl = curve.to_piecewise()
        bound = "exact" if pl.bound == "exact" else "lower"
        return cls(tuple(float(x) for x in pl.alphas), tuple(float(x) for x in pl.tprs), bound)

    def describe(self) -> str:
        """A one-line human-readable description (used in reports)."""
        word = "exact" if self.bound == "exact" else "lower bound"
        return f"f-DP curve ({len(self.alpha)} vertices, {word})"


@dataclass(frozen=True)
class UniformSampling(Mechanism):
    """De Fondeville's uniform random sampling (Example 3): with probability e^−μ release
    a constant, otherwise one record of the n-record dataset chosen uniformly at random.

    Each record is released verbatim with probability p = (1 − e^−μ)/n, so the mechanism
    is (0, p)-DP and nothing better: with probability p an output identifies membership
    with certainty. It is the worked example of *catastrophic failure* (de Fondeville,
    Thm. 1): f(0) = 1 - p < 1, no finite μ-GDP holds.

    Parameters
    ----------
    mu : float
        De Fondeville's privacy parameter (> 0; not a GDP μ).
    n : int
        Dataset size (≥ 1).

    Examples
    --------
    >>> UniformSampling(1.0, 5).describe()
    'Uniform random sampling (de Fondeville Ex. 3; sampling parameter 1, not a GDP μ; n=5)'
    """

    kind = "uniform-sampling"
    mu: float
    n: int

    def __post_init__(self) -> None:
        mu = _number("mu", self.mu, positive=True, allow_zero=False)
        n = _number("n", self.n, positive=True, allow_zero=False)
        if n != int(n):
            raise ParameterError(f"n must be a positive integer, got {self.n!r}", "n")
        object.__setattr__(self, "mu", mu)
        object.__setattr__(self, "n", int(n))

    @property
    def disclosure_probability(self) -> float:
        """p = (1 − e^−μ)/n: the probability that the target's record is released."""
        return -math.expm1(-self.mu) / self.n

    def describe(self) -> str:
        """A one-line human-readable description (used in reports): the sampling parameter is
        named in words, since the report's headline beside it reads "μ = ∞ Gaussian DP"."""
        return f"Uniform random sampling (de Fondeville Ex. 3; sampling parameter {self.mu:g}, not a GDP μ; n={self.n})"
