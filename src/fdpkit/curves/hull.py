"""Upper concave hulls of trade-off curve vertices, and the mirror half of a symmetric curve.

The hull is computed in (alpha, TPR) with TPR differences taken from whichever of TPR and
beta is small (accurately stored), so both tails keep their digits; vectorised passes while
violations are dense, Andrew's monotone chain on windows once they are sparse.
"""

from __future__ import annotations

import numpy as np

from fdpkit._scratch import scratch


def _slope_gap(da1: np.ndarray, dt1: np.ndarray, da2: np.ndarray, dt2: np.ndarray) -> np.ndarray:
    """dt2/da2 - dt1/da1: the sign of the cross product da1 dt2 - dt1 da2 (alpha steps are
    positive), as a difference of slopes, so that points 1e-160 from the origin (products
    of 1e-300 and less underflow to 0) are not mistaken for collinear ones."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return dt2 / da2 - dt1 / da1


def _cross_slices(a: np.ndarray, t: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cross products (p1 - p0) x (p2 - p0) for consecutive triples, in (alpha, TPR); >= 0
    means the middle point is on or below the chord of its neighbours (not a vertex of the
    upper concave hull). TPR differences are taken from the TPR array where TPR is small
    and from the beta array (minus beta differences) where beta is small, so both tails
    keep their digits.

    Computed in per-thread scratch buffers (:mod:`fdpkit._scratch`), bit for bit as
    ``_slope_gap`` of the ``np.where`` differences: the result is such a buffer, to be read
    at once (the next call overwrites it)."""
    m = len(a) - 2
    use_b = scratch("hull.use_b", m, bool)
    np.less_equal(t[1:-1], 0.5, out=use_b)
    np.logical_not(use_b, out=use_b)  # not (t <= 0.5), as np.where reads it (NaN included)
    tmp = scratch("hull.tmp", m)
    dt1 = scratch("hull.dt1", m)
    np.subtract(t[1:-1], t[:-2], out=dt1)
    np.subtract(b[:-2], b[1:-1], out=tmp)
    np.copyto(dt1, tmp, where=use_b)
    dt2 = scratch("hull.dt2", m)
    np.subtract(t[2:], t[:-2], out=dt2)
    np.subtract(b[:-2], b[2:], out=tmp)
    np.copyto(dt2, tmp, where=use_b)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        np.subtract(a[2:], a[:-2], out=tmp)
        np.divide(dt2, tmp, out=dt2)
        np.subtract(a[1:-1], a[:-2], out=tmp)
        np.divide(dt1, tmp, out=dt1)
        np.subtract(dt2, dt1, out=dt2)
    return dt2


def _chain(alpha: np.ndarray, tpr: np.ndarray, beta: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Andrew's monotone chain (upper hull) over the points ``idx`` (sorted by alpha)."""
    a, t, b = alpha[idx].tolist(), tpr[idx].tolist(), beta[idx].tolist()
    hull: list[int] = []
    for k in range(len(a)):
        while len(hull) >= 2:
            i, j = hull[-2], hull[-1]
            if t[j] <= 0.5:
                dt1, dt2 = t[j] - t[i], t[k] - t[i]
            else:
                dt1, dt2 = b[i] - b[j], b[i] - b[k]
            da1, da2 = a[j] - a[i], a[k] - a[i]
            if da1 <= 0 or da2 <= 0 or dt2 / da2 >= dt1 / da1:  # slopes: no underflow
                hull.pop()
            else:
                break
        hull.append(k)
    return idx[np.asarray(hull, dtype=int)]


#: Most vectorised passes before the exact monotone chain takes over (on windows only).
_HULL_PASSES = 6
#: Switch to windows once fewer than 1/_SPARSE of the points violate concavity.
_SPARSE = 256
#: Violations closer than this (in remaining points) share one monotone-chain window.
_WINDOW_GAP = 64


#: Violations left after the vectorised passes above which :func:`_below_both_sides` runs.
_PREFILTER_MIN = 1024
#: Relative margin by which a point must lie below its neighbours' maxima to be dropped.
_BELOW_RTOL = 1e-12


def _below_both_sides(t: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Mask of the points (sorted by alpha) that lie clearly below some point on their left
    and some point on their right: TPR below both sides' largest TPR (compared in TPR where
    it is at most 1/2, in beta otherwise, each by a relative :data:`_BELOW_RTOL`). Such a
    point lies strictly below the chord of those two points (the chord's height there is
    at least the smaller of its ends), so it is not a vertex of the upper concave hull.
    The first and last points are kept."""
    n = len(t)
    drop = np.zeros(n, dtype=bool)
    if n < 3:
        return drop
    t_left = np.maximum.accumulate(t[:-2])      # max TPR over j < i, for i = 1 .. n - 2
    t_right = np.maximum.accumulate(t[:1:-1])[::-1]  # max TPR over j > i
    b_left = np.minimum.accumulate(b[:-2])
    b_right = np.minimum.accumulate(b[:1:-1])[::-1]
    ti, bi = t[1:-1], b[1:-1]
    small = ti <= 0.5
    drop[1:-1] = np.where(small, ti * (1.0 + _BELOW_RTOL) < np.minimum(t_left, t_right),
                          bi > np.maximum(b_left, b_right) * (1.0 + _BELOW_RTOL))
    return drop


def _sorted_union(around: np.ndarray) -> np.ndarray:
    """sorted(set(around - 1) | set(around)) for a non-decreasing ``around`` (what
    np.unique would give, in linear time: its hash table costs more on these sizes)."""
    if around.size > 1:
        around = around[np.concatenate([[True], around[1:] != around[:-1]])]
    both = np.empty(2 * around.size, dtype=around.dtype)
    both[0::2], both[1::2] = around - 1, around  # non-decreasing: a - 1 < a <= next - 1
    if both.size > 1:
        both = both[np.concatenate([[True], both[1:] != both[:-1]])]
    return both


def _cross_at(alpha: np.ndarray, tpr: np.ndarray, beta: np.ndarray, idx: np.ndarray,
              pos: np.ndarray) -> np.ndarray:
    """``_cross_slices`` for the triples centred at positions ``pos`` of ``idx`` only."""
    i0, i1, i2 = idx[pos - 1], idx[pos], idx[pos + 1]
    a0, a1, a2 = alpha[i0], alpha[i1], alpha[i2]
    t0, t1, t2 = tpr[i0], tpr[i1], tpr[i2]
    b0, b1, b2 = beta[i0], beta[i1], beta[i2]
    use_t = t1 <= 0.5
    dt1 = np.where(use_t, t1 - t0, b0 - b1)
    dt2 = np.where(use_t, t2 - t0, b0 - b2)
    return _slope_gap(a1 - a0, dt1, a2 - a0, dt2)


def upper_concave_hull(alpha: np.ndarray, tpr: np.ndarray, beta: np.ndarray | None = None) -> np.ndarray:
    """Indices of the vertices of the upper concave hull of points sorted by alpha.

    The upper concave hull in (alpha, TPR) is the lower convex hull in (alpha, beta): the
    largest convex function below the points. Vectorised passes drop points that lie on or
    below the chord of their neighbours (never hull vertices) while violations are dense,
    rechecking only the triples around the points dropped; once they are sparse, Andrew's
    monotone chain finishes exactly on windows around them.
    The chain keeps each window's end points, so afterwards only the triples centred on
    window ends can violate concavity; those are rechecked (not the whole array) and their
    windows widened until none is left.
    """
    beta = 1.0 - tpr if beta is None else beta
    idx = np.arange(len(alpha))
    if len(idx) < 3:
        return idx
    gap = _cross_slices(alpha, tpr, beta)
    viol = scratch("hull.viol", len(gap), bool)
    bad = np.flatnonzero(np.greater_equal(gap, 0.0, out=viol)) + 1
    for _ in range(_HULL_PASSES):
        if bad.size == 0 or bad.size * _SPARSE < len(idx):
            break
        # drop every violating point at once (each lies on or below a chord of the set);
        # only the triples centred on the kept neighbours of dropped points change
        keep = np.ones(len(idx), dtype=bool)
        keep[bad] = False
        kept_through = np.cumsum(keep)  # kept points up to each position
        idx = idx[keep]
        around = kept_through[bad]  # new position of each dropped point's kept successor
        pos = _sorted_union(around)
        pos = pos[(pos >= 1) & (pos <= len(idx) - 2)]
        bad = pos[_cross_at(alpha, tpr, beta, idx, pos) >= 0] if pos.size else pos
    if bad.size > _PREFILTER_MIN and len(idx) >= 3:
        # violations left dense enough for long monotone-chain windows (curves whose
        # hull is a few segments over 10^6 points): drop, in O(n), the points below a
        # point on each side, then recheck the triples that changed
        drop = _below_both_sides(tpr[idx], beta[idx])
        if drop.any():
            keep = ~drop
            kept_through = np.cumsum(keep)
            idx = idx[keep]
            # recheck the violators kept (at their new positions) and the triples around
            # the points dropped (the pass logic above)
            stay = kept_through[bad[keep[bad]]] - 1
            pos = np.union1d(stay, _sorted_union(kept_through[np.flatnonzero(drop)]))
            pos = pos[(pos >= 1) & (pos <= len(idx) - 2)]
            bad = pos[_cross_at(alpha, tpr, beta, idx, pos) >= 0] if pos.size else pos
    pad = 2
    while bad.size and len(idx) >= 3:
        # group violations into windows and run the exact chain on each window
        splits = np.flatnonzero(np.diff(bad) > _WINDOW_GAP + 2 * pad) + 1
        pieces, ends, last, n_out = [], [], 0, 0
        for group in np.split(bad, splits):
            lo = max(int(group[0]) - pad, last)
            hi = min(int(group[-1]) + pad + 1, len(idx))
            pieces.append(idx[last:lo])
            n_out += lo - last
            window = _chain(alpha, tpr, beta, idx[lo:hi])
            pieces.append(window)
            ends += [n_out, n_out + len(window) - 1]
            n_out += len(window)
            last = hi
        pieces.append(idx[last:])
        idx = np.concatenate(pieces)
        pos = np.unique(np.asarray(ends, dtype=np.intp))
        pos = pos[(pos >= 1) & (pos <= len(idx) - 2)]
        bad = pos[_cross_at(alpha, tpr, beta, idx, pos) >= 0] if pos.size else pos
        pad = 2 * pad + 8
    return idx



def _dedup(a: np.ndarray, t: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, ...]:
    """Collapse repeated alphas (sorted input) to the largest TPR: the pessimistic reading."""
    da = np.diff(a)
    if (da > 0).all():
        return a, t, b
    starts = np.flatnonzero(np.concatenate([[True], da > 0]))
    return a[starts], np.maximum.reduceat(t, starts), np.minimum.reduceat(b, starts)


def _mirror_half(a: np.ndarray, t: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, ...]:
    """The mirror images (beta, 1 - alpha, alpha) of a symmetric curve's half (hull
    vertices from alpha = 0 to the start of the slope-1 segment), reversed so that alpha
    increases and ending at (1, 1).

    Their TPR 1 - alpha rounds to 1.0 for the tail vertices (alpha < 1.1e-16): of those
    only the first is kept, the rest lie on the line TPR = 1 up to the end point (1, 1)
    (never hull vertices). Their alpha = beta rounds near 1, so they get their own hull
    pass (repeated alphas keep the larger TPR, the pessimistic reading). A last half
    vertex on the diagonal is its own mirror and is not repeated."""
    mt = 1.0 - a[::-1]
    ones = int(np.searchsorted(mt, 1.0, side="left"))  # mt is non-decreasing
    stop = min(ones + 1, len(mt))
    ma, mt, mb = _dedup(np.append(b[::-1][:stop], 1.0), np.append(mt[:stop], 1.0),
                        np.append(a[::-1][:stop], 0.0))
    keep = upper_concave_hull(ma, mt, mb)
    ma, mt, mb = ma[keep], mt[keep], mb[keep]
    if ma[0] <= a[-1]:  # the last vertex lies on the diagonal: it is its own mirror
        ma, mt, mb = ma[1:], mt[1:], mb[1:]
    return ma, mt, mb
