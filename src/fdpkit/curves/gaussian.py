"""Gaussian differential privacy: the curve G_mu.

G_mu(alpha) = Phi(Phi^{-1}(1 - alpha) - mu) (Dong, Roth & Su 2022, Def. 2.7) is the
trade-off curve of testing N(0, 1) against N(mu, 1). With z = Phi^{-1}(1 - alpha) (computed
as ``isf(alpha)``), beta = Phi(z - mu) and TPR = Phi(mu - z) (computed as ``sf(z - mu)``),
so both stay accurate in the tails down to alpha = 1e-300.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from fdpkit._numerics import (
    check_nonnegative,
    check_scalar,
    log1mexp,
    norm_cdf,
    norm_isf,
    norm_logcdf,
    norm_sf,
)
from fdpkit.curves.base import TradeOffCurve

#: Newton steps used to solve G_mu(alpha) - alpha = d in z = isf(alpha).
_NEWTON_STEPS = 100
#: Newton steps below this (relative to max(1, |z|)) end the iteration of a point.
_Z_XTOL = 4e-16


def gaussian_log_delta(mu: float, eps: float) -> float:
    """log delta_mu(eps) = log[Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)] in log space
    (Kulynych & Honkela Eq. 11; Dong et al. Cor. 2.13); -inf when delta underflows.
    Requires mu > 0 and finite eps >= 0."""
    a = -eps / mu + mu / 2.0
    b = -eps / mu - mu / 2.0
    la, lb = float(norm_logcdf(a)), float(norm_logcdf(b))
    gap = eps + lb - la  # log of e^eps Phi(b) / Phi(a), always <= 0
    if gap >= 0.0:
        return -math.inf
    return la + float(log1mexp(gap))


def gaussian_log_delta_array(mu: float, eps: np.ndarray) -> np.ndarray:
    """:func:`gaussian_log_delta` for an array of eps >= 0 (``inf`` gives -inf), vectorised.
    Requires mu > 0."""
    eps = np.asarray(eps, dtype=float)
    out = np.full(eps.shape, -math.inf)
    fin = np.isfinite(eps)
    e = eps[fin]
    la = norm_logcdf(-e / mu + mu / 2.0)
    gap = e + norm_logcdf(-e / mu - mu / 2.0) - la  # log of e^eps Phi(b) / Phi(a), <= 0
    with np.errstate(divide="ignore", invalid="ignore"):
        val = la + log1mexp(np.minimum(gap, 0.0))
    out[fin] = np.where(gap < 0.0, val, -math.inf)
    return out


class GaussianCurve(TradeOffCurve):
    """Trade-off curve of μ-GDP, G_μ(α) = Φ(Φ⁻¹(1 - α) - μ).

    Parameters
    ----------
    mu : float
        The GDP parameter, μ ≥ 0 (finite). μ = 0 is perfect privacy (f = 1 - α).

    Notes
    -----
    Dong, Roth & Su (2022), "Gaussian differential privacy", Def. 2.7; Gomez et al.,
    Eq. (4). Symmetric: G_μ⁻¹ = G_μ.

    Examples
    --------
    >>> g = GaussianCurve(1.0)
    >>> round(g.beta(0.05), 6)
    0.740489
    >>> g.tpr(1e-12) > 0
    True
    """

    bound = "exact"

    def __init__(self, mu: float) -> None:
        self.mu = check_scalar("mu", check_nonnegative("mu", mu))

    def _params(self) -> dict[str, Any]:
        return {"mu": self.mu}

    @property
    def is_symmetric(self) -> bool:
        """Whether the curve equals its inverse f⁻¹ (it holds for both orderings of neighbouring datasets)."""
        return True

    def _beta(self, alpha: np.ndarray) -> np.ndarray:
        return norm_cdf(norm_isf(alpha) - self.mu)

    def _tpr(self, alpha: np.ndarray) -> np.ndarray:
        return norm_sf(norm_isf(alpha) - self.mu)

    def _log_tpr(self, alpha: np.ndarray) -> np.ndarray:
        # log Phi(mu - z): keeps its digits where TPR itself is subnormal or underflows
        return norm_logcdf(self.mu - norm_isf(alpha))

    def _slope(self, alpha: np.ndarray) -> np.ndarray:
        z = norm_isf(alpha)
        if self.mu == 0.0:
            return -np.ones_like(z)
        # mu (z - mu/2), never mu^2: a float square of mu = 1e300 raises OverflowError
        with np.errstate(over="ignore", invalid="ignore"):
            return -np.exp(self.mu * (z - 0.5 * self.mu))

    def _alpha_at_slope(self, slope: np.ndarray) -> np.ndarray:
        slope = np.asarray(slope, dtype=float)
        if self.mu == 0.0:
            return np.where(slope == -1.0, 0.5, np.where(slope < -1.0, 0.0, 1.0))
        with np.errstate(divide="ignore"):
            z = np.log(-slope) / self.mu + 0.5 * self.mu
        return norm_sf(z)

    def _d_at_slope(self, slope: np.ndarray) -> np.ndarray | None:
        if self.mu == 0.0:
            return super()._d_at_slope(slope)
        # at z = isf(alpha): alpha = Phi(-z) and G_mu(alpha) = Phi(z - mu), no round trip
        with np.errstate(divide="ignore"):
            z = np.log(-np.asarray(slope, dtype=float)) / self.mu + 0.5 * self.mu
        return norm_cdf(z - self.mu) - norm_sf(z)

    def _mu_exact(self) -> float:
        return self.mu

    def _delta_for_epsilon(self, eps: np.ndarray) -> np.ndarray:
        if self.mu == 0.0:
            return np.zeros(len(eps))
        return np.exp(gaussian_log_delta_array(self.mu, np.asarray(eps, dtype=float)))

    def _advantage_exact(self) -> float:
        # max_alpha 1 - alpha - G_mu(alpha) = 2 Phi(mu/2) - 1 (Dong et al. 2022, Sec. 2.2)
        return float(1.0 - 2.0 * norm_sf(self.mu / 2.0))

    def _alpha_at_d(self, d: np.ndarray) -> np.ndarray:
        """Solve G_mu(alpha) - alpha = d via z = isf(alpha): Phi(z - mu) - Phi(-z) = d.

        h(z) = Phi(z - mu) - Phi(-z) - d is increasing in z; safeguarded Newton on a
        bracket in z.
        """
        d = np.asarray(d, dtype=float)
        mu = self.mu
        lo = np.full_like(d, -40.0)
        hi = np.full_like(d, 40.0 + mu)
        # start from the midpoint-symmetric guess z = mu/2 + Phi^-1((1 + d)/2) * sqrt(2)/... keep simple
        z = np.clip(mu / 2.0 + norm_isf(np.clip((1.0 - d) / 2.0, 1e-300, 1.0)), lo, hi)
        active = np.arange(len(d))  # points still iterating (each stops on its own)
        for _ in range(_NEWTON_STEPS):
            za, da, la, ha = z[active], d[active], lo[active], hi[active]
            h = norm_cdf(za - mu) - norm_sf(za) - da
            la = np.where(h < 0, za, la)
            ha = np.where(h >= 0, za, ha)
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # mu ~ 1e300: exp(-inf) = 0
                dh = np.exp(-0.5 * (za - mu) ** 2) / math.sqrt(2 * math.pi) + np.exp(
                    -0.5 * za**2
                ) / math.sqrt(2 * math.pi)
                step = za - h / dh
            bad = ~np.isfinite(step) | (step <= la) | (step >= ha)
            new = np.where(bad, 0.5 * (la + ha), step)
            # converged: h is at rounding level, or the next step (or the bracket) is
            # within a few ulps of z
            tol = _Z_XTOL * np.maximum(1.0, np.abs(za))
            done = (np.abs(h) <= 2e-16) | (np.abs(new - za) <= tol) | (ha - la <= tol)
            z[active], lo[active], hi[active] = np.where(np.abs(h) <= 2e-16, za, new), la, ha
            active = active[~done]
            if active.size == 0:
                break
        return norm_sf(z)
