"""Sound piecewise-linear lower bounds of smooth trade-off curves (derivation in
:func:`piecewise_lower_bound`), and the safety margin shared with group privacy."""

from __future__ import annotations

import math

import numpy as np

from fdpkit.curves.base import TradeOffCurve
from fdpkit.curves.hull import upper_concave_hull
from fdpkit.curves.piecewise import PiecewiseLinearCurve


#: Relative margin by which the vertices of a piecewise-linear lower bound of a smooth
#: curve are moved to the safe side (TPR up, beta down), so that float rounding in the
#: tangent and secant arithmetic (about 1e-15 relative) cannot make them optimistic.
PIECEWISE_SAFETY_RTOL = 1e-12


def _logit_points(n: int) -> np.ndarray:
    """n points in (0, 1), uniform in sinh^-1 of logit(alpha): logit from about -690 to
    690 (alpha from 1e-300), dense near the middle."""
    u = np.linspace(-1.0, 1.0, n) * math.asinh(69.0)
    x = 10.0 * np.sinh(u)
    pts = 1.0 / (1.0 + np.exp(-x))
    return np.unique(pts[(pts > 0) & (pts < 1)])


def _meet(a0, t0, b0, s0, a1, t1, b1, s1, lo, hi):
    """Where the lines TPR = t0 + s0 (x - a0) and TPR = t1 + s1 (x - a1) meet, clamped to
    [lo, hi], with the LARGER of the two TPR values there (and the smaller beta, each read
    in its own arithmetic: beta lines are b - s (x - a)). Parallel lines meet at ``lo``."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        x = a0 + ((t1 - t0) - s1 * (a1 - a0)) / (s0 - s1)
    x = np.where(np.isfinite(x), np.clip(x, lo, hi), lo)
    with np.errstate(invalid="ignore", over="ignore"):
        t = np.maximum(t0 + s0 * (x - a0), t1 + s1 * (x - a1))
        b = np.minimum(b0 - s0 * (x - a0), b1 - s1 * (x - a1))
    return x, t, b


def _tangent_chain(a: np.ndarray, t: np.ndarray, b: np.ndarray, s: np.ndarray):
    """Vertices (alpha, TPR, beta) of min_i l_i for the supporting lines
    l_i(x) = t_i + s_i (x - a_i) at the points a_1 < ... < a_n, from alpha = 0 to a_n."""
    x, tv, bv = _meet(a[:-1], t[:-1], b[:-1], s[:-1], a[1:], t[1:], b[1:], s[1:], a[:-1], a[1:])
    t0 = max(0.0, float(t[0] - s[0] * a[0]))
    b0 = min(1.0, float(b[0] + s[0] * a[0]))
    return (np.concatenate([[0.0], x]), np.concatenate([[t0], tv]),
            np.concatenate([[b0], bv]))


def _safe(t: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Vertex TPR raised and beta lowered by ``PIECEWISE_SAFETY_RTOL``, relative to the
    smaller of the two (the side that carries the digits); the other is its complement."""
    t = np.clip(np.where(np.isnan(t), 1.0, t), 0.0, 1.0)
    b = np.clip(np.where(np.isnan(b), 0.0, b), 0.0, 1.0)
    small = t <= b
    t_new = np.where(small, t * (1.0 + PIECEWISE_SAFETY_RTOL), 1.0 - b * (1.0 - PIECEWISE_SAFETY_RTOL))
    b_new = np.where(small, 1.0 - t * (1.0 + PIECEWISE_SAFETY_RTOL), b * (1.0 - PIECEWISE_SAFETY_RTOL))
    return np.minimum(t_new, 1.0), np.maximum(b_new, 0.0)


def _finish(a: np.ndarray, t: np.ndarray, b: np.ndarray, bound: str,
            symmetric: bool | None, *, margin: bool = True) -> PiecewiseLinearCurve:
    """Apply the safety margin (unless done already), sort, collapse repeated alphas
    (largest TPR), take the upper concave hull (it only drops points below a chord,
    raising the curve) and wrap."""
    if margin:
        t, b = _safe(t, b)
    order = np.lexsort((b, a))
    a, t, b = a[order], t[order], b[order]
    first = np.concatenate([[True], np.diff(a) > 0])
    if not first.all():
        starts = np.flatnonzero(first)
        a, t, b = a[starts], np.maximum.reduceat(t, starts), np.minimum.reduceat(b, starts)
    t, b = np.maximum(t, 1.0 - b), np.minimum(b, 1.0 - t)  # each side's better digits
    keep = upper_concave_hull(a, t, b)
    a, t, b = a[keep], t[keep], b[keep]
    return PiecewiseLinearCurve._from_hull_vertices(a, t, b, bound, symmetric=symmetric)


def _fixed_point(curve: TradeOffCurve) -> float:
    """The alpha with f(alpha) = alpha (where a symmetric curve has slope -1)."""
    star = curve._alpha_at_slope(np.array([-1.0]))
    if star is not None:
        return float(np.asarray(star, dtype=float).ravel()[0])
    return float(curve._alpha_at_d(np.array([0.0]))[0])


def _tangent_lower_bound(curve: TradeOffCurve, pts: np.ndarray, out_bound: str):
    """Envelope of tangent lines (see :func:`piecewise_lower_bound`)."""
    symmetric = curve.is_symmetric
    if symmetric:
        star = _fixed_point(curve)
        pts = np.append(pts[pts < star], star)
    t, b = curve._tpr(pts), curve._beta(pts)
    with np.errstate(over="ignore", invalid="ignore"):
        s = -np.asarray(curve._slope(pts), dtype=float)
    if symmetric:
        s[-1] = 1.0  # the supporting line of slope -1 at the fixed point: alpha + beta = 2 a*
    ok = np.isfinite(s) & (s >= 0) & np.isfinite(t) & np.isfinite(b)
    if symmetric and not ok[-1]:
        return None
    a, t, b, s = pts[ok], t[ok], b[ok], s[ok]
    if len(a) < 2:
        return None
    xa, xt, xb = _tangent_chain(a, t, b, s)
    if symmetric:
        # the chain ends on the slope-1 line at its meeting with the previous tangent;
        # the line continues to that vertex's mirror image, then the mirrored chain
        # (from the margined half; alpha' = beta is read from its small side and rounded
        # down, by one ulp where it is 1 - TPR: a vertex moved left lowers the curve)
        xt, xb = _safe(xt, xb)
        ma = np.where(xb < 0.5, xb * (1.0 - PIECEWISE_SAFETY_RTOL), np.nextafter(1.0 - xt, 0.0))[::-1]
        mt, mb = 1.0 - xa[::-1], xa[::-1]
        a_all = np.concatenate([xa, ma, [1.0]])
        t_all = np.concatenate([xt, mt, [1.0]])
        b_all = np.concatenate([xb, mb, [0.0]])
        return _finish(a_all, t_all, b_all, out_bound, True, margin=False)
    # the last tangent continues until TPR = 1 (beta = 0), then TPR stays 1
    with np.errstate(divide="ignore"):
        end = float(a[-1] + b[-1] / s[-1]) if s[-1] > 0 else math.inf
    if end < 1.0:
        a_all, t_all, b_all = (np.concatenate([xa, [end, 1.0]]), np.concatenate([xt, [1.0, 1.0]]),
                               np.concatenate([xb, [0.0, 0.0]]))
    else:
        t1 = t[-1] + s[-1] * (1.0 - a[-1])
        a_all, t_all, b_all = (np.concatenate([xa, [1.0]]), np.concatenate([xt, [t1]]),
                               np.concatenate([xb, [max(0.0, b[-1] - s[-1] * (1.0 - a[-1]))]]))
    return _finish(a_all, t_all, b_all, out_bound, None)


def _secant_lower_bound(curve: TradeOffCurve, pts: np.ndarray, out_bound: str):
    """Bound from curve values only (see :func:`piecewise_lower_bound`)."""
    a = np.concatenate([[0.0], pts, [1.0]])
    t, b = curve._tpr(a), curve._beta(a)
    da = np.diff(a)
    use_b = t[1:] > 0.5
    dt = np.where(use_b, b[:-1] - b[1:], t[1:] - t[:-1])
    s = dt / da  # secant slopes in the TPR plane, S_j through points j and j + 1
    n = len(a)
    # interval i = [a_i, a_{i+1}], i = 1 .. n-3: S_{i-1} extended right meets S_{i+1} extended left
    i = np.arange(1, n - 2)
    x, tv, bv = _meet(a[i], t[i], b[i], s[i - 1], a[i + 1], t[i + 1], b[i + 1], s[i + 1],
                      a[i], a[i + 1])
    # first interval: only S_1 (through points 1, 2) extended to alpha = 0
    t0 = max(float(t[0]), float(t[1] - s[1] * a[1]))
    b0 = min(float(b[0]), float(b[1] + s[1] * a[1]))
    # last interval: S_{n-3} extended right until TPR = 1
    j = n - 3
    with np.errstate(divide="ignore"):
        end = float(a[j + 1] + b[j + 1] / s[j]) if s[j] > 0 else math.inf
    end = min(end, 1.0)
    a_all = np.concatenate([[0.0], a[1:-1], x, [end, 1.0]])
    t_all = np.concatenate([[t0], t[1:-1], tv, [min(1.0, t[j + 1] + s[j] * (end - a[j + 1])), 1.0]])
    b_all = np.concatenate([[b0], b[1:-1], bv, [max(0.0, b[j + 1] - s[j] * (end - a[j + 1])), 0.0]])
    return _finish(a_all, t_all, b_all, out_bound, None)


def piecewise_lower_bound(curve: TradeOffCurve, n: int = 20001) -> PiecewiseLinearCurve:
    r"""A piecewise-linear curve at or below ``curve`` everywhere (sound for guarantees).

    Work in the TPR plane, where TPR(alpha) = 1 - f(alpha) is concave and non-decreasing.

    - **Piecewise-linear curves** (closed forms such as (epsilon, delta)-DP, numeric
      curves) are returned exactly.
    - **Smooth curves with a slope** (``_slope``): tangent points a_1 < ... < a_n are taken
      uniform in asinh(logit(alpha)) (``n`` of them, alpha from about 1e-300). The tangent
      l_i(x) = TPR(a_i) - f'(a_i) (x - a_i) is a supporting line of the concave TPR, so
      l_i >= TPR everywhere, and so is E = min(1, min_i l_i). The vertices of E are the
      meeting points of consecutive tangents, which lie in [a_i, a_{i+1}]; each is
      clamped into that interval and given the larger of the two lines' values there, so
      every segment of the result lies on or above one tangent over its whole span, hence
      above TPR. At the left end the first tangent is extended to alpha = 0; at the right
      end the last tangent runs until TPR = 1. The points a_i themselves are on the
      curve; the vertices are not (they are above it in TPR, below it in beta).
    - **Symmetric smooth curves** (f = f^{-1}): only tangent points below the fixed point
      a* (f(a*) = a*, where f'(a*) = -1 by symmetry) are used, plus the tangent at a*
      itself, the line alpha + beta = 2 a*. This line is its own mirror image, so the
      chain up to its meeting with the previous tangent, followed by the mirrored chain
      (alpha, TPR, beta) -> (beta, 1 - alpha, alpha), is min(E, mirror(E)): mirror images
      of supporting lines of f are supporting lines of f^{-1} = f. The convex crossing of
      the diagonal is thus bridged by a tangent, never by a chord between two points
      below the curve (a chord of a convex curve lies above it: that was the defect of
      earlier versions, 1.9e-6 too high for Laplace(1) near alpha = 0.303). beta and TPR
      of each vertex are computed from their own lines, so both tails keep their digits.
    - **Curves known only by values**: for convex f the secant through two curve points,
      extended beyond them, lies below f. On [a_i, a_{i+1}] the result is the larger (in
      beta) of the secants of the neighbouring intervals, extended into it: vertices are
      the curve points and the meeting points of those secants.

    Float rounding is then put on the safe side: the upper concave hull (dropping a point
    below a chord only raises TPR) and a relative ``PIECEWISE_SAFETY_RTOL`` (TPR up, beta
    down). The result has ``bound="lower"`` (``"upper"`` only for an ``"upper"`` input).
    """
    if isinstance(curve, PiecewiseLinearCurve):
        return curve
    bp = curve._breakpoints()
    if bp is not None:  # closed forms: few vertices; beta from the closed form keeps its digits
        a = np.asarray(bp[0], dtype=float)
        return PiecewiseLinearCurve(a, np.asarray(curve._beta(a), dtype=float), curve.bound, tpr=bp[1],
                                    _capped=False)
    if n < 3:
        raise ValueError(f"n must be >= 3, got {n!r}")
    out_bound = "upper" if curve.bound == "upper" else "lower"
    pts = _logit_points(n)
    if curve._slope(pts[:1]) is not None:
        out = _tangent_lower_bound(curve, pts, out_bound)
        if out is not None:
            return out
    return _secant_lower_bound(curve, pts, out_bound)
