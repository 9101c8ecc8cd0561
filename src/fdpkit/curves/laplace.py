"""The Laplace mechanism's trade-off curve.

Adding Laplace noise of scale b = sensitivity/epsilon to a query of that sensitivity gives
the trade-off curve of testing Lap(0, 1) against Lap(epsilon, 1) (Dong, Roth & Su 2022,
Example/Lemma A.6; de Fondeville Example 1):

    f(alpha) = 1 - e^eps alpha          for alpha < e^-eps / 2,
               e^-eps / (4 alpha)       for e^-eps / 2 <= alpha <= 1/2,
               e^-eps (1 - alpha)       for alpha > 1/2.

TPR in the first regime is e^eps alpha exactly, so tails keep their digits. The curve is
symmetric, lies above the pure epsilon-DP curve and touches it only at alpha in {0, 1}.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from fdpkit._lazy import lazy_module

if TYPE_CHECKING:
    from scipy import optimize
else:  # loaded on first use (start-up time, issue 30)
    optimize = lazy_module("scipy.optimize")

from fdpkit._numerics import EPSILON_MAX, MU_SAFETY_RTOL, check_real, norm_isf
from fdpkit.curves.base import TradeOffCurve

#: Points in the grid search for the tight mu of a Laplace curve (before Brent refinement).
_MU_GRID = 4001
#: Relative margin added to the numerically maximised mu (grid + Brent finds the sup up to
#: far less than this); keeps the reported mu on the safe side.
_MU_NUMERIC_RTOL = 1e-9


class LaplaceCurve(TradeOffCurve):
    """Trade-off curve of the Laplace mechanism with scale sensitivity/ε.

    Parameters
    ----------
    epsilon : float
        ε ≥ 0 (finite). The mechanism is ε-DP, and its relative disclosure risk
        is e^ε (de Fondeville, Corollary 2).

    Examples
    --------
    >>> f = LaplaceCurve(1.0)
    >>> round(f.beta(0.5), 6)
    0.18394
    >>> round(f.tpr(1e-12) / 1e-12, 6)   # e^eps in the linear tail
    2.718282
    """

    bound = "exact"

    def __init__(self, epsilon: float) -> None:
        # EPSILON_MAX: beyond it e^epsilon overflows (the curve is perfect distinguishability)
        self.epsilon = check_real("epsilon", epsilon, low=0.0, high=EPSILON_MAX, scalar=True)

    def _params(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon}

    @property
    def is_symmetric(self) -> bool:
        """Whether the curve equals its inverse f⁻¹ (it holds for both orderings of neighbouring datasets)."""
        return True

    def _regions(self, alpha: np.ndarray):
        knee = 0.5 * math.exp(-self.epsilon)
        return alpha < knee, alpha > 0.5

    def _beta(self, alpha: np.ndarray) -> np.ndarray:
        eps = self.epsilon
        low, high = self._regions(alpha)
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            mid = math.exp(-eps) / (4.0 * alpha)
            lin = 1.0 - np.exp(eps + np.log(alpha))
        out = np.where(low, lin, np.where(high, math.exp(-eps) * (1.0 - alpha), mid))
        return np.clip(out, 0.0, 1.0)

    def _tpr(self, alpha: np.ndarray) -> np.ndarray:
        eps = self.epsilon
        low, high = self._regions(alpha)
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            mid = 1.0 - math.exp(-eps) / (4.0 * alpha)
            lin = np.exp(eps + np.log(alpha))
        out = np.where(low, lin, np.where(high, 1.0 - math.exp(-eps) * (1.0 - alpha), mid))
        return np.clip(out, 0.0, 1.0)

    def _slope(self, alpha: np.ndarray) -> np.ndarray:
        eps = self.epsilon
        low, high = self._regions(alpha)
        with np.errstate(divide="ignore", over="ignore"):
            mid = -math.exp(-eps) / (4.0 * alpha**2)
        return np.where(low, -math.exp(eps), np.where(high, -math.exp(-eps), mid))

    def _alpha_at_slope(self, slope: np.ndarray) -> np.ndarray:
        # In the middle regime f' = -e^-eps/(4 alpha^2); slopes steeper than -e^eps map to
        # the knee, shallower than -e^-eps to alpha = 1/2 (the linear pieces).
        eps = self.epsilon
        slope = np.asarray(slope, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            a = np.sqrt(math.exp(-eps) / (4.0 * -slope))
        return np.clip(a, 0.5 * math.exp(-eps), 0.5)

    def _delta_for_epsilon(self, eps: np.ndarray) -> np.ndarray:
        """delta(eps) = 1 - e^{(eps - epsilon)/2} for 0 <= eps <= epsilon, else 0.

        The sup of TPR - e^eps alpha is at the tangent point alpha = e^{-(epsilon + eps)/2}/2
        of the middle regime, where TPR = 1 - e^{(eps - epsilon)/2}/2 and
        e^eps alpha = e^{(eps - epsilon)/2}/2 (Dong et al. 2022, Prop. 2.12).
        """
        eps = np.asarray(eps, dtype=float)
        with np.errstate(invalid="ignore"):
            out = -np.expm1(0.5 * (np.minimum(eps, self.epsilon) - self.epsilon))
        return np.where(eps >= self.epsilon, 0.0, out)

    def _advantage_exact(self) -> float:
        # symmetric curve: the maximum of 1 - alpha - f is at the fixed point f(a) = a,
        # e^-eps / (4a) = a  =>  a = e^{-eps/2}/2, so the advantage is 1 - e^{-eps/2}.
        return -math.expm1(-self.epsilon / 2.0)

    def _mu_exact(self) -> float:
        """sup_alpha isf(alpha) - isf(TPR(alpha)) (Gomez et al. Eq. 21 for a smooth curve).

        The Laplace curve is symmetric, so the supremum over alpha <= 1/2 is the global one.
        It is finite (the curve is epsilon-DP, so mu <= Prop. 6.1's bound) and attained in the
        interior: dense grid in log(alpha), Brent refinement, then a relative margin.
        """
        if self.epsilon == 0.0:
            return 0.0

        def h(log_a: np.ndarray) -> np.ndarray:
            a = np.exp(log_a)
            b = self._beta(a)
            # isf(TPR) = -isf(beta): read it from the side that keeps its digits (TPR
            # rounds to 1 once beta < 1e-16, e.g. epsilon = 37, where isf(TPR) would be -inf)
            with np.errstate(invalid="ignore"):
                isf_tpr = np.where(b < 0.5, -norm_isf(b), norm_isf(self._tpr(a)))
            return norm_isf(a) - isf_tpr

        grid = np.linspace(math.log(1e-300), math.log(0.5), _MU_GRID)
        vals = h(grid)
        i = int(np.nanargmax(vals))
        lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
        res = optimize.minimize_scalar(
            lambda t: -float(h(np.array([t]))[0]), bounds=(lo, hi), method="bounded",
            options={"xatol": 1e-12},
        )
        best = max(float(vals[i]), -float(res.fun))
        return best * (1.0 + _MU_NUMERIC_RTOL + MU_SAFETY_RTOL)
