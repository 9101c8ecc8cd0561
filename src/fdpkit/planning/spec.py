"""The planned analysis a data holder wants to keep useful."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from fdpkit._numerics import check_choice
from fdpkit.utility import ALTERNATIVES, ztest_power, ztest_power_laplace


@dataclass(frozen=True)
class ZTestSpec:
    """A one-sample Z-test of a mean on n values in a range of width ``data_range``.

    Examples
    --------
    >>> ZTestSpec(effect=0.2, n=100, sd=0.25, alpha=0.01).power(mu=float("inf")) > 0.99
    True
    """

    effect: float
    n: float
    sd: float
    alpha: float = 0.05
    data_range: float = 1.0
    alternative: str = "larger"

    def __post_init__(self) -> None:
        check_choice("alternative", self.alternative, ALTERNATIVES)
        # validate all numbers once through the power function
        ztest_power(effect=self.effect, n=self.n, sd=self.sd, mu=math.inf, alpha=self.alpha,
                    data_range=self.data_range, alternative=self.alternative) if self.sd > 0 else None
        if self.sd < 0:
            raise ValueError(f"sd must be >= 0, got {self.sd!r}")

    def power(self, *, mu: float) -> float:
        """Power with a mu-GDP Gaussian mechanism (mu = inf: non-private)."""
        return ztest_power(effect=self.effect, n=self.n, sd=self.sd, mu=mu, alpha=self.alpha,
                           data_range=self.data_range, alternative=self.alternative)

    def laplace_power(self, *, epsilon: float) -> float:
        """Power with the Laplace mechanism at epsilon."""
        return ztest_power_laplace(effect=self.effect, n=self.n, sd=self.sd, epsilon=epsilon,
                                   alpha=self.alpha, data_range=self.data_range,
                                   alternative=self.alternative)

    def to_dict(self) -> dict:
        return asdict(self)
