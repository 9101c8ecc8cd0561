"""The regret of one trade-off curve against another (Kaissis et al. 2024; Gomez et al.
Def. 2.6, Eq. 6, Eq. 23).

Delta(f, g) = inf{kappa >= 0 : f(alpha + kappa) - kappa <= g(alpha) for all alpha}.
Moving along a line of slope +1 keeps d = beta - alpha constant, so with alpha_c(d)
the solution of c(alpha) - alpha = d (unique, since c(alpha) - alpha is strictly
decreasing), Delta(f, g) = max(0, sup_d alpha_f(d) - alpha_g(d)). For piecewise-linear
f and g both maps are piecewise linear in d and the sup is at a vertex. For
piecewise-linear f against a smooth convex g, on each segment of f (slope s) the
difference is concave in d and peaks where g'(alpha) = s: one candidate per segment,
clamped to the segment. fdpkit evaluates exactly these candidates (no fixed grid, no
bisection on kappa); only two smooth curves fall back to a dense grid plus Brent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from fdpkit._lazy import lazy_module

if TYPE_CHECKING:
    from scipy import optimize
else:  # loaded on first use (start-up time, issue 30)
    optimize = lazy_module("scipy.optimize")

from fdpkit.curves import TradeOffCurve, check_curve

#: Grid size for the regret between two smooth curves (refined by Brent afterwards).
_REGRET_GRID = 2001
#: Absolute margin (in alpha) by which a block's regret bound must fall short of the best
#: value found to be skipped: far above the rounding of the differences compared.
_REGRET_PRUNE_MARGIN = 1e-14

#: Segments per block in the branch-and-bound maximisations (the fit's and the regret's).
_BLOCK = 64


def _check_curve(name: str, curve: Any) -> TradeOffCurve:
    """:func:`fdpkit.curves.check_curve` (upper bounds are refused where a fit needs it)."""
    return check_curve(curve, name)


# ----------------------------------------------------------------------------- regret
def _d_of(curve: TradeOffCurve, alpha: np.ndarray) -> np.ndarray:
    return curve._beta(alpha) - alpha


#: Table size (uniform in logit alpha) for the bounds of alpha_g(d) in the regret's branch
#: and bound, and their relative shift (twice the table's largest interpolation error,
#: about 1e-5 for Gaussian curves; a bound failing its check is replaced by the trivial
#: one, so only the tightness of the pruning depends on either).
_REGRET_TABLE = 8193
_REGRET_TABLE_SHIFT = 2e-5


class _AlphaBounds:
    """Lower and upper bounds of alpha_g(d) (the alpha where g(alpha) - alpha = d) without
    a root solve per point: a table of g in logit alpha (built once), interpolated,
    shifted down (up), and checked: g(alpha) - alpha is decreasing, so alpha' <= alpha_g(d)
    iff g(alpha') - alpha' >= d (and >= iff <=). A bound failing its check is 0 (1)."""

    def __init__(self, g: TradeOffCurve) -> None:
        self.g = g
        self.x = np.linspace(-40.0, 40.0, _REGRET_TABLE)
        at = 1.0 / (1.0 + np.exp(-self.x))
        self.dt = g._beta(at) - at  # decreasing

    def _interp(self, d: np.ndarray) -> np.ndarray:
        xi = np.interp(d, self.dt[::-1], self.x[::-1])
        return 1.0 / (1.0 + np.exp(-xi))

    def bounds(self, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper) bounds of alpha_g(d)."""
        mid = self._interp(d)
        lo = mid * (1.0 - _REGRET_TABLE_SHIFT)
        hi = np.minimum(mid * (1.0 + _REGRET_TABLE_SHIFT), 1.0)
        both = np.concatenate([lo, hi])
        gap = self.g._beta(both) - both
        n = len(d)
        lo = np.where(gap[:n] >= d + _REGRET_PRUNE_MARGIN, lo, 0.0)
        hi = np.where(gap[n:] <= d - _REGRET_PRUNE_MARGIN, hi, 1.0)
        return lo, hi


def _max_gap(f: TradeOffCurve, g: TradeOffCurve, d: np.ndarray, table: "_AlphaBounds | None") -> float:
    """max over the candidates d of alpha_f(d) - alpha_g(d). With ``table``, alpha_g is
    solved exactly only for the candidates whose upper bound alpha_f(d) - (lower bound of
    alpha_g) reaches the largest lower bound alpha_f(d) - (upper bound of alpha_g): the
    maximum is among them."""
    af = f._alpha_at_d(d)
    if table is None or len(d) <= 64:
        return float(np.max(af - g._alpha_at_d(d)))
    lo, hi = table.bounds(d)
    upper = np.nan_to_num(af - lo, nan=np.inf)
    lower = af - hi
    if np.isnan(lower).all():
        return float(np.max(af - g._alpha_at_d(d)))
    keep = np.flatnonzero(~(upper < float(np.nanmax(lower)) - _REGRET_PRUNE_MARGIN))
    return float(np.max(af[keep] - g._alpha_at_d(d[keep])))


def _regret_segments(a: np.ndarray, t: np.ndarray, g: TradeOffCurve,
                     table: _AlphaBounds) -> np.ndarray | None:
    """Indices of f's segments (vertices ``a``, ``t``) that can hold the maximum of
    alpha_f(d) - alpha_g(d), by branch and bound over blocks of _BLOCK segments (None: too
    few vertices to bother).

    d = beta - alpha decreases along the vertices, and alpha_f and alpha_g both decrease in
    d, so on a block of vertices i..j (d from d_i down to d_j) the difference is at most
    alpha_j - alpha_g(d_i). At the block ends it is at least alpha_i - (upper bound of
    alpha_g(d_i)); only blocks whose bound reaches the best of those (less a rounding
    margin) are searched in full."""
    n = len(a)
    if n <= 8 * _BLOCK:
        return None
    s = np.append(np.arange(0, n - 1, _BLOCK), n - 1)
    d = 1.0 - t[s] - a[s]
    ag_lo, ag_hi = table.bounds(d)
    lower = a[s] - ag_hi
    best = float(np.nanmax(lower)) if not np.isnan(lower).all() else -np.inf
    bound = a[s[1:]] - ag_lo[:-1]
    keep = np.flatnonzero(~(bound < best - _REGRET_PRUNE_MARGIN))  # NaN bounds are searched
    if keep.size == 0:
        return np.zeros(0, dtype=np.intp)
    starts, stops = s[keep], s[keep + 1]
    lens = stops - starts
    offsets = np.repeat(starts - (np.cumsum(lens) - lens), lens)
    return np.arange(int(lens.sum())) + offsets


def _regret_candidates(f: TradeOffCurve, g: TradeOffCurve,
                       table: _AlphaBounds | None = None) -> np.ndarray | None:
    bg = g._breakpoints()
    half = f._half_breakpoints()
    even = half is not None and bg is None and g.is_symmetric
    if even:
        # both symmetric: alpha_f(d) - alpha_g(d) is even in d, so d >= 0 (f's alpha <= beta
        # half, plus the segment crossing the diagonal) gives the maximum
        bf = half[0], half[1]
    else:
        bf = f._breakpoints()
    ends = [np.array([-1.0, min(f.f0, g.f0), 1.0])]
    if bf is not None and bg is not None:
        return np.concatenate(ends + [1.0 - bf[1] - bf[0], 1.0 - bg[1] - bg[0]])
    if bf is not None:
        a, t = bf
        seg = _regret_segments(a, t, g, table) if table is not None else None
        if seg is not None:  # only the segments of blocks that can hold the maximum
            a0, t0, a1, t1 = a[seg], t[seg], a[seg + 1], t[seg + 1]
        else:
            a0, t0, a1, t1 = a[:-1], t[:-1], a[1:], t[1:]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            slope = -(t1 - t0) / (a1 - a0)  # slope of f (in beta) on each segment
        d_star = g._d_at_slope(slope)
        if d_star is None:
            return None
        d_left, d_right = 1.0 - t0 - a0, 1.0 - t1 - a1
        # t(d) is concave on each segment of f (d runs from d_left down to d_right): its
        # maximum there is the tangent point, clamped into the segment, so every segment's
        # maximum is its tangent point or one of its two ends
        interior = (d_star < d_left) & (d_star > d_right)
        inner = np.concatenate([d_star[interior], d_left, d_right])
        if even:  # the gap is even in d: |d| gives the same value, and stays in the stored
            # half even where 1 - t - a rounds below the half's last beta - alpha (past the
            # diagonal), which would otherwise build the mirror half for nothing
            inner = np.abs(inner)
        return np.concatenate(ends + [inner])
    if bg is not None:
        # t(d) is convex on each segment of g: maxima at g's vertices.
        return np.concatenate(ends + [1.0 - bg[1] - bg[0]])
    return None


def _regret_dense(f: TradeOffCurve, g: TradeOffCurve) -> float:
    x = np.linspace(-40.0, 40.0, _REGRET_GRID)
    a = 1.0 / (1.0 + np.exp(-x))
    d = np.concatenate([_d_of(f, a), _d_of(g, a)])
    t = f._alpha_at_d(d) - g._alpha_at_d(d)
    i = int(np.argmax(t))
    best = float(t[i])
    lo, hi = float(np.min(d)), float(np.max(d))
    ds = np.sort(d)
    j = int(np.searchsorted(ds, d[i]))
    left, right = ds[max(j - 1, 0)], ds[min(j + 1, len(ds) - 1)]
    if right > left:
        res = optimize.minimize_scalar(
            lambda u: -float((f._alpha_at_d(np.array([u])) - g._alpha_at_d(np.array([u])))[0]),
            bounds=(max(left, lo), min(right, hi)), method="bounded", options={"xatol": 1e-14},
        )
        best = max(best, -float(res.fun))
    return best


def regret(f: TradeOffCurve, g: TradeOffCurve) -> float:
    """Δ(f, g): the regret of reporting g for a mechanism whose curve is f.

    Δ(f, g) = inf{κ ≥ 0 : f(α + κ) - κ ≤ g(α) for all α}
    (Kaissis et al. 2024; Gomez et al. Def. 2.6, Eq. 6). For a pessimistic summary g ≤ f
    this is how far f must move down-left along the diagonal to fall below g. Computed
    exactly for piecewise-linear f or g against curves with closed-form slopes; a dense
    grid plus Brent for two smooth curves.

    Examples
    --------
    >>> from fdpkit import GaussianCurve, RandomizedResponseCurve
    >>> round(regret(RandomizedResponseCurve(1.0), GaussianCurve(1.232035385344901)), 6)
    0.057546
    >>> regret(GaussianCurve(1.0), GaussianCurve(1.0))
    0.0
    """
    f = _check_curve("f", f)
    g = _check_curve("g", g)
    f_piecewise = f._half_breakpoints() is not None or f._breakpoints() is not None
    table = _AlphaBounds(g) if f_piecewise and g._breakpoints() is None else None
    cand = _regret_candidates(f, g, table)
    if cand is None:
        best = _regret_dense(f, g)
    else:
        cand = np.unique(np.clip(cand, -1.0, 1.0))
        best = _max_gap(f, g, cand, table)
    return max(0.0, best)


def symmetric_regret(f: TradeOffCurve, g: TradeOffCurve) -> float:
    """max{Δ(f, g), Δ(g, f)}: a metric on trade-off curves (Gomez et al. Eq. 7).

    Examples
    --------
    >>> from fdpkit import GaussianCurve
    >>> symmetric_regret(GaussianCurve(1.0), GaussianCurve(1.2)) > 0
    True
    """
    return max(regret(f, g), regret(g, f))
