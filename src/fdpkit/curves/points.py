"""A trade-off curve from (type I, type II) error points: R fdp's ``fdp()`` of a data frame.

R's fdp package (Aslett, seed document "R fdp ``gdp()`` docs") lets a user pass their own
(alpha, beta) points; the trade-off function they describe is the *lower convex hull* of
the points together with (1, 0), and ``est_gdp()`` finds the smallest mu with
G_mu <= f. fdpkit does the same in one step:

    curve = curve_from_points(fpr, fnr)     # validated, lower convex hull
    fit = fit_gdp(curve, alpha_min=0)        # R's est_gdp, with a certificate

Why the hull and the fit agree with ``est_gdp``: G_mu is convex, so G_mu <= beta_i at every
point implies G_mu <= the largest convex function below the points (the hull), and the hull
is below every point; so both ask for the same smallest mu, attained at a hull vertex:

    mu* = max_i [ Phi^{-1}(1 - alpha_i) + Phi^{-1}(1 - beta_i) ]    (G_mu(alpha) <= beta)

What kind of bound the curve is
-------------------------------
The hull is linear between the points. It is the mechanism's *exact* curve when the points
are the vertices of a piecewise-linear trade-off function (randomized response, a numeric
accountant's output), and a *lower* bound (the default, ``bound="lower"``) when the
mechanism's curve is known to lie on or above those vertices' hull. Points *sampled* from a
smooth curve are not enough for either: the curve bends below the chords between samples,
so the hull is above it there (an optimistic, ``"upper"`` curve that certifies nothing).
Sample densely, or build the curve with the mechanism's own class instead.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fdpkit._numerics import CURVE_TOL, ParameterError, check_choice, check_real
from fdpkit.curves.base import BOUNDS
from fdpkit.curves.piecewise import PiecewiseLinearCurve

#: Most points one curve may be built from (a data frame, not a bulk computation).
MAX_POINTS = 200_000
#: Column names read by :func:`points_from_csv` (R fdp: alpha, beta; fdpkit: fpr, fnr).
FPR_COLUMNS = ("fpr", "alpha", "type1", "type_i", "type i")
FNR_COLUMNS = ("fnr", "beta", "type2", "type_ii", "type ii")


def _point(i: int, a: float, b: float) -> str:
    return f"point {i} (fpr={a:.6g}, fnr={b:.6g})"


def _numbers(name: str, value: Any, other: Any) -> np.ndarray:
    """check_real, but a NaN is reported as the point it sits in."""
    try:
        return check_real(name, value, allow_inf=True)
    except ValueError as exc:
        if "NaN" not in str(exc):
            raise
        v = np.asarray(value, dtype=float).ravel()
        i = int(np.flatnonzero(np.isnan(v))[0])
        try:
            o = float(np.asarray(other, dtype=float).ravel()[i])
        except (TypeError, ValueError, IndexError):
            o = float("nan")
        a, b = (v[i], o) if name == "fpr" else (o, v[i])
        raise ParameterError(f"{name} must be a number in [0, 1]: {_point(i, a, b)} is not", name) from None


def curve_from_points(fpr: Any, fnr: Any, *, bound: str = "lower") -> PiecewiseLinearCurve:
    """The trade-off curve through (type I, type II) error points: their lower convex hull.

    Parameters
    ----------
    fpr : array_like
        Type I errors (false-positive rates, α) of the points, in [0, 1], in any order;
        0 must be among them (the curve's value at FPR 0 is not guessed).
    fnr : array_like
        Type II errors (false-negative rates, β) at those FPRs, in [0, 1].
    bound : {"lower", "exact"}, default "lower"
        What the hull is relative to the mechanism's true curve (see the module notes):
        "exact" when the points are the vertices of its piecewise-linear curve, "lower"
        when its curve lies on or above their hull. "upper" (points sampled from a smooth
        curve, the hull above it between them) is accepted, but certifies nothing.

    Returns
    -------
    PiecewiseLinearCurve
        The largest convex curve below the points and (1, 0); points above the hull are
        dropped, as R fdp does.

    Raises
    ------
    ValueError
        Naming the offending point: outside [0, 1], not a number, fnr > 1 - fpr (a test
        worse than random guessing), FNR increasing with FPR, or no point at FPR 0.

    Notes
    -----
    ``fit_gdp(curve, alpha_min=0)`` is R fdp's ``est_gdp()``: the smallest μ with
    G_μ(α_i) ≤ β_i at every point (attained at a hull vertex, the maximum of
    Φ⁻¹(1 - α_i) + Φ⁻¹(1 - β_i)); its :class:`fdpkit.GDPFit` is the
    certificate (the FPR range it holds on, what the range leaves out, how it was found).

    Examples
    --------
    >>> f = curve_from_points([0, 0.1, 0.3, 0.2, 1], [1, 0.5, 0.2, 0.4, 0])
    >>> [float(a) for a in f.alphas], f.bound
    ([0.0, 0.1, 0.3, 1.0], 'lower')
    >>> from fdpkit import fit_gdp
    >>> round(fit_gdp(f, alpha_min=0).mu, 4)  # at the vertex (0.3, 0.2): isf(0.3) + isf(0.2)
    1.366
    >>> curve_from_points([0, 0.1, 0.2], [1, 0.4, 0.5])
    Traceback (most recent call last):
    ...
    fdpkit.errors.ParameterError: fnr must not increase with fpr: point 2 (fpr=0.2, fnr=0.5) has a larger fnr than point 1 (fpr=0.1, fnr=0.4)
    """
    bound = check_choice("bound", bound, BOUNDS)
    a, b = _numbers("fpr", fpr, fnr), _numbers("fnr", fnr, fpr)
    if a.ndim != 1 or b.ndim != 1:
        raise ParameterError(f"fpr and fnr must be 1-D lists of numbers, got shapes {a.shape} and {b.shape}", "fpr",
                             ("fpr", "fnr"))
    if a.size != b.size:
        raise ParameterError(f"fpr and fnr must have the same length, got {a.size} and {b.size}", "fpr",
                             ("fpr", "fnr"))
    if not 1 <= a.size <= MAX_POINTS:
        raise ParameterError(f"fpr and fnr must have 1 to {MAX_POINTS} points, got {a.size}", "fpr")
    for name, v in (("fpr", a), ("fnr", b)):
        bad = np.flatnonzero(~((v >= 0.0) & (v <= 1.0)))  # NaN and +-inf fail too
        if bad.size:
            i = int(bad[0])
            raise ParameterError(f"{name} must be in [0, 1]: {_point(i, a[i], b[i])} is outside", name)
    above = np.flatnonzero(b > 1.0 - a + CURVE_TOL)
    if above.size:
        i = int(above[0])
        raise ParameterError(f"fnr must be <= 1 - fpr (no test is worse than random guessing): {_point(i, a[i], b[i])} "
                             f"has fpr + fnr = {a[i] + b[i]:.6g} > 1", "fnr")
    if not (a == 0.0).any():
        raise ParameterError(f"fpr must include 0 (the curve's fnr at FPR 0, usually 1): the smallest fpr given is "
                             f"{float(a.min()):.6g}, and the curve before it is unknown", "fpr")
    order = np.lexsort((b, a))  # by fpr, smallest fnr first within ties (the pessimistic reading)
    sa, sb = a[order], b[order]
    # monotone: no point's fnr above the smallest fnr read at a smaller fpr (ties in fpr are
    # two readings of one point; the hull keeps the smaller)
    starts = np.flatnonzero(np.concatenate([[True], np.diff(sa) > 0]))
    group = np.cumsum(np.concatenate([[True], np.diff(sa) > 0])) - 1
    best_before = np.concatenate([[np.inf], np.minimum.accumulate(sb[starts])[:-1]])[group]
    rise = np.flatnonzero(sb > best_before + CURVE_TOL)
    if rise.size:
        k = int(rise[0])
        earlier = np.flatnonzero((sa < sa[k]) & (sb == best_before[k]))
        i, j = int(order[k]), int(order[earlier[0]])
        raise ParameterError(f"fnr must not increase with fpr: {_point(i, a[i], b[i])} has a larger fnr than "
                             f"{_point(j, a[j], b[j])}", "fnr")
    sa = np.append(sa, 1.0)
    sb = np.append(sb, 0.0)
    return PiecewiseLinearCurve.lower_convex_hull(sa, 1.0 - sb, bound, beta=sb)


def points_from_csv(text: str) -> tuple[np.ndarray, np.ndarray]:
    """(fpr, fnr) from CSV text: two columns, with a header naming them (``fpr,fnr``,
    R fdp's ``alpha,beta``; a ``tpr`` column is read as 1 - fnr) or without one (FPR first).
    Blank lines and lines starting with ``#`` are skipped.

    >>> points_from_csv("alpha,beta\\n0,1\\n0.1,0.5\\n1,0")
    (array([0. , 0.1, 1. ]), array([1. , 0.5, 0. ]))
    """
    if not isinstance(text, str):
        raise ParameterError(f"points must be CSV text, got {type(text).__name__}", "text")
    import csv
    import io

    try:
        rows = [r for r in csv.reader(io.StringIO(text, newline="")) if r and any(c.strip() for c in r)
                and not r[0].lstrip().startswith("#")]
    except csv.Error as exc:
        raise ParameterError(f"points CSV is not readable as CSV: {exc}", "text") from None
    if not rows:
        raise ParameterError("points CSV has no rows: give one 'fpr,fnr' pair per line", "text")
    head = [c.strip().lower() for c in rows[0]]
    fi, fn, tpr = 0, 1, False
    if not _numeric(head[0]):
        fprs = [k for k, c in enumerate(head) if c in FPR_COLUMNS]
        fnrs = [k for k, c in enumerate(head) if c in FNR_COLUMNS or c == "tpr"]
        if len(fprs) > 1 or len(fnrs) > 1:  # "fpr,alpha,fnr", "fpr,fnr,tpr": which one is meant?
            twice = [head[k] for k in (fprs if len(fprs) > 1 else fnrs)]
            raise ParameterError(f"points CSV header names {len(twice)} columns for one rate ({', '.join(twice)}): "
                                 "keep one FPR and one FNR (or tpr) column", "text")
        fi = fprs[0] if fprs else -1
        fn = fnrs[0] if fnrs else -1
        tpr = fn >= 0 and head[fn] == "tpr"
        if fi < 0 or fn < 0:
            raise ParameterError(f"points CSV header must name an FPR column ({', '.join(FPR_COLUMNS[:2])}) and an "
                                 f"FNR column ({', '.join(FNR_COLUMNS[:2])}, or tpr), got {','.join(head)!r}", "text")
        rows = rows[1:]
    if len(rows) > MAX_POINTS:
        raise ParameterError(f"points CSV must have at most {MAX_POINTS} rows, got {len(rows)}", "text")
    fpr, fnr = [], []
    width = len(head)
    for line, r in enumerate(rows, start=1):
        if len(r) != width:  # "0,1\n0,5,0,2" (decimal commas): the extra fields were ignored
            raise ParameterError(f"points CSV row {line} has {len(r)} fields, the first line {width} (a decimal "
                                 "comma? write 0.5, not 0,5)", "text")
        if len(r) <= max(fi, fn):
            raise ParameterError(f"points CSV row {line} must have an fpr and an fnr, got {','.join(r)!r}", "text")
        try:
            x, y = float(r[fi]), float(r[fn])
        except ValueError:
            raise ParameterError(f"points CSV row {line} must hold numbers, got {','.join(r)!r}", "text") from None
        fpr.append(x)
        fnr.append(1.0 - y if tpr else y)
    return np.array(fpr), np.array(fnr)


def _numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
