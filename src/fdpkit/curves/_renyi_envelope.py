r"""The lower envelope of Rényi supporting lines, refined where it is loose.

Every supporting line of one order's region (see :mod:`fdpkit.curves.renyi`) is a sound
statement TPR <= delta + e^eta alpha. The curve is the lower envelope (in TPR) of the lines
found; its gap to the true boundary max_t f_t is largest at the envelope's kinks (the
boundary is convex and every line lies below it). So the envelope is refined by testing
its kinks:

1. at every kink (alpha_k, TPR_k), compute new supporting lines of the orders near the two
   lines that meet there, at alpha = alpha_k (the constraint L_1) and at alpha = beta_k (the
   constraint L_2, mirrored): each is a sound line wherever it was taken;
2. a kink is *loose* when one of those lines passes below it by more than
   ``rtol`` times the smallest of beta_k, TPR_k and the horizontal scale e^eta_k alpha_k
   (so beta, TPR and the FPR at a given power are all within about ``rtol`` relative);
   loose kinks get their best lines, tight kinks are never tested again;
3. for rho-zCDP, whose orders are free (every t > 1 holds), the order grid is also
   refined around the best order of each loose kink (geometric midpoints), so the optimum
   over t is approached, not only the optimum over the initial grid.

Adding a line can only lower the envelope (in TPR): soundness never depends on the
refinement, which only decides tightness. The rounds and the number of lines are capped.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

#: Relative gap at which a kink counts as tight (tightness only; see the module docs).
REFINE_RTOL = 5e-4
#: Below this FPR only beta (not TPR, nor the FPR at a given TPR) is held to ``rtol``:
#: TPR there is ~1e-15 or less, and a relative refinement would need a line per few
#: per cent of log(alpha) down to 1e-300 (tightness only).
REFINE_ALPHA_MIN = 1e-16
#: Refinement rounds (each tests only the kinks that appeared in the round before).
REFINE_ROUNDS = 40
#: Most supporting lines kept (bounds time and memory; tightness only).
REFINE_MAX_LINES = 40_000
#: Orders tested around the two orders meeting at a kink (each side).
_ORDER_PAD = 2
#: Orders tested per kink (spread over the span of the two orders, padded).
_ORDER_COLUMNS = 2 * _ORDER_PAD + 2
#: Smallest t - 1 the zCDP refinement goes to (the log-space margin still certifies there).
_ORDER_U_MIN = 1e-7
#: Orders closer than this ratio are not split further (zCDP order refinement).
_ORDER_MIN_RATIO = 1.0 + 1e-5

LinesAt = Callable[[np.ndarray, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]]


def envelope(eta: np.ndarray, logd: np.ndarray) -> tuple[np.ndarray, ...]:
    """Vertices (alpha, TPR) of min_i delta_i + e^eta_i alpha on alpha >= 0, each vertex
    evaluated as the larger of its two lines, and the index of the line of each segment.

    Returns ``(xs, vals, ks, ds, idx)``: ``xs[j]`` is where line ``idx[j]`` (slope
    ``ks[j]``, intercept ``ds[j]``) takes over, ``vals[j]`` the TPR there."""
    k = np.exp(eta)
    dl = np.exp(logd)
    idx = np.lexsort((dl, -k))  # slope descending, then delta ascending
    k, dl = k[idx], dl[idx]
    first = np.concatenate([[True], np.diff(k) != 0])  # equal slopes: keep the smallest delta
    k, dl, idx = k[first], dl[first], idx[first]
    # a line is useless if a later (flatter) line has delta <= its delta
    suffix_min = np.minimum.accumulate(dl[::-1])[::-1]
    later = np.concatenate([suffix_min[1:], [np.inf]])
    useful = dl < later
    k, dl, idx = k[useful].tolist(), dl[useful].tolist(), idx[useful]
    hull: list[int] = []
    cross: list[float] = []  # cross[j]: alpha where hull[j] takes over from hull[j-1]
    for i in range(len(k)):
        while hull:
            j = hull[-1]
            x = (dl[i] - dl[j]) / (k[j] - k[i]) if k[j] > k[i] else math.inf
            if len(hull) >= 2 and x <= cross[-1]:
                hull.pop()
                cross.pop()
                continue
            break
        if hull:
            j = hull[-1]
            cross.append((dl[i] - dl[j]) / (k[j] - k[i]) if k[j] > k[i] else math.inf)
        else:
            cross.append(0.0)
        hull.append(i)
    ks = np.array([k[i] for i in hull])
    ds = np.array([dl[i] for i in hull])
    xs = np.array(cross)
    ix = idx[np.array(hull, dtype=int)]
    start = max(int(np.searchsorted(xs, 0.0, side="right")) - 1, 0)
    ks, ds, xs, ix = ks[start:], ds[start:], xs[start:], ix[start:]
    xs[0] = 0.0
    vals = ds + ks * xs
    if len(xs) > 1:
        vals[1:] = np.maximum(vals[1:], ds[:-1] + ks[:-1] * xs[1:])
    vals[0] = ds[0]
    return xs, vals, ks, ds, ix


def _logit(p: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.clip(np.log(p) - np.log1p(-p), -700.0, 700.0)


def refine(lines_at: LinesAt, orders: np.ndarray, epsilons: np.ndarray, eta: np.ndarray,
           logd: np.ndarray, line_order: np.ndarray, *, rho: float | None = None,
           rtol: float = REFINE_RTOL, rounds: int = REFINE_ROUNDS,
           max_lines: int = REFINE_MAX_LINES) -> tuple[np.ndarray, np.ndarray]:
    """Refine the lines ``(eta, logd)`` (each from order ``line_order``) at the envelope's
    loose kinks (module docs); returns the enlarged ``(eta, logd)``.

    ``lines_at(t, logc, x)`` returns ``(eta, logd, ok)`` of the supporting lines of order
    ``t`` at logit(alpha) = ``x`` (broadcast). ``orders``/``epsilons`` are the RDP list; with
    ``rho`` the orders are free (eps(t) = rho t) and refined too."""
    grid, first = np.unique(np.asarray(orders, dtype=float), return_index=True)
    eps_grid = np.asarray(epsilons, dtype=float)[first]
    checked: set[float] = set()
    for _ in range(rounds):
        if eta.size >= max_lines:
            break
        xs, vals, ks, ds, ix = envelope(eta, logd)
        c_all = (1.0 - ds) / (1.0 + ks)
        i_c = int(np.argmax(c_all))
        a_c = float(c_all[i_c])
        j = np.flatnonzero((xs > 0.0) & (xs <= a_c))
        j = j[[float(x) not in checked for x in xs[j]]] if checked else j
        # the kinks, and the crossing with the anti-diagonal (the end of the stored half,
        # whose mirror image is the rest of the curve), tested as a kink of line i_c
        a_k = np.append(xs[j], a_c)
        tpr_k = np.minimum(np.append(vals[j], 1.0 - a_c), 1.0)
        b_k = 1.0 - tpr_k
        t_pair = np.stack([np.append(line_order[ix[j - 1]], line_order[ix[i_c]]),
                           np.append(line_order[ix[j]], line_order[ix[i_c]])], axis=1)
        slope = np.append(ks[j], ks[i_c])
        tested = np.append(xs[j], np.nan)  # the crossing moves: never marked tight
        lo = np.searchsorted(grid, t_pair.min(axis=1)) - _ORDER_PAD
        hi = np.searchsorted(grid, t_pair.max(axis=1)) + _ORDER_PAD
        # _ORDER_COLUMNS orders spread over [lo, hi] (all of them when the span is short)
        frac = np.linspace(0.0, 1.0, _ORDER_COLUMNS)[None, :]
        cols = np.clip(np.rint(lo[:, None] + frac * (hi - lo)[:, None]).astype(int), 0, grid.size - 1)
        tm = grid[cols]
        em = rho * tm if rho is not None else eps_grid[cols]
        logc = (tm - 1.0) * em
        rows = np.arange(a_k.size)
        cand_e, cand_l, cand_t, gaps = [], [], [], []
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            log_a = np.log(a_k)[:, None]
            for x in (_logit(a_k), _logit(b_k)):  # constraint L_1 at alpha_k, L_2 (mirrored) at beta_k
                e, ld, ok = lines_at(tm, logc, x[:, None])
                gap = np.where(ok, tpr_k[:, None] - np.exp(np.logaddexp(ld, e + log_a)), -np.inf)
                c = np.argmax(gap, axis=1)
                cand_e.append(e[rows, c])
                cand_l.append(ld[rows, c])
                cand_t.append(c)
                gaps.append(gap[rows, c])
            g = np.stack(gaps)  # (2, kinks)
            best = np.argmax(g, axis=0)
            best_gap = g[best, rows]
            best_col = np.stack(cand_t)[best, rows]
            horiz = slope * a_k  # e^eta alpha_k: the gap's scale in the FPR direction
            deep = a_k < REFINE_ALPHA_MIN  # below it only beta is held to rtol (module docs)
            scale = np.where(deep, b_k, np.minimum(np.minimum(b_k, tpr_k), horiz))
            excess = best_gap / (rtol * scale)
        loose = excess > 1.0
        checked.update(tested[~loose & np.isfinite(tested)].tolist())
        if not loose.any():
            break
        # the loosest kinks first, within the line budget
        budget = max(max_lines - eta.size, 0) // 2
        take = np.flatnonzero(loose)
        if take.size > budget:
            take = take[np.argsort(-excess[take])[:budget]]
        for e, ld, c, gp in zip(cand_e, cand_l, cand_t, gaps):
            add = take[gp[take] > 0.0]
            eta = np.concatenate([eta, e[add]])
            logd = np.concatenate([logd, ld[add]])
            line_order = np.concatenate([line_order, tm[add, c[add]]])
        if rho is not None:  # split the order grid around the best orders of loose kinks
            b = np.unique(cols[take, best_col[take]])
            u = grid - 1.0  # the grid is geometric in t - 1
            left = 1.0 + np.sqrt(u[np.maximum(b - 1, 0)] * u[b])
            right = 1.0 + np.sqrt(u[b] * u[np.minimum(b + 1, grid.size - 1)])
            # past either end of the grid: a smaller t - 1 (towards the KL limit t -> 1, which
            # binds for large rho at beta ~ e^-rho) or a larger order
            edge_lo = u[0] / 8.0 if (b == 0).any() and u[0] > _ORDER_U_MIN else np.nan
            edge_hi = u[-1] * 8.0 if (b == grid.size - 1).any() else np.nan
            cand = np.concatenate([left, right, 1.0 + np.array([edge_lo, edge_hi])])
            cand = cand[(cand > 1.0) & np.isfinite(cand)]
            merged = np.unique(np.concatenate([grid, cand]))
            distinct = np.concatenate([[True], (merged[1:] - 1.0) / (merged[:-1] - 1.0) > _ORDER_MIN_RATIO])
            grid = merged[distinct]
    return eta, logd


#: KL (order t -> 1) lines of rho-zCDP: bisection steps for c (in log c), and rounds over the
#: kinks.
_KL_STEPS = 50
_KL_ROUNDS = 3
#: The range of c searched (h_c of a large rho keeps falling towards 1 past c = 1,400).
_KL_C_RANGE = (1e-3, 1e4)


def _kl_delta(rho: float, c: np.ndarray, log_k: np.ndarray) -> np.ndarray:
    """delta = max_{alpha in [0, 1]} h_c(alpha) - k alpha, rounded up (see :func:`kl_lines`)."""
    log_e = c + np.log(-np.expm1(-c))  # log(e^c - 1)
    k = np.exp(log_k)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        a_star = np.exp(-np.log(c) - log_k) - np.exp(-log_e)
        inner = np.where(a_star <= 0.0, 0.0, np.where(a_star >= 1.0, c, log_e - np.log(c) - log_k))
        a_star = np.clip(a_star, 0.0, 1.0)
        h = (rho + inner) / c
        delta = h - k * a_star
        u = np.finfo(float).eps / 2.0
        delta += 16.0 * u * (np.abs(h) + k * a_star + (rho + np.abs(inner) + np.abs(log_k)) / c)
    return delta


def _kl_best_c(rho: float, alpha: np.ndarray) -> np.ndarray:
    """argmin_c h_c(alpha) per alpha, c in :data:`_KL_C_RANGE` (tightness only: every c gives
    a sound line).

    With g(c) = rho + log(1 + alpha (e^c - 1)), convex in c with g(0) = rho > 0, h_c = g(c) / c
    has derivative (c g'(c) - g(c)) / c^2, whose numerator is increasing (its derivative is
    c g''(c) >= 0) and starts at -rho: h_c falls until that numerator changes sign and rises
    after, so bisecting on its sign (in log c, :data:`_KL_STEPS` steps: to a few parts in
    1e14 of log c) finds the minimiser, where a grid search over 1,024 values of c found it
    to about 2e-7 of log c at 20 times the cost. g'(c) = alpha e^c / (1 + alpha (e^c - 1)),
    both in log space (no overflow at c = 1e4)."""
    log_a = np.log(alpha)
    lo = np.full(alpha.shape, math.log(_KL_C_RANGE[0]))
    hi = np.full(alpha.shape, math.log(_KL_C_RANGE[1]))
    for _ in range(_KL_STEPS):
        mid = 0.5 * (lo + hi)
        c = np.exp(mid)
        log_g1 = np.logaddexp(0.0, log_a + c + np.log(-np.expm1(-c)))  # log(1 + alpha (e^c - 1))
        rising = c * np.exp(log_a + c - log_g1) > rho + log_g1  # c g'(c) > g(c)
        lo, hi = np.where(rising, lo, mid), np.where(rising, mid, hi)
    return np.exp(0.5 * (lo + hi))


def kl_lines(rho: float, alpha: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""Supporting lines (eta, log delta) of rho-zCDP's order-1 limit D_KL(P || Q) <= rho,
    tangent near the FPRs ``alpha``.

    The orders t > 1 approach it only as t -> 1, and at large rho it decides the curve where
    beta ~ e^-rho (the refinement's orders stop at t - 1 = 1e-7, 0.2 % short at rho = 20).
    By Donsker and Varadhan, D_KL(P || Q) >= E_P g - log E_Q e^g for every g; with g = c on
    the rejection region and 0 elsewhere, a test with FPR alpha (under Q) and TPR T (under P)
    has T <= h_c(alpha) = (rho + log(1 + alpha (e^c - 1))) / c for every c > 0, and the
    infimum over c is the binary KL constraint itself. h_c is concave, so for any slope k
    the line TPR <= k alpha + delta with delta = max_{alpha in [0, 1]} h_c(alpha) - k alpha
    is sound; the maximiser is alpha* = 1/(c k) - 1/(e^c - 1), clipped to [0, 1], where
    1 + alpha* (e^c - 1) = (e^c - 1)/(c k) (no overflow: log(e^c - 1) = c + log1p(-e^-c)).
    delta is rounded up by 16 unit round-offs of its terms. Soundness holds for every (c, k);
    c = argmin h_c(alpha) and k = h_c'(alpha) only make the line tangent at alpha. Only
    slopes k >= 1 are kept (the half of the curve the envelope builds)."""
    alpha = np.asarray(alpha, dtype=float)
    alpha = alpha[(alpha > 0.0) & (alpha < 1.0)]
    if alpha.size == 0:
        return np.zeros(0), np.zeros(0)
    c = _kl_best_c(rho, alpha)
    log_e = c + np.log(-np.expm1(-c))
    log_k = log_e - np.log(c) - np.logaddexp(0.0, np.log(alpha) + log_e)  # h_c'(alpha)
    delta = _kl_delta(rho, c, log_k)
    with np.errstate(invalid="ignore"):
        ok = (log_k >= 0.0) & np.isfinite(delta) & (delta > 0.0)
    return log_k[ok], np.log(delta[ok])


def add_kl_lines(rho: float, eta: np.ndarray, logd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Add KL lines (:func:`kl_lines`) at the envelope's kinks and their geometric midpoints
    (below the anti-diagonal crossing), for a few rounds."""
    if eta.size == 0 or not math.isfinite(rho) or not rho > 0:
        return eta, logd
    for _ in range(_KL_ROUNDS):
        xs, _, ks, ds, _ = envelope(eta, logd)
        a_c = float(np.max((1.0 - ds) / (1.0 + ks)))
        x = xs[(xs > 0.0) & (xs <= a_c)]
        if x.size == 0:
            break
        mids = np.sqrt(x[1:] * x[:-1]) if x.size > 1 else np.zeros(0)
        e, ld = kl_lines(rho, np.concatenate([x, mids, [a_c]]))
        eta, logd = np.concatenate([eta, e]), np.concatenate([logd, ld])
    return eta, logd
