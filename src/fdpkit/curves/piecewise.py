"""Piecewise-linear trade-off curves: numeric accountants' output and user-supplied data.

A numeric accountant produces a trade-off curve as finitely many vertices (Kulynych et al.
2024; Gomez et al. Thm. A.10): between vertices the curve is linear. fdpkit stores the
vertices as (alpha, TPR) rather than (alpha, beta), because in the small-alpha tail
TPR = 1 - beta is tiny and ``1 - beta`` would have lost its digits; beta is derived.

Contract checked on construction (OpenDP-style; see STYLE.md):

- alpha and beta are finite, in [0, 1] and of equal length >= 2;
- alpha is non-decreasing, starts at 0 and ends at 1 (repeated alpha values collapse to
  the smallest beta, the pessimistic reading);
- beta is non-increasing, convex and <= 1 - alpha, each within ``CURVE_TOL`` (absolute).

Violations larger than the tolerance raise ValueError saying which property fails and
where. Violations within it are repaired in the pessimistic direction (beta lowered to
1 - alpha, to the running minimum and to the lower convex hull), so a repaired curve is
never above the input.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fdpkit._numerics import CURVE_TOL, ParameterError, as_float_array, check_choice, check_probability
from fdpkit.curves.base import BOUNDS, TradeOffCurve
from fdpkit.curves.hull import _mirror_half, upper_concave_hull

#: Most vertices a curve built from given points may have (the public constructors,
#: :meth:`PiecewiseLinearCurve.from_tpr`, and so a ``CurveMechanism``'s vertices): 10**7 took 4.5 s and 1.6 GiB. :func:`fdpkit.curve_from_points`
#: takes 200,000 points, a ``CurveMechanism`` 200,001 vertices. Curves fdpkit builds itself
#: (accounting, combining, inverses: ``_hull=True`` or ``_capped=False``) are not capped.
MAX_VERTICES = 200_001
#: Most points :meth:`PiecewiseLinearCurve.lower_convex_hull` takes: a hull of many points is a
#: reference (a closed form sampled finely, e.g. 400,000 points in the tests) and keeps few
#: vertices, so it takes more than a curve's given vertices; 10**7 points cost about 5 s.
MAX_HULL_POINTS = 5_000_000


def _repaired(alpha: np.ndarray, tpr: np.ndarray, beta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(TPR, beta) of hull vertices after the cheap pessimistic repairs: TPR >= alpha and
    monotone. A prefix of the vertices is repaired exactly as it is in the whole."""
    over = tpr < alpha
    if not over.any():  # the usual case: the same values without the two selections
        return np.maximum.accumulate(tpr), np.minimum.accumulate(beta)
    t = np.where(over, alpha, tpr)
    np.maximum.accumulate(t, out=t)  # in place: no second temporary of the vertex count
    b = np.where(over, 1.0 - alpha, beta)
    np.minimum.accumulate(b, out=b)
    return t, b


def _check_vertex_count(n: int, limit: int | None = None) -> None:
    """Refuse more than ``limit`` (default :data:`MAX_VERTICES`) given vertices (before any
    pass over them)."""
    limit = MAX_VERTICES if limit is None else limit
    if n > limit:
        raise ParameterError(f"alpha must have at most {limit:,} vertices (a curve from given points), "
                             f"got {n:,}", parameter="alpha")


class _Vertices:
    """The vertex arrays of a curve built from its symmetric half
    (:meth:`PiecewiseLinearCurve._from_symmetric_half`): a non-data descriptor, so that an
    array already in the instance is read directly and a missing one builds the mirror
    half on first read."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        obj._mirror()
        return obj.__dict__[self.name]


class PiecewiseLinearCurve(TradeOffCurve):
    """A trade-off curve given by its vertices, linear in between.

    Parameters
    ----------
    alpha : array_like
        False-positive rates of the vertices, non-decreasing from 0 to 1.
    beta : array_like
        False-negative rates at those alphas.
    bound : {"lower", "upper", "exact"}, default "lower"
        What the curve is relative to the mechanism's true curve: a pessimistic lower
        bound (numeric accountants), an optimistic upper bound, or exact.
    tpr : array_like, optional
        TPR = 1 - β computed accurately by the caller; when given it is the source of
        truth (``beta`` may then be None) and keeps tail digits.
    tol : float, default CURVE_TOL
        Absolute tolerance for the validity checks.

    Examples
    --------
    >>> f = PiecewiseLinearCurve([0, 0.2, 1], [1, 0.4, 0])
    >>> f.beta(0.1), f.bound
    (0.7, 'lower')
    >>> PiecewiseLinearCurve([0, 0.2, 0.4, 1], [1, 0.75, 0.3, 0])
    Traceback (most recent call last):
    ...
    fdpkit.errors.ParameterError: beta must be convex in alpha: beta[1]=0.75 lies 0.1 above the chord of its neighbours at alpha=0.2
    """

    # set on every instance, except that a curve built from its symmetric half builds its
    # mirror half (and so these arrays) on first read: see _from_symmetric_half
    _alpha = _Vertices()
    _tpr_v = _Vertices()
    _beta_v = _Vertices()

    def __init__(
        self,
        alpha: Any,
        beta: Any = None,
        bound: str = "lower",
        *,
        tpr: Any = None,
        tol: float = CURVE_TOL,
        _hull: bool = False,
        _capped: bool = True,
    ) -> None:
        self.bound = check_choice("bound", bound, BOUNDS)
        self._hull_input = _hull
        a = as_float_array("alpha", alpha).ravel()
        if _capped and not _hull:
            _check_vertex_count(a.size)
        b = t = None
        if tpr is not None:
            t = as_float_array("tpr", tpr).ravel()
            check_probability("tpr", t)
        if beta is not None:
            b = as_float_array("beta", beta).ravel()
            check_probability("beta", b)
        if b is None and t is None:
            raise ParameterError("beta (or tpr) must be given, got None", "beta")
        if b is not None and t is not None:
            if len(b) != len(t):
                raise ParameterError(
                    f"beta and tpr must have the same length, got {len(b)} and {len(t)}", "tpr", ("beta", "tpr"))
            gap = np.abs(b + t - 1.0)
            # internal hulls (_hull) combine safety-margined vertices: their beta and TPR
            # are reconciled pessimistically in _validate instead
            if (gap > 1e-12).any() and not _hull:
                i = int(np.argmax(gap))
                raise ParameterError(
                    f"beta and tpr must add up to 1, got beta[{i}] + tpr[{i}] = {float(b[i] + t[i])!r}", "tpr", ("beta", "tpr"))
        elif t is None:
            t = 1.0 - b
        else:
            b = 1.0 - t
        other_name = "tpr" if tpr is not None else "beta"
        if len(a) != len(t):
            raise ParameterError(
                f"alpha and {other_name} must have the same length, got {len(a)} and {len(t)}", other_name, ("alpha", other_name))
        if len(a) < 2:
            raise ParameterError(f"alpha and {other_name} need at least 2 points (a piecewise-linear curve), got {len(a)}", "alpha", ("alpha", other_name))
        check_probability("alpha", a)
        self._alpha, self._beta_v, self._tpr_v = self._validate(
            a, b, t, float(tol), skip_convexity=_hull
        )
        self._symmetric: bool | None = None
        for arr in (self._alpha, self._tpr_v, self._beta_v):
            arr.setflags(write=False)

    @classmethod
    def _from_hull_vertices(
        cls, alpha: np.ndarray, tpr: np.ndarray, beta: np.ndarray, bound: str, *,
        symmetric: bool | None = None,
    ) -> "PiecewiseLinearCurve":
        """Wrap vertices that are already an upper concave hull (internal, no hull pass).

        The caller guarantees: alpha strictly increasing from 0 to 1 and (alpha, TPR)
        concave. Only the cheap pessimistic repairs run (TPR >= alpha, monotone), so a
        rounding slip can only move the curve down, never up. ``symmetric=True`` records
        that the curve is symmetric by construction (``is_symmetric`` then skips its
        check)."""
        obj = cls.__new__(cls)
        obj.bound = check_choice("bound", bound, BOUNDS)
        obj._hull_input = True
        if not (alpha[0] == 0.0 and alpha[-1] == 1.0 and (np.diff(alpha) > 0).all()):
            raise ValueError("internal error: hull vertices must increase from alpha 0 to 1")
        t, b = _repaired(alpha, tpr, beta)
        obj._alpha = np.ascontiguousarray(alpha, dtype=float)
        obj._tpr_v = np.ascontiguousarray(t, dtype=float)
        obj._beta_v = np.ascontiguousarray(b, dtype=float)
        obj._symmetric = symmetric
        for arr in (obj._alpha, obj._tpr_v, obj._beta_v):
            arr.setflags(write=False)
        return obj

    @classmethod
    def _from_symmetric_half(
        cls, alpha: np.ndarray, tpr: np.ndarray, beta: np.ndarray, bound: str
    ) -> "PiecewiseLinearCurve":
        """A symmetric curve from the upper concave hull of its alpha <= beta half (internal).

        The caller guarantees: alpha strictly increasing from 0, (alpha, TPR) concave, and
        the vertices end where the hull's slope first drops to 1 or below (where the halves
        meet, Dong et al. Def. F.1). The curve equals ``_from_hull_vertices`` of the half
        followed by :func:`_mirror_half`, but the mirror half is only built when something
        reads past the half's last alpha (``alphas``, ``beta(0.9)``, ...): the fit, the
        regret, the advantage, the privacy profile and TPRs at FPRs up to the diagonal read
        the half only, which is a prefix of the whole curve's vertices, so they give the
        same numbers either way."""
        obj = cls.__new__(cls)
        obj.bound = check_choice("bound", bound, BOUNDS)
        obj._hull_input = True
        if not (len(alpha) >= 1 and alpha[0] == 0.0 and (np.diff(alpha) > 0).all()):
            raise ValueError("internal error: half-curve vertices must increase from alpha 0")
        t, b = _repaired(alpha, tpr, beta)
        half = (np.ascontiguousarray(alpha, dtype=float), np.ascontiguousarray(t, dtype=float),
                np.ascontiguousarray(b, dtype=float))
        for arr in half:
            arr.setflags(write=False)
        obj._half = half
        obj._raw_half = (alpha, tpr, beta)  # the mirror is built from the unrepaired vertices
        obj._symmetric = True
        return obj

    def _mirror(self) -> None:
        """Build the whole vertex arrays of a curve made by ``_from_symmetric_half``."""
        d = self.__dict__
        raw = d.get("_raw_half")
        if raw is None:
            if "_alpha" in d:  # another thread built them meanwhile
                return
            raise AttributeError("_alpha")
        a, t, b = raw
        ma, mt, mb = _mirror_half(a, t, b)
        alpha = np.concatenate([a, ma])
        if not (alpha[-1] == 1.0 and (np.diff(alpha) > 0).all()):
            raise ValueError("internal error: hull vertices must increase from alpha 0 to 1")
        tpr, beta = _repaired(alpha, np.concatenate([t, mt]), np.concatenate([b, mb]))
        for name, arr in (("_tpr_v", tpr), ("_beta_v", beta), ("_alpha", alpha)):
            arr = np.ascontiguousarray(arr, dtype=float)
            arr.setflags(write=False)
            d[name] = arr
        d.pop("_raw_half", None)

    def _half_end(self) -> float:
        """The largest alpha answered from a stored half exactly (-1 without one)."""
        half = self.__dict__.get("_half")
        return float(half[0][-1]) if half is not None else -1.0

    @classmethod
    def from_tpr(cls, alpha: Any, tpr: Any, bound: str = "lower", *, tol: float = CURVE_TOL):
        """Build from (α, TPR) vertices; use it when TPR was computed accurately.

        Examples
        --------
        >>> f = PiecewiseLinearCurve.from_tpr([0, 1e-12, 1], [0, 1e-10, 1])
        >>> f.tpr(1e-12)
        1e-10
        """
        return cls(alpha, None, bound, tpr=tpr, tol=tol)

    # ------------------------------------------------------------------ validation
    @classmethod
    def lower_convex_hull(
        cls, alpha: Any, tpr: Any, bound: str = "lower", *, beta: Any = None
    ) -> "PiecewiseLinearCurve":
        """The largest convex curve below the points (α, 1 - tpr): no convexity check.

        Used to combine curves (``worst_case``): the result is below every point given,
        so it is a sound lower bound whenever each point is. At most :data:`MAX_HULL_POINTS`
        points.
        """
        a = as_float_array("alpha", alpha).ravel()
        _check_vertex_count(a.size, MAX_HULL_POINTS)
        return cls(a, beta, bound, tpr=tpr, _hull=True)

    @staticmethod
    def _validate(
        a: np.ndarray, b: np.ndarray, t: np.ndarray, tol: float, skip_convexity: bool = False
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if a[0] != 0.0 or a[-1] != 1.0:
            raise ParameterError(
                f"alpha must start at 0 and end at 1, got alpha[0]={float(a[0])!r}, "
                f"alpha[-1]={float(a[-1])!r}", "alpha")
        da = np.diff(a)
        if (da < 0).any():
            i = int(np.flatnonzero(da < 0)[0])
            raise ParameterError(
                f"alpha must be non-decreasing, got alpha[{i + 1}]={float(a[i + 1])!r} < "
                f"alpha[{i}]={float(a[i])!r}", "alpha")
        if (da == 0).any():  # collapse repeated alphas to the smallest beta (largest TPR)
            starts = np.flatnonzero(np.concatenate([[True], da > 0]))
            a, t, b = a[starts], np.maximum.reduceat(t, starts), np.minimum.reduceat(b, starts)
        rise = np.diff(b)
        if (rise > tol).any() and not skip_convexity:
            i = int(np.flatnonzero(rise > tol)[0])
            raise ParameterError(
                f"beta must be non-increasing, got beta[{i + 1}]={float(b[i + 1])!r} > "
                f"beta[{i}]={float(b[i])!r} at alpha={float(a[i + 1])!r}", "beta")
        excess = t - a  # TPR >= alpha  <=>  beta <= 1 - alpha
        if (excess < -tol).any() and not skip_convexity:
            i = int(np.flatnonzero(excess < -tol)[0])
            raise ParameterError(
                f"beta must be <= 1 - alpha, got beta[{i}]={float(b[i])!r} > "
                f"1 - alpha = {float(1 - a[i])!r}", "beta")
        if len(a) >= 3 and not skip_convexity:
            w = (a[1:-1] - a[:-2]) / (a[2:] - a[:-2])
            chord = b[:-2] + w * (b[2:] - b[:-2])
            above = b[1:-1] - chord
            if (above > tol).any():
                i = int(np.flatnonzero(above > tol)[0]) + 1
                raise ParameterError(
                    f"beta must be convex in alpha: beta[{i}]={float(b[i])!r} lies "
                    f"{above[i - 1]:.3g} above the chord of its neighbours at alpha={float(a[i])!r}", "beta")
        # pessimistic repairs within tolerance: beta <= 1 - alpha, non-increasing, convex hull
        over = t < a
        t = np.where(over, a, t)
        b = np.where(over, 1.0 - a, b)
        t = np.maximum.accumulate(t)
        b = np.minimum.accumulate(b)
        if skip_convexity:  # points from several curves: keep beta and TPR consistent
            t = np.maximum(t, 1.0 - b)
            b = np.minimum(b, 1.0 - t)
        keep = upper_concave_hull(a, t, b)
        return (np.ascontiguousarray(a[keep]), np.ascontiguousarray(b[keep]),
                np.ascontiguousarray(t[keep]))

    # ------------------------------------------------------------------ data
    @property
    def alphas(self) -> np.ndarray:
        """Vertex false-positive rates (read-only)."""
        return self._alpha

    @property
    def betas(self) -> np.ndarray:
        """Vertex false-negative rates (read-only)."""
        return self._beta_v

    @property
    def tprs(self) -> np.ndarray:
        """Vertex true-positive rates 1 - β (read-only, accurate in the tail)."""
        return self._tpr_v

    def __len__(self) -> int:
        return len(self._alpha)

    def _params(self) -> dict[str, Any]:
        return {"vertices": len(self._alpha), "bound": self.bound}

    # ------------------------------------------------------------------ hooks
    def _beta(self, alpha: np.ndarray) -> np.ndarray:
        # interpolate from the RIGHT vertex: beta = beta_{j+1} + |slope| (alpha_{j+1} - alpha)
        # adds two non-negative terms, so a tiny beta near the end of a long segment keeps
        # its digits (np.interp from the left subtracts nearly equal numbers there)
        # a stored half answers up to its last alpha exactly as the whole curve does: the
        # same segment, and np.interp returns a vertex's own value at a vertex
        alpha = np.asarray(alpha, dtype=float)
        if alpha.size and float(np.max(alpha)) <= self._half_end():
            rev = self.__dict__.get("_reversed_half")
            if rev is None:
                half = self.__dict__["_half"]
                rev = self.__dict__["_reversed_half"] = (-half[0][::-1], half[2][::-1])
        else:
            rev = self.__dict__.get("_reversed")
            if rev is None:
                rev = self.__dict__["_reversed"] = (-self._alpha[::-1], self._beta_v[::-1])
        return np.interp(-alpha, rev[0], rev[1])

    def _tpr(self, alpha: np.ndarray) -> np.ndarray:
        alpha = np.asarray(alpha, dtype=float)
        if alpha.size and float(np.max(alpha)) <= self._half_end():
            half = self.__dict__["_half"]
            return np.interp(alpha, half[0], half[1])
        return np.interp(alpha, self._alpha, self._tpr_v)  # from the left: no cancellation

    def _breakpoints(self) -> tuple[np.ndarray, np.ndarray]:
        return self._alpha, self._tpr_v

    def _vertex_betas(self) -> np.ndarray:
        return self._beta_v

    def _half_breakpoints(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """(alpha, TPR, beta) of the vertices with alpha <= beta and the first one past the
        diagonal, for curves known to be symmetric (else None). Quantities invariant under
        the mirror (alpha, beta) -> (beta, alpha) are maximised over this half only, where
        alpha and TPR are stored with full tail accuracy."""
        if self._symmetric is not True:
            return None
        cached = self.__dict__.get("_half_bp")
        if cached is not None:
            return cached
        out = self._half_from_store() if "_half" in self.__dict__ else None
        if out is None:
            n = min(int(np.searchsorted(self._alpha - self._beta_v, 0.0, side="right")) + 1,
                    len(self._alpha))
            out = self._alpha[:n], self._tpr_v[:n], self._beta_v[:n]
        self.__dict__["_half_bp"] = out
        return out

    def _half_from_store(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """``_half_breakpoints`` of a stored half without building the mirror half: the
        same arrays as slicing the whole curve, or None where only that is sure (the
        mirror's first vertex merged with others or on the diagonal, or already built)."""
        a, t, b = self.__dict__["_half"]
        c = int(np.searchsorted(a - b, 0.0, side="right"))
        if c < len(a):  # alpha - beta increases: the whole curve's count is c too
            return a[:c + 1], t[:c + 1], b[:c + 1]
        raw = self.__dict__.get("_raw_half")
        if raw is None:
            return None
        ra, rt, rb = raw
        # the mirror's first vertex is the last vertex's image (a hull keeps its first
        # point), repaired as the whole curve's next vertex, unless repeated alphas merge
        # it with others or it lies on the diagonal (then the mirror is built)
        xa, xt, xb = float(rb[-1]), 1.0 - float(ra[-1]), float(ra[-1])
        if len(ra) < 2 or not (rb[-2] > rb[-1]) or xt >= 1.0 or xa <= xb or xa >= 1.0:
            return None
        # repaired as the whole curve's next vertex (the half's last is already repaired)
        rt2, rb2 = _repaired(np.array([a[-1], xa]), np.array([t[-1], xt]), np.array([b[-1], xb]))
        return np.append(a, xa), np.append(t, rt2[1]), np.append(b, rb2[1])

    def _alpha_at_d(self, d: np.ndarray) -> np.ndarray:
        d = np.asarray(d, dtype=float)
        half = self._half_breakpoints() if "_half" in self.__dict__ else None
        if half is not None:
            dv = self.__dict__.get("_half_dv")
            if dv is None:
                dv = self.__dict__["_half_dv"] = (half[2] - half[0])[::-1], half[0][::-1]
            # the half ends past the diagonal; d <= -1 is the end point alpha = 1
            low = d <= -1.0
            if bool(np.all((d >= dv[0][0]) | low)):
                return np.where(low, 1.0, np.interp(d, dv[0], dv[1]))
        dv = self._beta_v - self._alpha  # strictly decreasing along the vertices
        return np.interp(d, dv[::-1], self._alpha[::-1])

    def _advantage_exact(self) -> float:
        if "_half" in self.__dict__:
            # max TPR - alpha over the half's vertices and their images (1 - alpha) - beta:
            # never below the whole curve's maximum (a mirror vertex's repaired TPR is at
            # most the largest image TPR so far, its alpha at least that image's)
            a, t, b = self.__dict__["_half"]
            return max(float(np.max(t - a)), float(np.max((1.0 - a) - b)), 0.0)
        return float(np.max(self._tpr_v - self._alpha))

    @property
    def is_symmetric(self) -> bool:
        """Whether the curve equals its inverse f⁻¹ (it holds for both orderings of neighbouring datasets)."""
        if self._symmetric is None:  # curves are immutable: check once
            inv = self.inverse()
            self._symmetric = len(inv.alphas) == len(self._alpha) and bool(
                np.allclose(inv.alphas, self._alpha, rtol=0, atol=1e-15)
                and np.allclose(inv.betas, self._beta_v, rtol=0, atol=1e-15)
            )
        return self._symmetric

    def _inverse_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        # f^{-1} swaps the roles of alpha and beta: vertices (beta_i, alpha_i), reversed.
        a_new = self._beta_v[::-1].copy()
        b_new = self._alpha[::-1].copy()
        t_new = 1.0 - b_new
        if a_new[-1] < 1.0:  # f(0) < 1: f^{-1}(alpha) = 0 for alpha >= f(0)
            a_new, b_new, t_new = (np.append(a_new, 1.0), np.append(b_new, 0.0),
                                   np.append(t_new, 1.0))
        return a_new, b_new, t_new

    def inverse(self) -> "PiecewiseLinearCurve":
        """The inverse curve f⁻¹: vertices (β_i, α_i), exact.

        Examples
        --------
        >>> f = PiecewiseLinearCurve([0, 0.1, 1], [0.5, 0.2, 0]).inverse()
        >>> f.beta(0.2), f.beta(0.6)
        (0.1, 0.0)
        """
        a_new, b_new, t_new = self._inverse_arrays()
        return PiecewiseLinearCurve(a_new, b_new, self.bound, tpr=t_new, _hull=True)

    def to_piecewise(self, n: int = 0) -> "PiecewiseLinearCurve":
        """The curve itself (already piecewise linear; ``n`` is ignored)."""
        return self
