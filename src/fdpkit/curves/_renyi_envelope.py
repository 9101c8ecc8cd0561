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
REFINE_ALPHA_MIN = 1e-15
#: Refinement rounds (each tests only the kinks that appeared in the round before).
REFINE_ROUNDS = 40
#: Most supporting lines kept (bounds time and memory; tightness only).
REFINE_MAX_LINES = 400_000
#: Orders tested around the two orders meeting at a kink (each side).
_ORDER_PAD = int(__import__('os').environ.get('PAD', 2))
#: Orders tested per kink (spread over the span of the two orders, padded).
_ORDER_COLUMNS = 2 * _ORDER_PAD + 2
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
        j_all = j
        j = np.arange(a_k.size)
        lo = np.searchsorted(grid, t_pair.min(axis=1)) - _ORDER_PAD
        hi = np.searchsorted(grid, t_pair.max(axis=1)) + _ORDER_PAD
        # _ORDER_COLUMNS orders spread over [lo, hi] (all of them when the span is short)
        frac = np.linspace(0.0, 1.0, _ORDER_COLUMNS)[None, :]
        cols = np.clip(np.rint(lo[:, None] + frac * (hi - lo)[:, None]).astype(int), 0, grid.size - 1)
        tm = grid[cols]
        em = rho * tm if rho is not None else eps_grid[cols]
        logc = (tm - 1.0) * em
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            log_a = np.log(a_k)[:, None]
            best_gap = np.zeros(j.size)
            new_eta, new_logd, new_t, best_col = [], [], [], np.zeros(j.size, dtype=int)
            import os
            pts = (_logit(a_k), _logit(b_k)) if not os.environ.get("NOXB") else (_logit(a_k),)
            for x in pts:
                e, ld, ok = lines_at(tm, logc, x[:, None])
                log_tpr = np.logaddexp(ld, e + log_a)
                gap = np.where(ok, tpr_k[:, None] - np.exp(log_tpr), -np.inf)
                c = np.argmax(gap, axis=1)
                g = gap[np.arange(j.size), c]
                better = g > best_gap
                best_col = np.where(better, c, best_col)
                best_gap = np.maximum(best_gap, g)
                new_eta.append(e[np.arange(j.size), c])
                new_logd.append(ld[np.arange(j.size), c])
                new_t.append(tm[np.arange(j.size), c])
                new_ok = g > 0.0
                new_eta[-1], new_logd[-1], new_t[-1] = (new_eta[-1][new_ok], new_logd[-1][new_ok],
                                                        new_t[-1][new_ok])
            horiz = slope * a_k  # e^eta alpha_k: the gap's scale in the FPR direction
            deep = a_k < REFINE_ALPHA_MIN  # below it only beta is held to rtol (module docs)
            scale = np.where(deep, b_k, np.minimum(np.minimum(b_k, tpr_k), horiz))
        loose = best_gap > rtol * scale
        tested = np.append(xs[j_all], np.nan)
        import os
        if os.environ.get("RDEBUG"):
            print("round", _, "lines", eta.size, "kinks tested", j.size, "loose", int(loose.sum()), "grid", grid.size, "time", __import__("time").time())
        checked.update(tested[~loose & np.isfinite(tested)].tolist())
        if not loose.any():
            break
        add_e, add_l, add_t = np.concatenate(new_eta), np.concatenate(new_logd), np.concatenate(new_t)
        eta = np.concatenate([eta, add_e])
        logd = np.concatenate([logd, add_l])
        line_order = np.concatenate([line_order, add_t])
        if rho is not None:  # split the order grid around the best orders of loose kinks
            b = cols[np.arange(j.size), best_col][loose]
            b = np.unique(b)
            u = grid - 1.0  # the grid is geometric in t - 1
            left = 1.0 + np.sqrt(u[np.maximum(b - 1, 0)] * u[b])
            right = 1.0 + np.sqrt(u[b] * u[np.minimum(b + 1, grid.size - 1)])
            cand = np.concatenate([left, right])
            cand = cand[(cand > 1.0) & np.isfinite(cand)]
            merged = np.unique(np.concatenate([grid, cand]))
            keep = np.concatenate([[True], (merged[1:] - 1.0) / (merged[:-1] - 1.0) > _ORDER_MIN_RATIO])
            grid = merged[keep]
    return eta, logd
