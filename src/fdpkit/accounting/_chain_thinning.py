r"""Certified thinning of a large steep chain: the tangent envelope (issue 29, cost at large mu).

At large mu a composed PLD has millions of losses (4.4 million per direction at sigma 5,
q 0.1, T = 10^6), and so the steep chain of :mod:`fdpkit.accounting.pld_curve` has millions
of vertices: the hull, the fit and above all the regret then cost tens of seconds (and at
the 180,000 vertices of the headline DP-SGD report they cost more than the composition). Most of
those vertices are needed by no reading: they lie within a relative 1e-12 of a straight line
through their neighbours. This module replaces the chain by one with far fewer vertices
that is still a certified bound, and that is within a stated relative tolerance of it.

Why not drop vertices
---------------------
The chain is concave in (alpha, TPR) (its slopes e^l fall with the loss l): dropping a
vertex replaces two edges by their chord, which lies *below* the chain in TPR (above it in
beta): optimistic. A sound thinning keeps supporting lines instead (the tangent envelope):
the chain is cut into groups of consecutive vertices v_B, ..., v_E, and each group is
replaced by v_B, P, v_E with P the intersection of two lines that lie above every vertex
of the group in TPR:

    L1(x) = t_B + s1 (x - x_B),   s1 = max_{B <= i < E} (t_{i+1} - t_i) / (x_{i+1} - x_i),   (1)
    L2(x) = t_E - s2 (x_E - x),   s2 = min_{B <= i < E} (t_{i+1} - t_i) / (x_{i+1} - x_i).   (2)

Every chord slope (t_i - t_B) / (x_i - x_B) is a weighted mean of the slopes of the edges
it spans, so it is at most s1: every vertex of the group lies on or below L1; likewise
(t_E - t_i) / (x_E - x_i) >= s2 puts every vertex on or below L2. So every edge of the
group (its two ends below a line) lies below both lines: below min(L1, L2). The new
polyline v_B -> P -> v_E lies above L1 on [x_B, X] and above L2 on [X, x_E] as soon as
Y >= max(L1(X), L2(X)) (each new segment starts or ends on its line and reaches Y at X),
so it lies above the old one everywhere: it is again an upper bound on TPR (a lower bound
on beta), and the hull built from it (:mod:`fdpkit.accounting.pld_curve`) is above the
hull of the full chain. For a concave chain s1 and s2 are the slopes of the group's first
and last edges and P is where their lines meet: the tangent envelope. Taking the largest
(smallest) edge slope instead makes the bound hold for any chain, including the
rounding-level wiggles of a long chain's slopes.

Where beta is small (TPR > 1/2) the same is done on the accurately stored beta, a
non-increasing convex function, with the lines below every vertex.

Rounding
--------
The edge slopes are computed with a relative error of at most 3u (a subtraction of two
floats, another, a division; u the unit round-off): s1 is raised and s2 lowered by 8u. The
line values at X are sums of non-negative terms where the formula allows it (relative error
at most 3u, Y raised by 8u) and differences elsewhere (absolute error at most 3u times the
larger term, Y raised by 8u times it). So every inequality above holds in exact arithmetic.
X is only clamped into [x_B, x_E]: where it lands does not matter for soundness.

Tolerance
---------
Groups come from a prediction of where a segment of the envelope stays within a relative
``rtol`` of the chain (for a curve of curvature k the envelope of two tangents L apart
lies at most k L^2 / 8 above it), and every group is checked: the envelope's gap to the
chain is largest at X (on a concave chain L1 and L2 less the chain are convex and vanish at
v_B and v_E), and a group whose gap there exceeds ``rtol`` times the group's smallest value
on the small side (TPR where TPR <= 1/2, beta elsewhere) is split in two, down to single
edges, which are kept as they are. So every reading of the thinned curve lies within a
relative ``rtol`` of the full chain's (up to the chain's own rounding-level departures from
concavity), always on the pessimistic side (TPR up, beta down):
mu grows by at most about rtol / z(beta) <= 1.3 rtol (Gomez et al. Eq. 21), every TPR by at
most a relative rtol, and the regret against a Gaussian moves by at most rtol / 2 (the
largest vertical gap bounds the regret between the two curves).
"""

from __future__ import annotations

import numpy as np

#: Chains with at most this many vertices are kept whole. Issue 29 thinned only chains of
#: more than 2^20 vertices; issue 27 thins from 2^15 on: the headline report's two chains
#: (about 180,000 vertices each) cost 4 ms to thin and leave about 25,000 vertices, which
#: makes its hull, fit and regret 14 ms cheaper (mu rises by 1.6e-8 relative, the
#: pessimistic side, far inside THIN_RTOL).
THIN_MIN_VERTICES = 1 << 15

#: Largest relative gap between the thinned chain and the chain it replaces, on the small
#: side (TPR where TPR <= 1/2, beta elsewhere), always toward pessimism.
THIN_RTOL = 1e-6

#: Most vertices in one group (so the prediction is checked in pieces of bounded size).
_MAX_GROUP = 1 << 16

#: Groups are predicted on every this-many-th vertex (a quarter of the work; the groups'
#: boundaries fall on those vertices, and every group is checked all the same) ...
_PREDICT_STRIDE = 4
#: ... and made this many times narrower in the prediction's units, so that nearly every
#: group passes its check at once (at 1.0, a quarter of the headline's groups failed and
#: were checked again in halves; 1.6 passes all of them and costs the least).
_PREDICT_MARGIN = 1.6

#: Unit round-off of float64.
_U = float(np.finfo(float).eps) / 2.0


def _envelope(x: np.ndarray, y: np.ndarray, rate: np.ndarray, b: np.ndarray, e: np.ndarray,
              rtol: float, upper: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each group [b, e] (e - b >= 2) of the run (x increasing): whether its envelope
    vertex (X, Y) is valid and within ``rtol``, and (X, Y). ``upper``: y is TPR
    (non-decreasing, the envelope above it); otherwise y is beta (non-increasing, the
    envelope below it). ``rate``: each edge's rise (fall) per unit x, >= 0, and one more
    element (any). See the module docs, Eq. (1)-(2)."""
    xb, yb, xe, ye = x[b], y[b], x[e], y[e]
    sign = 1.0 if upper else -1.0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        # over the edges b .. e - 1 of each group (reduceat's pairs: the even outputs)
        pairs = np.stack([b, e], axis=1).ravel()
        s1 = np.maximum.reduceat(rate, pairs)[::2] * (1.0 + 8.0 * _U)
        s2 = np.minimum.reduceat(rate, pairs)[::2] * (1.0 - 8.0 * _U)
        xx = xb + sign * (ye - yb - sign * s2 * (xe - xb)) / (s1 - s2)
        xx = np.minimum(np.maximum(np.nan_to_num(xx, nan=-np.inf), xb), xe)
        left, right = s1 * (xx - xb), s2 * (xe - xx)
        if upper:
            yy = np.maximum((yb + left) * (1.0 + 8.0 * _U), ye - right + 8.0 * _U * (ye + right))
            valid = (yy <= ye) & (yy >= yb)
        else:
            yy = np.minimum(yb - left - 8.0 * _U * (yb + left), (ye + right) * (1.0 - 8.0 * _U))
            valid = (yy >= ye) & (yy <= yb)
        valid &= np.isfinite(s1) & np.isfinite(s2) & (s2 >= 0.0) & np.isfinite(yy)
        # the gap at X, against the chain's edge that X falls on: on a concave chain the
        # envelope's gap grows from 0 at v_B (v_E) to its largest at X (L1, L2 less a
        # concave function are convex), so every vertex's relative gap is at most this gap
        # over the group's smallest value (y_B for TPR, y_E for beta)
        j = np.clip(np.searchsorted(x, xx, side="right") - 1, b, e - 1)
        at = y[j] + (y[j + 1] - y[j]) * ((xx - x[j]) / (x[j + 1] - x[j]))
        valid &= sign * (yy - at) <= rtol * (yb if upper else ye)
    return valid, xx, yy


def _predicted_groups(x: np.ndarray, y: np.ndarray, rtol: float, upper: bool) -> np.ndarray:
    """Group boundaries (sorted, unique, from 0 to n - 1) predicted so that each group's
    envelope stays within ``rtol`` (module docs, Tolerance): about one group per unit of
    the integral of sqrt(k / (8 rtol y)) dx, written per vertex as sqrt(slope change *
    local width / (16 rtol y)), on every :data:`_PREDICT_STRIDE`-th vertex (a prediction
    only: every group is checked, and split where it fails)."""
    n = len(x)
    s = _PREDICT_STRIDE if n >= 64 * _PREDICT_STRIDE else 1
    xc, yc = x[::s], y[::s]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        dx = np.subtract(xc[1:], xc[:-1])
        slope = np.subtract(yc[1:], yc[:-1])
        slope /= dx
        # the slope change at each inner vertex (TPR: concave, beta: convex), >= 0
        ds = np.subtract(slope[:-1], slope[1:]) if upper else np.subtract(slope[1:], slope[:-1])
        np.maximum(ds, 0.0, out=ds)
        dx[:-1] += dx[1:]
        ds *= dx[:-1]
        ds /= np.abs(yc[1:-1]) * (16.0 * rtol / _PREDICT_MARGIN)
        np.sqrt(ds, out=ds)
    # an undefined or large width (0/0, a zero y) is one group boundary, no more
    w = np.fmin(ds, 1.0, out=ds)
    phi = np.floor(np.cumsum(w, out=w), out=w)
    cuts = (np.flatnonzero(phi[1:] != phi[:-1]) + 2) * s  # phi[k] belongs to vertex k + 1
    b_all = np.concatenate([[0], cuts[cuts < n - 1], np.arange(0, n - 1, _MAX_GROUP), [n - 1]])
    b_all.sort()
    return b_all[np.concatenate([[True], b_all[1:] != b_all[:-1]])]


def _thin_run(x: np.ndarray, y: np.ndarray, rtol: float, upper: bool
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Thin one monotone run: (kept vertex indices, in order; for each, the envelope
    vertex (X, Y) that follows it, NaN where the next kept vertex follows directly). The
    run's first and last vertices are kept."""
    n = len(x)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        rate = np.empty(n)  # each edge's rise (TPR) or fall (beta) per unit alpha, >= 0
        if upper:
            np.subtract(y[1:], y[:-1], out=rate[:-1])
        else:
            np.subtract(y[:-1], y[1:], out=rate[:-1])
        rate[:-1] /= np.subtract(x[1:], x[:-1])
        rate[-1] = 0.0  # (not an edge: reduceat's last pair reads past the last edge)
    b_all = _predicted_groups(x, y, rtol, upper)
    b, e = b_all[:-1], b_all[1:]
    kept: list[np.ndarray] = []
    vx: list[np.ndarray] = []
    vy: list[np.ndarray] = []
    while len(b):
        single = (e - b) < 2
        kept.append(b[single])
        vx.append(np.full(int(single.sum()), np.nan))
        vy.append(vx[-1])
        b, e = b[~single], e[~single]
        if not len(b):
            break
        ok, xx, yy = _envelope(x, y, rate, b, e, rtol, upper)
        kept.append(b[ok])
        vx.append(xx[ok])
        vy.append(yy[ok])
        b, e = b[~ok], e[~ok]
        m = (b + e) // 2  # a failed group is checked again in two halves
        b, e = np.concatenate([b, m]), np.concatenate([m, e])
    kept.append(np.array([n - 1]))
    vx.append(np.full(1, np.nan))
    vy.append(vx[-1])
    order = np.argsort(np.concatenate(kept), kind="stable")
    return (np.concatenate(kept)[order], np.concatenate(vx)[order], np.concatenate(vy)[order])


def thin_chain(alpha: np.ndarray, tpr: np.ndarray, beta: np.ndarray, rtol: float | None = None,
               min_vertices: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A steep chain (alpha, TPR, beta) with far fewer vertices, lying on or above it in TPR
    and on or below it in beta everywhere, within a relative ``rtol`` on the small side
    (module docs). Chains of at most ``min_vertices`` vertices, or whose alpha repeats, are
    returned unchanged (the defaults: THIN_RTOL and THIN_MIN_VERTICES, read at the call)."""
    rtol = THIN_RTOL if rtol is None else rtol
    min_vertices = THIN_MIN_VERTICES if min_vertices is None else min_vertices
    n = len(alpha)
    if n <= min_vertices or not bool(np.all(alpha[1:] > alpha[:-1])):
        return alpha, tpr, beta
    h = int(np.searchsorted(tpr, 0.5, side="right"))  # TPR <= 1/2 before h (non-decreasing)
    parts_a, parts_t, parts_b = [], [], []
    for lo, hi, upper in ((0, h, True), (h, n, False)):
        if hi - lo < 3:
            parts_a.append(alpha[lo:hi])
            parts_t.append(tpr[lo:hi])
            parts_b.append(beta[lo:hi])
            continue
        x = alpha[lo:hi]
        y = tpr[lo:hi] if upper else beta[lo:hi]
        keep, xx, yy = _thin_run(x, y, rtol, upper)
        extra = ~np.isnan(xx)
        m = len(keep) + int(extra.sum())
        pos = np.arange(len(keep)) + np.concatenate([[0], np.cumsum(extra)[:-1]])
        a_out, t_out, b_out = np.empty(m), np.empty(m), np.empty(m)
        a_out[pos], t_out[pos], b_out[pos] = x[keep], tpr[lo:hi][keep], beta[lo:hi][keep]
        ins = pos[extra] + 1
        a_out[ins] = xx[extra]
        if upper:
            t_out[ins] = yy[extra]
            # beta = 1 - TPR, as on the chain where TPR <= 1/2 (and never above the kept
            # vertex before it, so beta stays non-increasing)
            b_out[ins] = np.minimum(1.0 - yy[extra], b_out[ins - 1])
        else:
            b_out[ins] = yy[extra]
            # TPR = 1 - beta, rounded up, kept between its neighbours' TPRs (so TPR stays
            # non-decreasing and concave up to rounding: vertex_profile, which reads TPR,
            # searches its slopes). Until issue 27 this was the next kept vertex's TPR,
            # which is an upper bound but breaks that concavity: delta(0) read from such a
            # curve could be lower than the accountant's (1.2e-3 at sigma 0.8, q 0.004,
            # T 5000) or far higher (1.6e-3 at sigma 1, q 0.001, T 3000)
            t_ins = np.nextafter(1.0 - yy[extra], 2.0)
            t_out[ins] = np.minimum(np.maximum(t_ins, t_out[ins - 1]), t_out[ins + 1])
        parts_a.append(a_out)
        parts_t.append(t_out)
        parts_b.append(b_out)
    return np.concatenate(parts_a), np.concatenate(parts_t), np.concatenate(parts_b)


__all__ = ["THIN_MIN_VERTICES", "THIN_RTOL", "thin_chain"]
