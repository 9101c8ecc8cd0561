"""Combinators: Poisson subsampling, composition, repetition; and the DP-SGD shorthand."""

from __future__ import annotations

from dataclasses import dataclass

from fdpkit.mechanisms.base import Mechanism, _number
from fdpkit.mechanisms.basic import Gaussian

#: Largest number of repetitions accepted (beyond it accounting is impractical).
MAX_TIMES = 10**7


@dataclass(frozen=True)
class Subsampled(Mechanism):
    """``inner`` applied to a Poisson subsample: each record is included independently with
    probability ``sample_rate`` (add-or-remove adjacency)."""

    kind = "subsampled"
    inner: Mechanism
    sample_rate: float

    def __post_init__(self) -> None:
        if not isinstance(self.inner, Mechanism):
            raise ValueError(f"inner must be a mechanism, got {type(self.inner).__name__}")
        q = _number("sample_rate", self.sample_rate, positive=True, allow_zero=False)
        if q > 1:
            raise ValueError(f"sample_rate must be in (0, 1], got {self.sample_rate!r}")
        object.__setattr__(self, "sample_rate", q)


@dataclass(frozen=True)
class Composed(Mechanism):
    """Adaptive composition of ``parts`` (each may itself be composed)."""

    kind = "composed"
    parts: tuple

    def __post_init__(self) -> None:
        parts = tuple(self.parts) if isinstance(self.parts, (list, tuple)) else None
        if not parts:
            raise ValueError(f"parts must be a non-empty list of mechanisms, got {self.parts!r}")
        for i, p in enumerate(parts):
            if not isinstance(p, Mechanism):
                raise ValueError(f"parts[{i}] must be a mechanism, got {type(p).__name__}")
        object.__setattr__(self, "parts", parts)


@dataclass(frozen=True)
class Repeated(Mechanism):
    """``inner`` run ``times`` times (adaptive composition of identical steps)."""

    kind = "repeated"
    inner: Mechanism
    times: int

    def label(self) -> str:
        inner = self.inner
        if isinstance(inner, Subsampled) and isinstance(inner.inner, Gaussian) and inner.inner.sensitivity == 1.0:
            return (f"DP-SGD (noise multiplier {inner.inner.sigma:g}, sample rate {inner.sample_rate:g}, "
                    f"{self.times} steps)")
        return f"{self.times} x {inner.label()}"

    def __post_init__(self) -> None:
        if not isinstance(self.inner, Mechanism):
            raise ValueError(f"inner must be a mechanism, got {type(self.inner).__name__}")
        t = _number("times", self.times, positive=True, allow_zero=False, upper=MAX_TIMES)
        if t != int(t):
            raise ValueError(f"times must be a positive integer, got {self.times!r}")
        object.__setattr__(self, "times", int(t))


def dpsgd(noise_multiplier: float, sample_rate: float, steps: int) -> Repeated:
    """DP-SGD: ``steps`` Poisson-subsampled Gaussian steps with noise multiplier sigma
    (noise sd / clipping norm) and sampling rate q.

    >>> dpsgd(9.4, 0.32768, 2000).describe()
    'Repeated(inner=Subsampled(inner=Gaussian(sigma=9.4, sensitivity=1.0), sample_rate=0.32768), times=2000)'
    """
    nm = _number("noise_multiplier", noise_multiplier, positive=True, allow_zero=False)
    t = _number("steps", steps, positive=True, allow_zero=False, upper=MAX_TIMES)
    if t != int(t):
        raise ValueError(f"steps must be a positive integer, got {steps!r}")
    return Repeated(Subsampled(Gaussian(nm, 1.0), sample_rate), int(t))


def dpsgd_from_training(noise_multiplier: float, *, sample_rate: float | None = None,
                        batch_size: int | None = None, dataset_size: int | None = None,
                        steps: int | None = None, epochs: float | None = None) -> Repeated:
    """DP-SGD from training settings: the sample rate is ``sample_rate`` or
    batch_size / dataset_size, the steps are ``steps`` or ceil(epochs * dataset_size / batch_size).

    >>> dpsgd_from_training(9.4, batch_size=16384, dataset_size=50000, steps=2000).inner.sample_rate
    0.32768
    """
    if (sample_rate is None) == (batch_size is None):
        raise ValueError("give exactly one of sample_rate or batch_size (with dataset_size)")
    if batch_size is not None:
        if dataset_size is None:
            raise ValueError("dataset_size is required with batch_size")
        if not (isinstance(batch_size, int) and isinstance(dataset_size, int) and 1 <= batch_size <= dataset_size):
            raise ValueError(f"batch_size must be an integer in [1, dataset_size], got {batch_size!r}")
        sample_rate = batch_size / dataset_size
    if (steps is None) == (epochs is None):
        raise ValueError("give exactly one of steps or epochs")
    if epochs is not None:
        e = _number("epochs", epochs, positive=True, allow_zero=False)
        if batch_size is None or dataset_size is None:
            raise ValueError("epochs need batch_size and dataset_size (steps per epoch = dataset_size / batch_size)")
        import math

        steps = int(math.ceil(e * dataset_size / batch_size))
    return dpsgd(noise_multiplier, sample_rate, steps)
