"""Combinators: Poisson subsampling, composition, repetition."""

from __future__ import annotations

from dataclasses import dataclass

from fdpkit.errors import ParameterError
from fdpkit.mechanisms.base import Mechanism, _number, check_sample_rate_normal
from fdpkit.mechanisms.basic import Gaussian

#: Largest number of repetitions accepted (beyond it accounting is impractical).
MAX_TIMES = 10**7


@dataclass(frozen=True)
class Subsampled(Mechanism):
    """``inner`` applied to a Poisson subsample: each record is included independently with
    probability ``sample_rate`` (add-remove adjacency).

    Examples
    --------
    One step of DP-SGD (noise multiplier 1, sample rate 0.01), repeated 1000 times;
    :func:`fdpkit.dpsgd` builds the same from training terms:

    >>> from fdpkit import Gaussian, Repeated, Subsampled, privacy_report
    >>> step = Subsampled(Gaussian(sigma=1.0), sample_rate=0.01)
    >>> round(privacy_report(Repeated(step, 1000), discretization=1e-3).mu, 2)
    0.52
    """

    kind = "subsampled"
    inner: Mechanism
    sample_rate: float

    def __post_init__(self) -> None:
        if not isinstance(self.inner, Mechanism):
            raise ParameterError(f"inner must be a mechanism, got {type(self.inner).__name__}", "inner")
        q = _number("sample_rate", self.sample_rate, positive=True, allow_zero=False)
        if q > 1:
            raise ParameterError(f"sample_rate must be in (0, 1], got {self.sample_rate!r}", "sample_rate")
        check_sample_rate_normal(q)
        object.__setattr__(self, "sample_rate", q)

    def children(self) -> tuple[Mechanism, ...]:
        """``(inner,)``."""
        return (self.inner,)


@dataclass(frozen=True)
class Composed(Mechanism):
    """Adaptive composition of ``parts`` (each may itself be composed).

    Examples
    --------
    >>> from fdpkit import Composed, Gaussian, tradeoff_curve
    >>> tradeoff_curve(Composed([Gaussian(sigma=2.0), Gaussian(sigma=2.0)]))  # μ = √(0.5² + 0.5²)
    GaussianCurve(mu=0.7071067811865476)
    """

    kind = "composed"
    parts: tuple

    def __post_init__(self) -> None:
        parts = tuple(self.parts) if isinstance(self.parts, (list, tuple)) else None
        if not parts:
            raise ParameterError(f"parts must be a non-empty list of mechanisms, got {self.parts!r}", "parts")
        for i, p in enumerate(parts):
            if not isinstance(p, Mechanism):
                raise ParameterError(f"parts[{i}] must be a mechanism, got {type(p).__name__}", "parts")
        object.__setattr__(self, "parts", parts)

    def children(self) -> tuple[Mechanism, ...]:
        """The parts."""
        return self.parts


@dataclass(frozen=True)
class Repeated(Mechanism):
    """``inner`` run ``times`` times (adaptive composition of identical steps).

    Examples
    --------
    >>> from fdpkit import Gaussian, Repeated, tradeoff_curve
    >>> tradeoff_curve(Repeated(Gaussian(sigma=2.0), times=4))  # μ = √4 · 0.5
    GaussianCurve(mu=1.0)
    """

    kind = "repeated"
    inner: Mechanism
    times: int

    def label(self) -> str:
        """A short name for reports, tables and plot legends."""
        inner = self.inner
        if isinstance(inner, Subsampled) and isinstance(inner.inner, Gaussian) and inner.inner.sensitivity == 1.0:
            return (f"DP-SGD (noise multiplier {inner.inner.sigma:g}, sample rate {inner.sample_rate:g}, "
                    f"{self.times} steps)")
        return f"{self.times} x {inner.label()}"

    def __post_init__(self) -> None:
        if not isinstance(self.inner, Mechanism):
            raise ParameterError(f"inner must be a mechanism, got {type(self.inner).__name__}", "inner")
        t = _number("times", self.times, positive=True, allow_zero=False, upper=MAX_TIMES)
        if t != int(t):
            raise ParameterError(f"times must be a positive integer, got {self.times!r}", "times")
        object.__setattr__(self, "times", int(t))

    def children(self) -> tuple[Mechanism, ...]:
        """``(inner,)`` (run ``times`` times: :func:`fdpkit.mechanisms.walk` multiplies)."""
        return (self.inner,)
