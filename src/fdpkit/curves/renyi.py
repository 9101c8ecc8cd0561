r"""Trade-off curves implied by Rényi DP and zero-concentrated DP (Gomez et al. App. A.6).

The region of one Rényi constraint
----------------------------------
A mechanism is (t, eps)-RDP (Mironov 2017; Gomez et al. Def. A.3), t > 1, when the Rényi
divergence of order t between its output distributions on neighbouring datasets is at most
eps, for both orderings of every neighbouring pair (as RDP accountants state it). A test
with false-positive rate alpha and false-negative rate beta is a post-processing into one
bit, so by data processing (Balle et al. 2020, "Hypothesis testing interpretations and
Rényi DP"; Asoodeh et al. 2021; Zhu, Dong & Wang 2022) the pair satisfies

    L_1(alpha, beta) = (1 - beta)^t alpha^(1-t) + beta^t (1 - alpha)^(1-t) <= c,     (A.6a)
    L_2(alpha, beta) = L_1(beta, alpha)                                      <= c,     (A.6b)

with c = e^((t-1) eps). Both left-hand sides are jointly convex (sums of perspectives of
x -> x^t), so the feasible set R_t is convex; it is symmetric under (alpha, beta) ->
(beta, alpha) and contains the anti-diagonal beta = 1 - alpha. The trade-off curve implied
by (t, eps)-RDP is its lower boundary f_t, and it is tight: the two-point distributions
on the boundary satisfy the constraint. A list of constraints (t_j, eps_j) holds at once,
so every test lies in the intersection of the R_{t_j}, whose lower boundary is the
pointwise maximum max_j f_{t_j}: the curve of an RDP list. rho-zCDP is (t, rho t)-RDP for
every t > 1 (Bun & Steinke 2016); any finite set of those orders gives a sound curve, and
fdpkit uses a log-spaced grid of orders adapted to rho (the supremum over the missing
orders can only raise the true curve).

Sound piecewise-linear construction
-----------------------------------
Let x0 be any point with L_1(x0) >= c (outside or on the boundary of {L_1 <= c}). By
convexity, every feasible x has grad L_1(x0) . (x - x0) <= L_1(x) - L_1(x0) <= 0, so the
line through x0 normal to the gradient lies below the region: a *supporting line*, sound
wherever x0 was taken. With u = (1 - beta)/alpha > v = beta/(1 - alpha) its slope is
beta'(alpha) = -e^eta with

    e^eta = (1 - 1/t) u (1 - (v/u)^t) / (1 - (v/u)^(t-1)),

and written as TPR = delta + e^eta alpha it is the (eta, delta)-DP statement
delta = TPR_0 - e^eta alpha_0 (Dong et al. 2022, Prop. 2.12). fdpkit

1. takes alphas uniform in a sinh-stretched logit scale (from about 1e-300 to
   1 - 1e-300, dense in the middle) and, for each order, finds by bracketing regula falsi in
   logit(beta) a beta at which L_1 still exceeds c by a relative margin
   (``_LOG_MARGIN``, far above the rounding of the log-space evaluation), so x0 is
   certified outside the region;
2. computes the supporting line there in log space (log1mexp, no cancellation in
   either tail); a line of slope -e^eta with eta >= 0 is kept as (eta, delta); one with
   eta < 0 is mirrored (the region of (A.6b) is the mirror image of (A.6a)) into the line
   (-eta, delta = 1 - alpha_0 - e^(-eta) beta_0); delta is rounded up by
   ``_DELTA_RTOL`` (which also absorbs the rounding of the slope: x0 lies strictly
   outside the region, so nearby slopes still separate it), and lines that would need
   delta <= 0 or e^eta beyond the float range are dropped (dropping a line only lowers
   the curve);
3. takes the lower envelope in TPR of all lines, TPR(alpha) = min_i delta_i + e^eta_i
   alpha, on alpha in [0, alpha_c], alpha_c its crossing with the anti-diagonal; each
   envelope vertex is evaluated as the *larger* of its two lines, so that the chord
   between consecutive vertices lies on or above the line they share;
4. completes the curve by symmetry: vertices (alpha, TPR) and their mirror images
   (1 - TPR, 1 - alpha) (repeated alphas keep the larger TPR). The vertices are kept as
   they are, with only monotone repairs that raise TPR: a generic convex-hull pass
   compares cross products that underflow below alpha ~ 1e-160 and would drop true tail
   vertices, letting a chord cut under the envelope.

5. refines the envelope where it is loose (:mod:`fdpkit.curves._renyi_envelope`): every
   kink is tested with new supporting lines of the nearby orders at alpha_k (L_1) and at
   beta_k (L_2, mirrored), and loose kinks get them; for rho-zCDP the orders themselves are
   refined too (towards t -> 1 where the KL limit binds). beta is then within about 0.05 %
   of the optimal conversion for rho <= 5 (0.2 % on the e^-rho plateau at rho = 20),
   where the fixed grid alone was up to 1.3 % (rho = 5) and 16 % (rho = 20) off.

Every line lies below max_j f_{t_j} (and so do the mirrored ones, the true curve being
symmetric); every chord between consecutive vertices lies on or above a line the two
share; hence the resulting ``bound = "lower"`` curve lies below max_j f_{t_j}: TPR read
from it is an upper bound on the power of any attack, and its ``delta_for_epsilon`` is an
upper bound on the optimal RDP -> (eps, delta) conversion (Asoodeh et al. 2021), never
below it. With no usable line at all the curve is f = 0 (nothing certified), never the
identity.

Conversions at one eps (:func:`renyi_log_delta`) additionally locate, for the few orders
whose Canonne-Kamath-Steinke bound is smallest, the boundary point whose supporting line
has slope exactly e^eps (zooming a logit(alpha) grid): any supporting line of slope
e^eta' <= e^eps bounds TPR - e^eps alpha by its own delta, so the result is sound and
per-order optimal up to rounding.

The tests (``tests/renyi``) check soundness pointwise against an independent brentq
solution of (A.6a)-(A.6b) from alpha = 1e-200 up, the zCDP curve against G_sqrt(2 rho)
and the classic conversion, and validity (monotone, convex, symmetric) with Hypothesis.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from fdpkit._numerics import ParameterError
from fdpkit._numerics import as_float_array, check_nonnegative, check_real, check_scalar, log1mexp
from fdpkit.curves._renyi_envelope import add_kl_lines, envelope
from fdpkit.curves._renyi_envelope import refine as refine_lines
from fdpkit.curves.piecewise import PiecewiseLinearCurve

#: Points per order on the logit(alpha) grid (sinh-stretched; see module docs).
POINTS_PER_ORDER = 300
#: Most tangent points per order (tightness only; bounds memory and time).
MAX_POINTS = 100_000
#: Most tangent lines (orders x points) one curve builds: about 12 us each, so a curve takes
#: at most about 2.5 s (zCDP's 96 orders at 100,000 points took 200 s before this cap).
MAX_LINES = 200_000


def _check_points(points: Any, n_orders: int) -> int:
    points = check_real("points", points, low=2, high=MAX_POINTS, integer=True, scalar=True)
    if points * max(n_orders, 1) > MAX_LINES:
        raise ParameterError(f"points must be at most {MAX_LINES // max(n_orders, 1):,} for {n_orders} orders "
                             f"(at most {MAX_LINES:,} tangent lines in all), got {points!r}", "points")
    return points


#: Regula falsi (Illinois) steps in logit(beta); the bracket end kept is always certified
#: outside the region, so the step count affects tightness only.
_SOLVER_STEPS = 24
_SOLVER_STEPS_DEFAULT = _SOLVER_STEPS
#: A point's solve stops once its bracket in logit(beta) is narrower than this, relative to
#: max(|logit(beta)|, 1) (tightness only: the end kept is certified outside).
_SOLVER_XTOL = 1e-12
#: Fewer steps for the tangent zoom of conversions (converged long before; only tightness).
_ZOOM_SOLVER_STEPS = 14
#: Scale of the sinh-stretched logit(alpha) grid (smaller: denser near alpha = 1/2).
_GRID_SCALE = 3.0
_LOGIT_MIN = -745.0
#: Relative margin (on the magnitude of the log-space terms) by which L_1 must exceed c.
_LOG_MARGIN = 1e-10
#: Relative amount by which every delta is rounded up.
_DELTA_RTOL = 1e-9
#: Lines steeper than e^_ETA_MAX or with log(delta) below _LOG_DELTA_MIN are dropped.
_ETA_MAX = 700.0
_LOG_DELTA_MIN = -700.0
#: Orders refined per conversion by :func:`renyi_log_delta`.
_TANGENT_ORDERS = 3
#: Orders searched for the tangent refinement of rho-zCDP conversions (only the few with
#: the smallest Canonne-Kamath-Steinke bound are refined, so a fine grid is cheap).
_TANGENT_ZCDP_ORDERS = 400
#: Regula falsi steps of the eps(delta) inversions.
_EPS_STEPS = 40
#: Largest eps at which a curve's own profile (which needs e^eps) is used.
_EPS_CURVE_MAX = 700.0
#: Largest order accepted (beyond it, (t - 1) eps overflows any useful range).
ORDER_MAX = 1e7
#: Orders of the zCDP grid (log-spaced in t - 1).
ZCDP_ORDERS = 96


def check_rdp(orders: Any, epsilons: Any) -> tuple[np.ndarray, np.ndarray]:
    """Validate an RDP list: orders > 1 (distinct), epsilons >= 0, same length, and eps(t)
    non-decreasing in t (Rényi divergences are; van Erven & Harremoës 2014, Thm. 3).
    Returns the pairs sorted by order; an epsilon of ``inf`` is allowed (no constraint).

    >>> check_rdp([2, 1.5], [0.2, 0.1])
    (array([1.5, 2. ]), array([0.1, 0.2]))
    >>> check_rdp([1.0], [0.1])
    Traceback (most recent call last):
    ...
    fdpkit.errors.ParameterError: orders must be > 1, got 1.0 (at index 0)
    """
    o = as_float_array("orders", orders)
    e = as_float_array("epsilons", epsilons)
    if o.ndim != 1 or o.size == 0:
        raise ParameterError(f"orders must be a non-empty list of numbers, got {orders!r}", "orders")
    if e.ndim != 1 or e.size == 0:
        raise ParameterError(f"epsilons must be a non-empty list of numbers, got {epsilons!r}", "epsilons")
    if o.size != e.size:
        raise ParameterError(f"orders and epsilons must have the same length, got {o.size} and {e.size}", "epsilons", ("orders", "epsilons"))
    bad = ~(o > 1.0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ParameterError(f"orders must be > 1, got {float(o[i])!r} (at index {i})", "orders")
    if (o > ORDER_MAX).any():
        i = int(np.flatnonzero(o > ORDER_MAX)[0])
        raise ParameterError(f"orders must be <= {ORDER_MAX:g}, got {float(o[i])!r} (at index {i})", "orders")
    check_nonnegative("epsilons", e, allow_inf=True)
    order = np.argsort(o, kind="stable")
    o, e = o[order], e[order]
    if (np.diff(o) == 0).any():
        i = int(np.flatnonzero(np.diff(o) == 0)[0])
        raise ParameterError(f"orders must be distinct, got {float(o[i])!r} twice", "orders")
    drop = np.flatnonzero(np.diff(e) < 0)
    if drop.size:
        i = int(drop[0])
        raise ValueError(
            f"epsilons must be non-decreasing in the order (Rényi divergence grows with t), got "
            f"eps({float(o[i]):g}) = {float(e[i])!r} > eps({float(o[i + 1]):g}) = {float(e[i + 1])!r}"
        )
    return o, e


def check_rho(rho: Any) -> float:
    """rho >= 0 and finite, as a float (ValueError naming ``rho`` otherwise)."""
    return check_scalar("rho", check_nonnegative("rho", rho))


def zcdp_orders(rho: float, n: int = ZCDP_ORDERS) -> np.ndarray:
    """Orders at which rho-zCDP is imposed: t - 1 log-spaced from 1e-3 to a multiple of
    sqrt(700 / rho), the order that binds at alpha = 1e-300 (Gomez et al. App. A.6 takes
    the supremum over all t; a finite subset gives a sound lower bound)."""
    top = min(ORDER_MAX - 1.0, max(50.0, 4.0 * math.sqrt(700.0 / max(rho, 1e-300))))
    return 1.0 + np.geomspace(1e-3, top, n)


def _alpha_grid(n: int) -> np.ndarray:
    """logit(alpha) from -700 to 700, dense in the middle (sinh spacing)."""
    u = np.linspace(-1.0, 1.0, n) * math.asinh(700.0 / _GRID_SCALE)
    return _GRID_SCALE * np.sinh(u)


def _log_sigmoid(x: np.ndarray) -> np.ndarray:
    """log(1 / (1 + e^-x)), accurate in both tails."""
    return -np.logaddexp(0.0, -x)


def _log_sigmoid_pair(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(log sigmoid(x), log sigmoid(-x)) from one exponential and one log1p:
    log sigmoid(+-x) = min(+-x, 0) - log1p(e^-|x|), as accurate as :func:`_log_sigmoid`."""
    s = np.log1p(np.exp(-np.abs(x)))
    return np.minimum(x, 0.0) - s, np.minimum(-x, 0.0) - s


def _excess(xb: np.ndarray, tt: np.ndarray, lc: np.ndarray, la: np.ndarray, l1a: np.ndarray) -> np.ndarray:
    """log L_1 - log c - margin at logit(beta) = ``xb``: > 0 certifies the point (alpha, beta)
    lies outside the region of order ``tt`` (``la``, ``l1a``: log alpha, log(1 - alpha))."""
    lb, l1b = _log_sigmoid_pair(xb)
    p = tt * l1b + (1.0 - tt) * la
    q = tt * lb + (1.0 - tt) * l1a
    margin = _LOG_MARGIN * (np.abs(p) + np.abs(q) + np.abs(lc) + 1.0)
    return np.logaddexp(p, q) - lc - margin


def _boundary_lines(t: np.ndarray, logc: np.ndarray, xa: np.ndarray,
                    steps: int = _SOLVER_STEPS_DEFAULT) -> tuple[np.ndarray, ...]:
    """Supporting lines of {L_1 <= c} at certified-outside points, one per logit(alpha) in
    ``xa`` (broadcast against the column vectors ``t``, ``logc``). Returns (eta, la, l1a,
    lb, l1b, ok): the signed log-slope and the logs of alpha, 1 - alpha, beta, 1 - beta.

    The solver stops at a point once its bracket is narrower than :data:`_SOLVER_XTOL`
    (relative): the points still moving are gathered into shorter arrays as the others stop,
    so that the later steps, which few points need, cost little (about half the steps' work
    in all, for lines that move by parts in 1e12; the end kept is certified either way)."""
    xa = xa + np.zeros_like(t)
    la, l1a = _log_sigmoid_pair(xa)
    tt = np.broadcast_to(t, xa.shape)
    lc = np.broadcast_to(logc, xa.shape)
    lo = np.full(xa.shape, _LOGIT_MIN)
    hi = -xa  # beta = 1 - alpha: on the anti-diagonal, L_1 = 1 <= c
    g_lo, g_hi = _excess(lo, tt, lc, la, l1a), _excess(hi, tt, lc, la, l1a)
    ok = g_lo > 0  # else beta -> 0 is feasible at this alpha: no boundary point
    # Illinois regula falsi, keeping the bracket, on the points with a boundary point
    out_lo = lo.ravel()  # a fresh array (np.full): the results are written into it
    idx = np.flatnonzero(ok.ravel())
    a_lo, a_hi, a_glo, a_ghi = out_lo[idx], hi.ravel()[idx], g_lo.ravel()[idx], g_hi.ravel()[idx]
    a_t, a_c, a_la, a_l1a = (np.ravel(v)[idx] for v in (tt, lc, la, l1a))
    side = np.zeros(idx.size)
    for _ in range(steps):
        with np.errstate(invalid="ignore", divide="ignore"):
            x = (a_lo * a_ghi - a_hi * a_glo) / (a_ghi - a_glo)
        bad = ~np.isfinite(x) | (x <= a_lo) | (x >= a_hi)
        x = np.where(bad, 0.5 * (a_lo + a_hi), x)
        g = _excess(x, a_t, a_c, a_la, a_l1a)
        out = g > 0
        a_lo, a_glo = np.where(out, x, a_lo), np.where(out, g, a_glo)
        a_hi, a_ghi = np.where(out, a_hi, x), np.where(out, a_ghi, g)
        # Illinois: halve the stale end's value when the same end moves twice
        a_ghi = np.where(out & (side > 0), 0.5 * a_ghi, a_ghi)
        a_glo = np.where(~out & (side < 0), 0.5 * a_glo, a_glo)
        side = np.where(out, 1.0, -1.0)
        live = (a_hi - a_lo) > _SOLVER_XTOL * np.maximum(np.abs(a_lo), 1.0)
        n_live = int(np.count_nonzero(live))
        if n_live < 0.8 * live.size:  # gather the points still moving
            out_lo[idx] = a_lo
            if n_live == 0:
                break
            idx = idx[live]
            a_lo, a_hi, a_glo, a_ghi, side = a_lo[live], a_hi[live], a_glo[live], a_ghi[live], side[live]
            a_t, a_c, a_la, a_l1a = a_t[live], a_c[live], a_la[live], a_l1a[live]
    out_lo[idx] = a_lo
    lo = out_lo.reshape(xa.shape)
    lb, l1b = _log_sigmoid_pair(lo)
    lu, lv = l1b - la, lb - l1a
    d = lv - lu  # log(v/u) < 0 strictly below the anti-diagonal
    ok &= d < 0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ds = np.where(ok, d, -1.0)
        eta = (np.log1p(-1.0 / tt) + lu + log1mexp(tt * ds) - log1mexp((tt - 1.0) * ds))
    ok &= np.isfinite(eta)
    return eta, la, l1a, lb, l1b, ok


def _line_deltas(eta, la, l1a, lb, l1b):
    """(|eta|, log delta, usable) of the lines: steep ones as they are, the others mirrored."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        steep = eta >= 0.0
        arg = np.where(steep, eta + la - l1b, -eta + lb - l1a)  # log(e^eta alpha0 / TPR0)
        logd = np.where(steep, l1b, l1a) + log1mexp(np.minimum(arg, 0.0))
    logd = logd + math.log1p(_DELTA_RTOL)
    e_out = np.abs(eta)
    usable = (arg < -1e-12) & (e_out <= _ETA_MAX) & np.isfinite(logd) & (logd >= _LOG_DELTA_MIN)
    return e_out, logd, usable


def _lines_at(t: np.ndarray, logc: np.ndarray, xa: np.ndarray,
              steps: int = _SOLVER_STEPS_DEFAULT) -> tuple[np.ndarray, ...]:
    """(eta >= 0, log delta, usable) of the supporting lines of order ``t`` at logit(alpha)
    = ``xa`` (broadcast): steps 1-2 of the module docs."""
    eta, la, l1a, lb, l1b, ok = _boundary_lines(t, logc, xa, steps)
    e_out, logd, usable = _line_deltas(eta, la, l1a, lb, l1b)
    return e_out, logd, ok & usable


def renyi_lines(orders: np.ndarray, epsilons: np.ndarray, n: int = POINTS_PER_ORDER, *,
                rho: float | None = None, refine: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Sound (eta, log delta) pairs implied by the RDP list (steps 1-2 of the module docs),
    refined at the envelope's loose kinks (:mod:`fdpkit.curves._renyi_envelope`; with
    ``rho`` the orders of rho-zCDP are refined too).

    Every returned pair is an (eta, delta)-DP statement implied by the list, with
    eta >= 0 and delta > 0."""
    keep = np.isfinite(epsilons)
    o = np.asarray(orders, dtype=float)[keep]
    e = np.asarray(epsilons, dtype=float)[keep]
    t = o[:, None]
    if t.size == 0:
        return np.zeros(0), np.zeros(0)
    logc = (t - 1.0) * e[:, None]
    e_out, logd, ok = _lines_at(t, logc, _alpha_grid(n)[None, :])
    t_of = np.broadcast_to(t, ok.shape)[ok]
    e_out, logd = e_out[ok], logd[ok]
    if refine and e_out.size:
        e_out, logd = refine_lines(_lines_at, o, e, e_out, logd, t_of, rho=rho)
    if rho is not None:  # the order-1 (KL) limit of every t > 1 (issue 29, large rho)
        e_out, logd = add_kl_lines(rho, e_out, logd)
    return e_out, logd


def renyi_log_delta(orders: np.ndarray, epsilons: np.ndarray, eta: float, *,
                    n: int = 256, rounds: int = 4) -> float:
    """log delta(eta) implied by the RDP list, order by order at the tangent of slope e^eta
    (the optimal conversion of each order; Asoodeh et al. 2021), rounded up: any supporting
    line with slope e^eta' <= e^eta bounds TPR - e^eta alpha by its own delta. The tangent
    point is located by zooming a logit(alpha) grid. Returns the smallest over orders
    (``inf`` if none applies)."""
    o = np.asarray(orders, dtype=float)
    e = np.asarray(epsilons, dtype=float)
    keep = np.isfinite(e)
    o, e = o[keep], e[keep]
    if o.size == 0:
        return math.inf
    # only the orders whose Canonne-Kamath-Steinke bound is smallest are refined (any
    # subset of the orders gives a sound bound; the optimum sits next to CKS's best order)
    cks = (o - 1.0) * (e - eta + np.log1p(-1.0 / o)) - np.log(o)
    pick = np.argsort(cks)[:_TANGENT_ORDERS]
    t = o[pick][:, None]
    logc = (t - 1.0) * e[pick][:, None]
    lo = np.full(t.shape, -700.0)
    hi = np.full(t.shape, 30.0)
    best = np.full(t.shape[0], np.inf)
    for _ in range(rounds):
        xa = lo + (hi - lo) * np.linspace(0.0, 1.0, n)[None, :]
        e_s, la, l1a, lb, l1b, ok = _boundary_lines(t, logc, xa, _ZOOM_SOLVER_STEPS)
        e_out, logd, usable = _line_deltas(e_s, la, l1a, lb, l1b)
        good = ok & usable & (e_s >= 0.0) & (e_s <= eta)
        cand = np.where(good, logd, np.inf)
        best = np.minimum(best, cand.min(axis=1))
        # slopes decrease along alpha: zoom on the cell where eta' crosses eta
        below = np.where(ok, e_s <= eta, True)
        j = np.argmax(below, axis=1)  # first grid point with eta' <= eta
        j = np.clip(j, 1, n - 1)
        rows = np.arange(t.shape[0])
        lo, hi = xa[rows, j - 1][:, None], xa[rows, j][:, None]
    return float(np.min(best))


def refined_delta_for_epsilon(curve: PiecewiseLinearCurve, eps: float, *, orders=None, epsilons=None,
                              rho: float | None = None) -> float:
    """delta(eps) of a Rényi guarantee: the smaller of two sound bounds, the curve's delta
    and the per-order tangent delta of :func:`renyi_log_delta` (for rho-zCDP the orders are
    chosen freely and refined next to the best order of the Canonne-Kamath-Steinke bound)."""
    if eps > _EPS_CURVE_MAX:  # e^eps overflows in the curve's profile: use the closed forms only
        d_curve = 1.0
    else:
        d_curve = float(curve.delta_for_epsilon(eps))
    if not math.isfinite(eps):
        return d_curve
    if rho is not None:
        if rho == 0.0:
            return d_curve
        t = zcdp_orders(rho, _TANGENT_ZCDP_ORDERS)
        cks = (t - 1.0) * (rho * t - eps + np.log1p(-1.0 / t)) - np.log(t)
        k = int(np.argmin(cks))
        orders = np.linspace(t[max(k - 1, 0)], t[min(k + 1, len(t) - 1)], 257)
        epsilons = rho * orders
    o, e = np.asarray(orders, dtype=float), np.asarray(epsilons, dtype=float)
    # the closed form of Canonne, Kamath & Steinke (2020, Prop. 12) is sound too: it covers
    # extreme losses where every supporting line leaves the float range
    with np.errstate(invalid="ignore", over="ignore"):
        cks_all = (o - 1.0) * (e - eps + np.log1p(-1.0 / o)) - np.log(o)
    cks_all = cks_all[np.isfinite(cks_all)]
    log_cks = float(np.min(cks_all)) if cks_all.size else 0.0
    return min(d_curve, math.exp(min(0.0, renyi_log_delta(o, e, eps), log_cks)))


def refined_epsilon_for_delta(curve: PiecewiseLinearCurve, delta: float, *, orders=None, epsilons=None,
                              rho: float | None = None) -> float:
    """Smallest eps with :func:`refined_delta_for_epsilon` <= delta: Illinois regula falsi on
    log delta(eps) - log delta, always returning the end of the bracket where the condition
    holds (the safe end), so the answer is never below the sound one."""
    kw = {"orders": orders, "epsilons": epsilons, "rho": rho}
    hi = float(curve.epsilon_for_delta(delta))
    if hi > _EPS_CURVE_MAX:  # beyond the float range of e^eps the curve's answer is not trusted
        hi = math.inf
    if delta > 0.0:  # the closed forms are sound too (extreme losses: vacuous curve)
        if rho is not None and rho > 0.0:
            t = zcdp_orders(rho, _TANGENT_ZCDP_ORDERS)
            o, e = t, rho * t
        else:
            o, e = np.asarray(orders, dtype=float), np.asarray(epsilons, dtype=float)
        with np.errstate(invalid="ignore", divide="ignore"):
            cks = e + np.log1p(-1.0 / o) - (math.log(delta) + np.log(o)) / (o - 1.0)
        cks = cks[np.isfinite(cks)]
        if cks.size:
            hi = min(hi, max(0.0, float(np.min(cks)) * (1.0 + 1e-12)))
    if not math.isfinite(hi) or hi == 0.0 or delta == 0.0:
        return hi

    def g(x: float) -> float:
        return math.log(max(refined_delta_for_epsilon(curve, x, **kw), 1e-320)) - math.log(delta)

    if g(0.0) <= 0.0:
        return 0.0
    g_hi = g(hi)
    if g_hi > 0.0:  # pragma: no cover - the curve's own answer always satisfies it
        return hi
    lo = 0.95 * hi  # the curve's answer is within a few per cent of the refined one
    g_lo = g(lo)
    if g_lo <= 0.0:
        lo, g_lo = 0.0, g(0.0)
    side = 0
    for _ in range(_EPS_STEPS):
        x = (lo * g_hi - hi * g_lo) / (g_hi - g_lo) if g_hi != g_lo else 0.5 * (lo + hi)
        if not lo < x < hi:
            x = 0.5 * (lo + hi)
        gx = g(x)
        if gx <= 0.0:
            hi, g_hi = x, gx
            if side < 0:
                g_lo *= 0.5
            side = -1
        else:
            lo, g_lo = x, gx
            if side > 0:
                g_hi *= 0.5
            side = 1
        if hi - lo <= 1e-9 * hi:
            break
    return hi


def renyi_vertices(orders: np.ndarray, epsilons: np.ndarray, n: int = POINTS_PER_ORDER, *,
                   rho: float | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(alpha, TPR, beta) points of the sound symmetric curve of an RDP list (module docs)."""
    eta, logd = renyi_lines(orders, epsilons, n, rho=rho)
    if eta.size == 0:  # no usable line: nothing is certified, so f = 0 (sound, vacuous)
        return np.array([0.0, 1.0]), np.array([1.0, 1.0]), np.array([0.0, 0.0])
    xs, vals, ks, ds, _ = envelope(eta, logd)
    # crossing with the anti-diagonal TPR = 1 - alpha
    c_all = (1.0 - ds) / (1.0 + ks)
    i_c = int(np.argmax(c_all))
    a_c = float(c_all[i_c])
    t_c = max(1.0 - a_c, float(ds[i_c] + ks[i_c] * a_c))
    half = xs < a_c
    a_h = np.append(xs[half], a_c)
    t_h = np.minimum(np.append(vals[half], t_c), 1.0)
    b_h = 1.0 - t_h
    alpha = np.concatenate([a_h, b_h, [1.0]])
    tpr = np.concatenate([t_h, 1.0 - a_h, [1.0]])
    beta = np.concatenate([b_h, a_h, [0.0]])
    order = np.argsort(alpha, kind="stable")
    alpha, tpr, beta = alpha[order], np.clip(tpr[order], 0.0, 1.0), np.clip(beta[order], 0.0, 1.0)
    # repeated alphas (the mirror half rounds 1 - TPR to 1): keep the larger TPR (pessimistic)
    starts = np.flatnonzero(np.concatenate([[True], np.diff(alpha) > 0]))
    return alpha[starts], np.maximum.reduceat(tpr, starts), np.minimum.reduceat(beta, starts)


def _adopt_vertices(curve: PiecewiseLinearCurve, alpha: np.ndarray, tpr: np.ndarray,
                    beta: np.ndarray) -> None:
    """Give ``curve`` the vertices of the envelope as they are (they are concave by
    construction). No generic hull pass: its cross products underflow for vertices below
    about 1e-160 and would drop true tail vertices, which is unsound (the chord would cut
    under the envelope). Only the monotone, pessimistic repairs run."""
    base = PiecewiseLinearCurve._from_hull_vertices(alpha, tpr, beta, "lower", symmetric=True)
    curve.__dict__.update(base.__dict__)


class RDPCurve(PiecewiseLinearCurve):
    """The trade-off curve implied by a list of Rényi DP guarantees (tⱼ, εⱼ):
    a sound piecewise-linear lower bound of maxⱼ f_(tⱼ, εⱼ) (module docs).

    Parameters
    ----------
    orders : sequence of float
        Rényi orders tⱼ > 1 (any order; sorted internally).
    epsilons : sequence of float
        ε(tⱼ) ≥ 0, non-decreasing in t (``inf``: no constraint at that order).
    points : int
        Tangent points per order (tightness, not soundness).

    Examples
    --------
    >>> c = RDPCurve([2.0, 8.0, 32.0], [1.0, 4.0, 16.0])   # satisfied by a Gaussian with mu = 1
    >>> c.bound, c.is_symmetric
    ('lower', True)
    >>> from fdpkit import GaussianCurve
    >>> bool(c.beta(0.1) <= GaussianCurve(1.0).beta(0.1))
    True
    """

    def __init__(self, orders: Sequence[float], epsilons: Sequence[float], *,
                 points: int = POINTS_PER_ORDER) -> None:
        o, e = check_rdp(orders, epsilons)
        self.orders = tuple(float(x) for x in o)
        self.epsilons = tuple(float(x) for x in e)
        points = _check_points(points, len(o))
        if 0.0 in self.epsilons:  # a Renyi divergence 0 at an order > 1: P = Q, the diagonal
            _adopt_vertices(self, np.array([0.0, 1.0]), np.array([0.0, 1.0]), np.array([1.0, 0.0]))
        else:
            _adopt_vertices(self, *renyi_vertices(o, e, points))

    def _params(self) -> dict[str, Any]:
        return {"orders": len(self.orders), "bound": self.bound}


class ZCDPCurve(PiecewiseLinearCurve):
    """The trade-off curve implied by ρ-zCDP, i.e. (t, ρ t)-RDP for all t > 1 (Bun &
    Steinke 2016; Gomez et al. App. A.6): a sound piecewise-linear lower bound, imposed at
    :func:`zcdp_orders`. It lies below G_√(2 ρ), the curve of the Gaussian mechanism
    that is exactly ρ-zCDP.

    Examples
    --------
    >>> from fdpkit import GaussianCurve
    >>> z = ZCDPCurve(0.5)
    >>> bool(z.tpr(1e-6) >= GaussianCurve(1.0).tpr(1e-6))
    True
    """

    def __init__(self, rho: float, *, points: int = POINTS_PER_ORDER) -> None:
        check_real("points", points, low=2, high=MAX_POINTS, integer=True, scalar=True)
        self.rho = check_rho(rho)
        if self.rho == 0.0:
            a, t, b = np.array([0.0, 1.0]), np.array([0.0, 1.0]), np.array([1.0, 0.0])
        else:
            o = zcdp_orders(self.rho)
            points = _check_points(points, len(o))
            a, t, b = renyi_vertices(o, self.rho * o, points, rho=self.rho)
        _adopt_vertices(self, a, t, b)

    def _params(self) -> dict[str, Any]:
        return {"rho": self.rho}
