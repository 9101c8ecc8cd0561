"""Single releases: Gaussian, Laplace, randomized response, pure and approximate DP."""

from __future__ import annotations

from dataclasses import dataclass

from fdpkit.errors import ParameterError
from fdpkit.mechanisms.base import Mechanism, _number


@dataclass(frozen=True)
class Gaussian(Mechanism):
    """Gaussian noise with standard deviation ``sigma`` on a query of L2 ``sensitivity``.

    Exactly μ-GDP with μ = sensitivity / σ (Dong, Roth & Su 2022, Thm. 2.7).

    Examples
    --------
    >>> from fdpkit import Gaussian, tradeoff_curve
    >>> Gaussian(sigma=2.0).mu
    0.5
    >>> tradeoff_curve(Gaussian(sigma=2.0))
    GaussianCurve(mu=0.5)
    """

    kind = "gaussian"
    unbounded_loss = True
    sigma: float
    sensitivity: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", _number("sigma", self.sigma, positive=True, allow_zero=False))
        object.__setattr__(self, "sensitivity", _number("sensitivity", self.sensitivity, positive=True, allow_zero=False))

    @property
    def mu(self) -> float:
        """The exact Gaussian DP parameter: μ = sensitivity / σ (Dong et al. Thm. 2.7)."""
        return self.sensitivity / self.sigma


@dataclass(frozen=True)
class Laplace(Mechanism):
    """Laplace noise with ``scale`` b on a query of L1 ``sensitivity``: ε = sensitivity/b.

    Examples
    --------
    >>> from fdpkit import Laplace, tradeoff_curve
    >>> tradeoff_curve(Laplace(scale=0.5))
    LaplaceCurve(epsilon=2.0)
    """

    kind = "laplace"
    scale: float
    sensitivity: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", _number("scale", self.scale, positive=True, allow_zero=False))
        object.__setattr__(self, "sensitivity", _number("sensitivity", self.sensitivity, positive=True, allow_zero=False))

    @property
    def epsilon(self) -> float:
        """The pure-DP parameter: ε = sensitivity / scale."""
        return self.sensitivity / self.scale


@dataclass(frozen=True)
class RandomizedResponse(Mechanism):
    """Binary randomized response: the true bit with probability e^ε / (1 + e^ε).

    Examples
    --------
    >>> from fdpkit import RandomizedResponse, privacy_report
    >>> round(privacy_report(RandomizedResponse(epsilon=1.0)).mu, 3)  # Gomez et al. Sec. 6
    1.232
    """

    kind = "randomized_response"
    epsilon: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", _number("epsilon", self.epsilon, positive=True, upper=100.0))


@dataclass(frozen=True)
class PureDP(Mechanism):
    """Any ε-DP mechanism (worst case over all of them).

    Examples
    --------
    >>> from fdpkit import PureDP, tradeoff_curve
    >>> tradeoff_curve(PureDP(epsilon=1.0))
    EpsDeltaCurve(epsilon=1.0, delta=0.0)
    """

    kind = "pure_dp"
    epsilon: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", _number("epsilon", self.epsilon, positive=True, upper=100.0))


@dataclass(frozen=True)
class ApproxDP(Mechanism):
    """Any (ε, δ)-DP mechanism (worst case over all of them).

    Examples
    --------
    With δ > 0 some mechanism with this guarantee discloses a record outright with
    probability δ, so no finite μ holds for all of them:

    >>> from fdpkit import ApproxDP, privacy_report
    >>> privacy_report(ApproxDP(epsilon=1.0, delta=1e-5)).mu
    inf
    """

    kind = "approx_dp"
    epsilon: float
    delta: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", _number("epsilon", self.epsilon, positive=True, upper=100.0))
        d = _number("delta", self.delta, positive=True)
        if d > 1:
            raise ParameterError(f"delta must be in [0, 1], got {self.delta!r}", "delta")
        object.__setattr__(self, "delta", d)
