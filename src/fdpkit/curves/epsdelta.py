"""Closed-form piecewise-linear curves: (epsilon, delta)-DP, randomized response and
de Fondeville's uniform random sampling.

(epsilon, delta)-DP is f-DP with (Dong, Roth & Su 2022, Prop. 2.5; Kairouz et al. 2015)

    f_{eps,delta}(alpha) = max{0, 1 - delta - e^eps alpha, e^-eps (1 - delta - alpha)}.

It has four vertices: (0, 1 - delta), (a*, a*) with a* = (1 - delta)/(1 + e^eps) on the
diagonal, (1 - delta, 0) and (1, 0). TPR is computed as min{1, delta + e^eps alpha,
1 - e^-eps (1 - delta - alpha)} so that the small-alpha tail keeps its digits.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from fdpkit._numerics import ParameterError
from fdpkit._numerics import EPSILON_MAX, check_real, check_positive, check_probability, check_scalar
from fdpkit._numerics import norm_isf, MU_SAFETY_RTOL
from fdpkit.curves.base import TradeOffCurve


class EpsDeltaCurve(TradeOffCurve):
    """Trade-off curve of (ε, δ)-DP.

    Parameters
    ----------
    epsilon : float
        ε ≥ 0 (finite).
    delta : float, default 0
        δ in [0, 1]. δ > 0 gives f(0) = 1 - δ < 1: the guarantee allows a
        blatant disclosure with probability δ (de Fondeville, Theorem 1).

    Examples
    --------
    >>> f = EpsDeltaCurve(1.0, 1e-5)
    >>> round(f.beta(0.1), 6)
    0.728162
    >>> f.f0
    0.99999
    """

    bound = "exact"

    def __init__(self, epsilon: float, delta: float = 0.0) -> None:
        # EPSILON_MAX: beyond it e^epsilon overflows (the curve is perfect distinguishability)
        self.epsilon = check_real("epsilon", epsilon, low=0.0, high=EPSILON_MAX, scalar=True)
        self.delta = check_scalar("delta", check_probability("delta", delta))

    def _params(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon, "delta": self.delta}

    @property
    def is_symmetric(self) -> bool:
        """Whether the curve equals its inverse f⁻¹ (it holds for both orderings of neighbouring datasets)."""
        return True

    def _beta(self, alpha: np.ndarray) -> np.ndarray:
        # steep part 1 - delta - e^eps alpha = a* + e^eps (a* - alpha) with the diagonal
        # vertex a* = (1 - delta)/(1 + e^eps): no cancellation as alpha approaches a*
        eps, delta = self.epsilon, self.delta
        alpha = np.asarray(alpha, dtype=float)
        with np.errstate(over="ignore", invalid="ignore"):
            e = math.exp(eps) if eps < 709.0 else math.inf
            knee = (1.0 - delta) / (1.0 + e)
            steep = np.where(alpha <= 0.0, 1.0 - delta, knee + e * (knee - alpha))
        flat = math.exp(-eps) * (1.0 - delta - alpha)
        return np.maximum(0.0, np.maximum(steep, flat))

    def _tpr(self, alpha: np.ndarray) -> np.ndarray:
        eps, delta = self.epsilon, self.delta
        with np.errstate(divide="ignore", over="ignore"):
            steep = delta + np.exp(eps + np.log(alpha))
        flat = 1.0 - math.exp(-eps) * (1.0 - delta - alpha)
        return np.minimum(1.0, np.minimum(steep, flat))

    def _breakpoints(self) -> tuple[np.ndarray, np.ndarray]:
        eps, delta = self.epsilon, self.delta
        knee = (1.0 - delta) / (1.0 + math.exp(eps))
        alpha = np.array([0.0, knee, 1.0 - delta, 1.0])
        tpr = np.array([delta, 1.0 - knee, 1.0, 1.0])
        keep = np.concatenate([[True], np.diff(alpha) > 0])
        return alpha[keep], tpr[keep]

    def _mu_exact(self) -> float | None:
        if self.delta > 0:
            return None  # f(0) < 1: no finite mu (Gomez et al. Prop. 6.2)
        # Gomez et al. Prop. 6.1: mu = -2 Phi^-1(1/(1 + e^eps)) = 2 isf(1/(1 + e^eps)).
        mu = 2.0 * float(norm_isf(1.0 / (1.0 + math.exp(self.epsilon))))
        return mu * (1.0 + MU_SAFETY_RTOL)

    def _advantage_exact(self) -> float:
        # attained at the diagonal vertex: 1 - 2 a*.
        return 1.0 - 2.0 * (1.0 - self.delta) / (1.0 + math.exp(self.epsilon))


class RandomizedResponseCurve(EpsDeltaCurve):
    """Binary randomized response with parameter ε.

    Each bit is reported truthfully with probability e^ε / (1 + e^ε). Its trade-off
    curve is exactly the pure ε-DP curve (Kairouz et al. 2015; Gomez et al. Sec. 6,
    Fig. 5 right).

    Examples
    --------
    >>> f = RandomizedResponseCurve(1.0)
    >>> round(f.beta(0.5), 6)
    0.18394
    """

    def __init__(self, epsilon: float) -> None:
        super().__init__(epsilon, 0.0)

    def _params(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon}


class UniformSamplingCurve(EpsDeltaCurve):
    """De Fondeville's uniform random sampling mechanism (Example 3).

    The mechanism releases a constant with probability e^−μ and otherwise one record of
    the n-record dataset chosen uniformly, so each record is disclosed with probability
    p = (1 − e^−μ)/n. Releasing the target record identifies membership with certainty;
    every other output is equally likely under both hypotheses, so

        f(α) = max(0, 1 - p - α),

    the (0, p)-DP curve. f(0) = 1 - p < 1: it fails catastrophically (Theorem 1).

    Parameters
    ----------
    mu : float
        De Fondeville's privacy-loss parameter (> 0; not a GDP μ).
    n : int
        Dataset size (≥ 1).

    Examples
    --------
    >>> f = UniformSamplingCurve(1.0, 5)
    >>> round(f.f0, 6)
    0.873576
    """

    def __init__(self, mu: float, n: int) -> None:
        mu = check_scalar("mu", check_positive("mu", mu))
        n_val = check_scalar("n", check_positive("n", n))
        if n_val != int(n_val):
            raise ParameterError(f"n must be a positive integer, got {n!r}", "n")
        self.mu = mu
        self.n = int(n_val)
        super().__init__(0.0, -math.expm1(-mu) / self.n)

    def _params(self) -> dict[str, Any]:
        return {"mu": self.mu, "n": self.n}
