r"""Group privacy: the curve of groups of k records (Dong, Roth & Su 2022, Thm. 2.14).

If a mechanism is f-DP for neighbouring datasets, it is f_k-DP for datasets that differ in
k records, with

    f_k = 1 - (1 - f)^{o k},                                                        (1)

where h^{o k} is the k-fold functional composition of h = 1 - f. In the TPR plane, h is
the curve itself (TPR = h(alpha)): the group curve's TPR at alpha is h applied k times.

Exact cases
-----------
- mu-GDP: h(alpha) = Phi(Phi^-1(alpha) + mu), so h^{o k} shifts by k mu: f_k = G_{k mu}
  (Dong et al. Cor. 2.15).
- Laplace: T(Lap(0, 1), Lap(eps, 1)) is tested optimally by thresholds x > c (the family
  has a monotone likelihood ratio), so h(alpha) = S(S^{-1}(alpha) - eps) for the Laplace
  survival function S and h^{o k} shifts by k eps: f_k is the Laplace curve of k eps
  (the Laplace mechanism with sensitivity k).

Everything else (numeric, piecewise)
------------------------------------
Let g <= f be a piecewise-linear lower bound (exact for piecewise-linear curves, the
tangent construction of :func:`fdpkit.curves.lower_bound.piecewise_lower_bound` for smooth
ones). Its TPR function h_g >= h is increasing, so h_g^{o k} >= h^{o k} pointwise
(induction: h_g(h_g^{o j}(a)) >= h_g(h^{o j}(a)) >= h(h^{o j}(a))): 1 - h_g^{o k} is a
sound lower bound of (1). h_g^{o k} is computed by repeated squaring. The composition
F o G of two increasing concave piecewise-linear functions is again one, linear between
the vertices of G and the preimages under G of the vertices of F, so evaluating F(G(x)) at
those points gives it exactly. When the vertex count exceeds ``MAX_VERTICES``, segments
are dropped and their neighbours' lines extended to meet: each segment lies on a
supporting line of the concave function, and the minimum of a subset of its supporting
lines is above it, so dropping lines only raises TPR (pessimistic). New vertices take the
larger of the two lines' values, which keeps every segment above the dropped ones.
For symmetric f the group curve is symmetric ((h^{o k})^{-1} = M h^{o k} M for the mirror
M(s) = 1 - s, because h^{-1} = M h M), so only the part with alpha <= beta is kept, where
alpha and TPR carry their digits, and it is mirrored. Finally TPR is raised and beta
lowered by a relative ``ROUND_RTOL`` so that float rounding cannot make the result
optimistic.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from fdpkit._numerics import InputTypeError, ParameterError, _short, int_digits
from fdpkit.curves.base import TradeOffCurve, check_curve
from fdpkit.curves.gaussian import GaussianCurve
from fdpkit.curves.laplace import LaplaceCurve
from fdpkit.curves.lower_bound import PIECEWISE_SAFETY_RTOL as ROUND_RTOL
from fdpkit.curves.lower_bound import _safe
from fdpkit.curves.hull import upper_concave_hull
from fdpkit.curves.piecewise import PiecewiseLinearCurve

#: Most vertices kept between compositions (more are pruned pessimistically).
MAX_VERTICES = 40_001
#: Largest group size accepted.
MAX_K = 10**6


def _check_k(k: Any) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, float, np.integer, np.floating)):
        raise InputTypeError(f"k must be an integer >= 1, got {_short(k)}", "k")
    try:
        kf = float(k)
    except OverflowError:  # an int past the floats (10**400): was a bare OverflowError
        rule = f"at most {MAX_K}" if k > 0 else "an integer >= 1"
        raise ParameterError(f"k must be {rule}, got an integer with {int_digits(int(k))} digits", "k") from None
    if not math.isfinite(kf) or kf < 1 or kf != int(kf):
        raise ParameterError(f"k must be an integer >= 1, got {_short(k)}", "k")
    if kf > MAX_K:
        raise ParameterError(f"k must be at most {MAX_K}, got {_short(k)}", "k")
    return int(kf)


def _compose(fa: np.ndarray, ft: np.ndarray, ga: np.ndarray, gt: np.ndarray):
    """Vertices of F o G for increasing concave PL functions given by vertices (alpha, TPR)."""
    # preimages under G of F's vertex alphas (G is strictly increasing until it reaches 1)
    top = int(np.searchsorted(gt, gt[-1], side="left"))  # first vertex where G is maximal
    inc_a, inc_t = ga[: top + 1], gt[: top + 1]
    y = fa[(fa > inc_t[0]) & (fa < inc_t[-1])]
    pre = np.interp(y, inc_t, inc_a)
    x = np.unique(np.concatenate([ga, pre]))
    return x, np.interp(np.interp(x, ga, gt), fa, ft)


def _prune(a: np.ndarray, t: np.ndarray, limit: int) -> tuple[np.ndarray, np.ndarray]:
    """Drop every other segment until at most ``limit`` vertices remain (module docs)."""
    while len(a) > limit:
        da = np.diff(a)
        s = np.diff(t) / da  # segment slopes, non-increasing
        n_seg = len(s)
        keep = np.arange(0, n_seg, 2)
        if keep[-1] != n_seg - 1:
            keep = np.append(keep, n_seg - 1)
        j, m = keep[:-1], keep[1:]
        with np.errstate(divide="ignore", invalid="ignore"):
            x = (t[m] - t[j] - s[m] * a[m] + s[j] * a[j]) / (s[j] - s[m])
        # the meeting point lies between the end of segment j and the start of segment m
        x = np.where(np.isfinite(x), np.clip(x, a[j + 1], a[m]), a[m])
        y = np.maximum(t[j] + s[j] * (x - a[j]), t[m] + s[m] * (x - a[m]))
        a = np.concatenate([[a[0]], x, [a[-1]]])
        t = np.concatenate([[t[0]], y, [t[-1]]])
        order = np.argsort(a, kind="stable")
        a, t = a[order], np.maximum.accumulate(np.minimum(t[order], 1.0))
        first = np.concatenate([[True], np.diff(a) > 0])
        a, t = a[first], t[first]
    return a, t


def _power(a: np.ndarray, t: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Vertices of h^{o k} by repeated squaring, pruned after each composition."""
    ra, rt = None, None
    ba, bt = a, t
    while True:
        if k & 1:
            if ra is None:
                ra, rt = ba, bt
            else:
                ra, rt = _prune(*_compose(ba, bt, ra, rt), MAX_VERTICES)
        k >>= 1
        if not k:
            return ra, rt
        ba, bt = _prune(*_compose(ba, bt, ba, bt), MAX_VERTICES)


def group_curve(curve: TradeOffCurve, k: int) -> TradeOffCurve:
    """The trade-off curve for groups of ``k`` records: 1 - (1 - f)^∘k, with 1 - f applied k times.

    Dong, Roth & Su (2022), Thm. 2.14: an f-DP mechanism is (1 - (1 - f)^∘k)-DP for
    datasets differing in k records. Exact for Gaussian (G_μ becomes G_kμ) and Laplace (Laplace
    curve of k ε) curves; a sound lower bound (``bound="lower"``) otherwise (see
    the module docs).

    Parameters
    ----------
    curve : TradeOffCurve
        The per-record guarantee (exact or a lower bound).
    k : int
        Group size, ≥ 1.

    Examples
    --------
    >>> from fdpkit import EpsDeltaCurve, GaussianCurve
    >>> group_curve(GaussianCurve(0.5), 3)
    GaussianCurve(mu=1.5)
    >>> f = group_curve(EpsDeltaCurve(1.0), 2)   # 2-DP, and stronger in the middle
    >>> round(float(f.delta_for_epsilon(2.0)), 9), round(float(f.beta(0.2)), 4)
    (0.0, 0.1679)
    >>> round(float(EpsDeltaCurve(2.0).beta(0.2)), 4)
    0.1083
    """
    curve = check_curve(curve, "curve")
    k = _check_k(k)
    check_curve(curve, "curve", upper="group privacy needs a guarantee")
    if k == 1:
        return curve
    if isinstance(curve, GaussianCurve):
        return GaussianCurve(k * curve.mu)
    if isinstance(curve, LaplaceCurve):
        return LaplaceCurve(k * curve.epsilon)
    g = curve.to_piecewise()
    if g.bound == "upper":
        raise ValueError("curve has no sound piecewise-linear lower bound (bound='upper')")
    a, t = _power(np.asarray(g.alphas), np.asarray(g.tprs), k)
    symmetric = curve.is_symmetric
    b = 1.0 - t
    if symmetric:
        # the half alpha <= beta, one vertex past the diagonal, and their mirror images;
        # the vertex set of a symmetric curve is mirror-closed, so their hull is the curve
        n = min(int(np.searchsorted(a - b, 0.0, side="right")) + 1, len(a))
        ah, (th, bh) = a[:n], _safe(t[:n], b[:n])
        mirrored = np.where(bh < 0.5, bh * (1.0 - ROUND_RTOL), np.nextafter(1.0 - th, 0.0))  # rounded down
        a = np.concatenate([ah, mirrored, [1.0]])
        t = np.concatenate([th, 1.0 - ah, [1.0]])
        b = np.concatenate([bh, ah, [0.0]])
        order = np.lexsort((b, a))
        a, t, b = a[order], t[order], b[order]
        first = np.concatenate([[True], np.diff(a) > 0])  # repeated alpha: smallest beta
        a, t, b = a[first], t[first], b[first]
        keep = upper_concave_hull(a, t, b)
        a, t, b = a[keep], t[keep], b[keep]
    else:  # pruning and rounding: the result is a lower bound, never claimed exact
        t, b = _safe(t, b)
    return PiecewiseLinearCurve._from_hull_vertices(a, t, b, "lower", symmetric=symmetric or None)
