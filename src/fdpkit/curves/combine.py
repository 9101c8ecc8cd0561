"""Combining guarantees: the strongest curve implied by several, and the weakest.

- ``envelope(f1, ..., fk)``: a mechanism that is f_i-DP for every i is max_i f_i-DP. The
  pointwise maximum of convex functions is convex, so it is itself a trade-off curve
  (Dong, Roth & Su 2022, Sec. 2). Use it when several guarantees hold at once (for
  example a GDP guarantee and an (epsilon, delta) guarantee of the same mechanism).
- ``worst_case(f1, ..., fk)``: when any one of the f_i may apply (different neighbouring
  relations, the two orderings of a pair of datasets), the mechanism is only guaranteed
  the lower convex hull of min_i f_i (Dong et al. 2022, Prop. F.2). For piecewise-linear
  inputs the hull of the minimum equals the hull of the union of all vertices, so the
  result is exact.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fdpkit.curves.base import TradeOffCurve, check_curve
from fdpkit.curves.piecewise import PiecewiseLinearCurve


def _combined_bound(curves: tuple[TradeOffCurve, ...]) -> str:
    bounds = {c.bound for c in curves}
    if bounds <= {"exact"}:
        return "exact"
    if bounds <= {"exact", "lower"}:
        return "lower"
    if bounds <= {"exact", "upper"}:
        return "upper"
    raise ValueError(
        "cannot combine a lower-bound curve with an upper-bound curve: the result would be "
        f"neither, got bounds {sorted(bounds)}"
    )


def _check_curves(curves: tuple[Any, ...]) -> tuple[TradeOffCurve, ...]:
    if not curves:
        raise ValueError("at least one curve is required, got none")
    for i, c in enumerate(curves):
        check_curve(c, f"curves[{i}]")
    return curves


class EnvelopeCurve(TradeOffCurve):
    """Pointwise maximum of several trade-off curves (see :func:`envelope`)."""

    def __init__(self, curves: tuple[TradeOffCurve, ...]) -> None:
        self.curves = curves
        self.bound = _combined_bound(curves)

    def _params(self) -> dict[str, Any]:
        return {"curves": list(self.curves)}

    @property
    def is_symmetric(self) -> bool:
        """Whether the curve equals its inverse f⁻¹ (it holds for both orderings of neighbouring datasets)."""
        return all(c.is_symmetric for c in self.curves)

    def _beta(self, alpha: np.ndarray) -> np.ndarray:
        return np.max([c._beta(alpha) for c in self.curves], axis=0)

    def _tpr(self, alpha: np.ndarray) -> np.ndarray:
        return np.min([c._tpr(alpha) for c in self.curves], axis=0)

    def inverse(self) -> TradeOffCurve:
        """The inverse curve f⁻¹: the envelope of the parts' inverses (itself when symmetric)."""
        if self.is_symmetric:
            return self
        return EnvelopeCurve(tuple(c.inverse() for c in self.curves))

    def to_piecewise(self, n: int = 20001) -> PiecewiseLinearCurve:
        """max_i g_i for sound piecewise lower bounds g_i <= f_i: a sound lower bound of
        max_i f_i (exact maximum of piecewise-linear curves, :func:`_piecewise_max`)."""
        cache = self.__dict__.setdefault("_piecewise_cache", {})
        if n not in cache:
            pls = [c.to_piecewise(n) for c in self.curves]
            bound = "lower" if self.bound == "exact" and any(p.bound != "exact" for p in pls) else self.bound
            cache[n] = _piecewise_max(pls, bound)
        return cache[n]

    def _breakpoints(self):
        parts = [c._breakpoints() for c in self.curves]
        if any(p is None for p in parts):
            return None
        # max of PL curves: vertices at the union of vertices and at pairwise crossings
        grid = np.unique(np.concatenate([p[0] for p in parts]))
        t = np.min([np.interp(grid, p[0], p[1]) for p in parts], axis=0)
        mids = []
        for i in range(len(parts)):
            for j in range(i + 1, len(parts)):
                ti = np.interp(grid, parts[i][0], parts[i][1])
                tj = np.interp(grid, parts[j][0], parts[j][1])
                diff = ti - tj
                cross = np.flatnonzero(diff[:-1] * diff[1:] < 0)
                w = diff[cross] / (diff[cross] - diff[cross + 1])
                mids.append(grid[cross] + w * (grid[cross + 1] - grid[cross]))
        if mids:
            extra = np.concatenate(mids)
            grid = np.unique(np.concatenate([grid, extra]))
            t = np.min([np.interp(grid, p[0], p[1]) for p in parts], axis=0)
        return grid, t


def _piecewise_max(pls: list[PiecewiseLinearCurve], bound: str) -> PiecewiseLinearCurve:
    """Exact pointwise maximum (in beta) of piecewise-linear curves: vertices at the union
    of all vertices and at every crossing of two curves. beta and TPR are interpolated from
    their own arrays, so both tails keep their digits."""
    grid = np.unique(np.concatenate([p.alphas for p in pls]))
    for _ in range(2):  # second pass adds crossings between the added points, if any
        ts = [np.interp(grid, p.alphas, p.tprs) for p in pls]
        extra = []
        for i in range(len(pls)):
            for j in range(i + 1, len(pls)):
                diff = ts[i] - ts[j]
                k = np.flatnonzero(diff[:-1] * diff[1:] < 0)
                w = diff[k] / (diff[k] - diff[k + 1])
                extra.append(grid[k] + w * (grid[k + 1] - grid[k]))
        extra = np.concatenate(extra) if extra else np.empty(0)
        extra = extra[(extra > 0) & (extra < 1)]
        if extra.size == 0:
            break
        grid = np.unique(np.concatenate([grid, extra]))
    ts = np.array([np.interp(grid, p.alphas, p.tprs) for p in pls])
    bs = np.array([np.interp(grid, p.alphas, p.betas) for p in pls])
    pick = np.argmin(ts, axis=0)  # the lowest TPR is the highest beta
    cols = np.arange(len(grid))
    return PiecewiseLinearCurve(grid, bs[pick, cols], bound, tpr=ts[pick, cols], _hull=True)


def envelope(*curves: TradeOffCurve) -> TradeOffCurve:
    """The strongest curve implied by several guarantees that hold at once: maxᵢ fᵢ.

    Examples
    --------
    >>> from fdpkit import EpsDeltaCurve, GaussianCurve
    >>> f = envelope(GaussianCurve(1.0), EpsDeltaCurve(1.0))
    >>> bool(f.beta(0.01) >= GaussianCurve(1.0).beta(0.01))
    True
    """
    curves = _check_curves(curves)
    if len(curves) == 1:
        return curves[0]
    if all(isinstance(c, PiecewiseLinearCurve) for c in curves):
        return _piecewise_max(list(curves), _combined_bound(curves))
    return EnvelopeCurve(curves)


def worst_case(*curves: TradeOffCurve) -> PiecewiseLinearCurve | TradeOffCurve:
    """The guarantee that holds when any one of the curves may apply: the lower convex
    hull of minᵢ fᵢ.

    Piecewise-linear inputs give an exact piecewise-linear result; smooth inputs are first
    replaced by their tangent-line lower bounds (so the result is a sound ``"lower"`` bound).

    Examples
    --------
    >>> from fdpkit import GaussianCurve
    >>> f = worst_case(GaussianCurve(1.0), GaussianCurve(2.0))
    >>> abs(f.beta(0.1) - GaussianCurve(2.0).beta(0.1)) < 1e-6
    True
    """
    curves = _check_curves(curves)
    if len(curves) == 1:
        return curves[0]
    bound = _combined_bound(curves)
    pls = [c.to_piecewise() for c in curves]
    if any(p.bound != c.bound for p, c in zip(pls, curves)) and bound == "exact":
        bound = "lower"
    # shortcut: a curve whose TPR is at least every other curve's at all their vertices is
    # above them everywhere (it is concave, they are linear between vertices): it is the hull
    for i, p in enumerate(pls):
        if all(np.all(np.interp(q.alphas, p.alphas, p.tprs) >= q.tprs) and
               np.all(np.interp(q.alphas, p.alphas, p.betas) <= q.betas) for j, q in enumerate(pls) if j != i):
            return p if p.bound == bound else PiecewiseLinearCurve(p.alphas, p.betas, bound, tpr=p.tprs, _hull=True)
    alpha = np.concatenate([p.alphas for p in pls])
    tpr = np.concatenate([p.tprs for p in pls])
    beta = np.concatenate([p.betas for p in pls])
    order = np.lexsort((beta, alpha))  # by alpha, smallest beta first within ties
    alpha, tpr, beta = alpha[order], tpr[order], beta[order]
    first = np.concatenate([[True], np.diff(alpha) > 0])
    alpha, tpr, beta = alpha[first], tpr[first], beta[first]
    tpr = np.maximum.accumulate(tpr)
    beta = np.minimum.accumulate(beta)
    # the hull of fdpkit's own vertices (lower_convex_hull's path, without its cap on given points)
    return PiecewiseLinearCurve(alpha, beta, bound, tpr=tpr, _hull=True)
