r"""A privacy loss distribution -> its certified trade-off curve (closed forms: see
:mod:`fdpkit.accounting.closed_form`).

Derivation of the numeric curve
-------------------------------
dp_accounting represents each adjacency direction (remove, add) of a mechanism by a
discrete privacy-loss PMF: losses l_0 < ... < l_{n-1} on a grid of width ``discretization``
with masses p_i = Pr[Y = l_i] under the alternative ("upper") distribution, plus
m_inf = Pr[Y = +inf]. With pessimistic connect-the-dots discretisation its hockey-stick
divergence

    delta(eps) = m_inf + sum_{l_i > eps} (1 - e^{eps - l_i}) p_i            (1)

upper-bounds the mechanism's for every eps >= 0 (Doroshenko et al. 2022), and the
accountant certifies (eps, delta(eps))-DP for all eps >= 0, for both orderings of every
pair of neighbouring datasets (``get_delta_for_epsilon`` takes the larger direction).

The null-hypothesis masses come from the same PMF by change of measure,
q_i = Pr[X = l_i] = e^{-l_i} p_i (Gomez et al. Thm. A.7). Rejecting for large loss
(Neyman-Pearson; Gomez et al. Thm. A.10, Algorithm 2 of Kulynych et al. 2024) gives the
vertices

    alpha_k = sum_{i>k} q_i,   TPR_k = m_inf + sum_{i>k} p_i,

and consecutive vertices are joined by a segment of slope p_i/q_i = e^{l_i}. By Dong et
al. Prop. 2.12 the profile implied by a curve is delta(eps) = sup_alpha TPR - e^eps alpha,
attained at the vertex where the slope passes e^eps: for eps >= 0 it depends only on the
vertices built from non-negative losses, and it equals (1) exactly. fdpkit therefore keeps
those vertices (the steep part of the curve, from alpha = 0 to slope 1) and completes the
curve by symmetry (Dong et al. Def. F.1: an (eps, delta)-DP statement covers both
orderings): the steep vertices and their mirror images (alpha, TPR) -> (1 - TPR, 1 - alpha)
are joined by their upper concave hull; the halves meet on a segment of slope 1, the
eps = 0 line. The result is the symmetric curve implied by the accountant's privacy
profile {(eps, delta(eps)) : eps >= 0} (Dong et al. Thm. 2.4): its implied delta(eps) is
the accountant's, never smaller.
Both directions are combined pessimistically by the lower convex hull of their minimum
(``worst_case``), whose profile is the larger of the two, as in dp_accounting.

Only non-negative losses are used, so the masses at negative losses play no role.
Compositions are computed by :mod:`fdpkit.accounting.tilted`, whose PMF dominates the
exact composition of the single-step PMFs (every tail sum an upper bound, total mass at
most 1), so FFT round-off can neither lower a TPR nor collapse the curve. Masses are summed
from the small end (suffix sums), so alpha and TPR keep their digits in the tail; the sums'
own rounding is absorbed by rounding the k-th TPR up and alpha down by a relative (k + 2) u.
Mirrored vertices take their beta from alpha exactly.
"""

from __future__ import annotations

import bisect
from typing import Any

import numpy as np

from fdpkit._scratch import roundoff_factors, scratch
from fdpkit.accounting import _chain_thinning as thinning
from fdpkit.accounting._chain_thinning import thin_chain
from fdpkit.accounting._exact_sum import exact_sum_nonnegative, sum_upper_bound
from fdpkit.accounting._pld_adapter import PmfArrays
from fdpkit.accounting.profile import PldProfile, _Direction
from fdpkit.curves import PiecewiseLinearCurve
from fdpkit.curves.hull import _dedup, upper_concave_hull


def _steep_chain(a: PmfArrays | _Direction) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Vertices (alpha, TPR, beta) of the steep half of one direction (see module docs), from
    the reversed losses and null masses e^{-l} p that the privacy profile computes anyway.

    Past the diagonal beta is the larger of two lower bounds: 1 - TPR, and beta summed from the small end,
    (1 - m_inf - S) + (the kept masses below the vertex), S the exactly rounded sum of the
    kept masses. The second keeps beta's digits where TPR is within the TPR slack
    (k + 2) u of 1 (at large mu, or with 10^5 and more vertices, that slack exceeds beta
    itself and would round TPR up to 1: a blatant-disclosure vertex at FPR 0; issue 29)."""
    d = a if isinstance(a, _Direction) else _Direction(a)
    k = d.n_steep  # losses descend: the first k are >= 0
    # a mass at loss exactly 0 is a segment of slope 1 (the eps = 0 line): it adds nothing to
    # delta(eps) for eps >= 0, and the curve reaches that line from its start vertex (the
    # cut of _symmetric_hull). Its end vertex is left out: where nearly all the mass sits at
    # 0 (sigma = 1e12, q = 1e-14) its mirror image fell at FPR 0 with TPR 1 - sum q, an atom
    # the profile does not imply (mu read 0.04 where the run is 1e-11-GDP). Its mass counts
    # below the vertex, as the masses at negative losses do.
    if k and d.losses[k - 1] == 0.0:
        k -= 1
    # FFT round-off leaves masses of about -1e-18: they are left out (as 0 they can only
    # raise TPR, the pessimistic side), as are the vertices zero masses would repeat
    probs = d.probs[:k]
    has_mass = probs > 0
    all_mass = bool(has_mass.all())
    n = k if all_mass else int(np.count_nonzero(has_mass))
    # the vertex arrays are built in place (the curve keeps them); the temporaries live in
    # scratch buffers (fdpkit._scratch); every value is computed as before, bit for bit
    alpha = np.empty(n + 1)
    tpr = np.empty(n + 1)
    alpha[0] = tpr[0] = 0.0
    if all_mass or bool((probs >= 0).all()):
        # no negative mass: the profile's sequential sums, read at the kept masses, are
        # the cumulative sums of p and q exactly (adding a zero leaves a sum unchanged)
        cq, cp = d.lower_after[:k], d._cp[:k]  # noqa: SLF001
        if all_mass:
            alpha[1:], tpr[1:] = cq, cp
        else:
            # boolean indexing: several times faster than np.compress(..., out=) on
            # millions of vertices, the same values
            alpha[1:] = cq[has_mass]
            tpr[1:] = cp[has_mass]
    else:
        np.cumsum(probs[has_mass], out=tpr[1:])
        np.cumsum(d.lower_inc[:k][has_mass], out=alpha[1:])
    # the k-th sequential sum of non-negative terms is within a relative (k - 1) u of the
    # exact one: TPR is rounded up and alpha down by (k + 2) u, so no vertex moves the
    # optimistic way (relative to its own sum, so tail vertices keep their digits)
    down, up = roundoff_factors(n + 1, _UNIT_ROUNDOFF)  # 1 -+ (k + 2) u, kept per thread
    alpha *= down
    tpr += max(0.0, float(d.m_inf))
    tpr *= up
    np.minimum(tpr, 1.0, out=tpr)
    if alpha[-1] > tpr[-1]:
        raise ValueError(
            f"the PLD's null mass above loss 0 ({alpha[-1]!r}) exceeds its alternative mass "
            f"({tpr[-1]!r}): not a valid privacy loss distribution"
        )
    beta = 1.0 - tpr
    # the small-end sums below replace beta only where they are below _SMALL_BETA and above
    # beta: where every beta is at least _SMALL_BETA (mu ~ 1.6: beta stays near 0.2 along the
    # whole steep chain) no value can be replaced, and the sums are skipped (issue 27)
    if len(beta) and float(beta.min()) >= _SMALL_BETA:
        return alpha, tpr, beta
    kept = probs if all_mass else probs[has_mass]
    if len(kept):
        # beta_j = (1 - m_inf - S) + sum of the kept masses after vertex j, each part
        # rounded down: S is an upper bound on the exact sum within two units in the last
        # place (_exact_sum.sum_upper_bound), 1 - S is exact for S in [0.5, 2] (Sterbenz)
        # and within u otherwise, and the suffix sums of n non-negative terms are within a
        # relative n u
        rest = max(0.0, (1.0 - sum_upper_bound(kept)) - max(0.0, float(d.m_inf)) - 4.0 * _UNIT_ROUNDOFF)
        # masses stored at negative losses (tilted's Step 5 keeps P[Y < 0] at loss -d) are
        # a lower bound on the mass below 0 that keeps its digits when it is tiny
        neg = d.probs[k:]
        if len(neg):
            rest = max(rest, exact_sum_nonnegative(np.maximum(neg, 0.0)) * (1.0 - 2.0 * _UNIT_ROUNDOFF))
        low = scratch("pld_curve.low", n + 1)
        np.cumsum(kept[::-1], out=low[-2::-1])  # the suffix sums, summed from the small end
        low[-1] = 0.0
        low *= 1.0 - (n + 2.0) * _UNIT_ROUNDOFF
        low += rest
        low *= 1.0 - 2.0 * _UNIT_ROUNDOFF
        # used only where beta is small (where 1 - TPR has lost the digits that matter);
        # elsewhere beta stays 1 - TPR bit for bit, as the curve's readers assume. A
        # running minimum keeps beta non-increasing (each value still a lower bound)
        use = np.greater(low, beta, out=scratch("pld_curve.use", n + 1, bool))
        use &= np.less(low, _SMALL_BETA, out=scratch("pld_curve.small", n + 1, bool))
        if use.any():
            np.copyto(beta, low, where=use)
            np.minimum.accumulate(beta, out=beta)
    return alpha, tpr, beta


#: beta below which a steep chain's beta is summed from the small end (see _steep_chain).
_SMALL_BETA = 2.0 ** -20

#: Unit round-off of float64.
_UNIT_ROUNDOFF = float(np.finfo(float).eps) / 2.0

#: Relative margin by which a point must lie below another direction's chain to be dropped
#: before the hull (far above float rounding, so only true non-vertices go).
_DOMINATED_RTOL = 1e-12


def _merge_order(x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    """The permutation that sorts ``concatenate([x1, x2])`` stably, for two sorted runs.
    numpy's stable sort (timsort for floats) finds the two runs and merges them in linear
    time: several times faster than binary searches of one run in the other."""
    both = scratch("pld_curve.merge_keys", len(x1) + len(x2))
    both[:len(x1)] = x1
    both[len(x1):] = x2
    return np.argsort(both, kind="stable")


def _merged(runs: tuple[tuple[np.ndarray, np.ndarray], ...], order: np.ndarray,
            name: str) -> np.ndarray:
    """``concatenate(runs)[order]`` computed in the scratch buffers ``name`` (a temporary:
    see :mod:`fdpkit._scratch`); the values are the same elements, moved."""
    n = sum(len(r) for r in runs)
    cat = scratch(name + ".cat", n)
    pos = 0
    for r in runs:
        cat[pos:pos + len(r)] = r
        pos += len(r)
    return np.take(cat, order, out=scratch(name, n), mode="clip")  # order is in range: "clip" skips the buffered check


def _fold(alpha: np.ndarray, tpr: np.ndarray, beta: np.ndarray,
          slot: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A steep chain folded onto the side alpha <= beta: vertices past the diagonal are
    replaced by their mirror images (alpha, TPR) -> (1 - TPR, 1 - alpha), with 1 - TPR
    read from the accurately stored ``beta``. Returns (alpha, TPR, beta) sorted by alpha
    (scratch buffers of ``slot`` when any vertex is mirrored: temporaries of
    :func:`_symmetric_hull`, one slot per chain)."""
    # alpha - beta increases: np.searchsorted(alpha - beta, 0.0, side="right"), the same
    # binary search (bisect's midpoints are numpy's) on the differences it visits only
    cut = bisect.bisect_right(range(len(alpha)), 0.0, key=lambda i: float(alpha[i]) - float(beta[i]))
    if cut == len(alpha):
        return alpha, tpr, beta
    mirror_t = np.subtract(1.0, alpha[cut:], out=scratch("pld_curve.fold_mt", len(alpha) - cut))
    parts = ((alpha[:cut], beta[cut:][::-1]), (tpr[:cut], mirror_t[::-1]),
             (beta[:cut], alpha[cut:][::-1]))
    if 0 < cut:  # two sorted runs; merge them
        order = _merge_order(*parts[0])
    else:
        order = np.arange(len(alpha) - cut)
    return tuple(_merged(p, order, f"pld_curve.fold{slot}.{k}")  # type: ignore[return-value]
                 for k, p in enumerate(parts))


def _below(p: tuple[np.ndarray, ...], q: tuple[np.ndarray, ...]) -> np.ndarray:
    """Mask of the points of ``p`` (alpha, TPR, beta; alpha sorted or not) lying clearly
    below the piecewise-linear interpolation of ``q`` (alpha sorted): TPR is compared where
    it is small and beta where it is small, each with the relative margin
    :data:`_DOMINATED_RTOL`. Left of q's first point np.interp would hold its first value,
    which proves nothing there: such points are never in the mask (see
    :func:`_drop_dominated` for why points past q's last alpha may be)."""
    a, t, b = p[0], p[1], p[2]
    a2, t2, b2 = q[0], q[1], q[2]
    if len(a2) == 0:
        return np.zeros(len(a), dtype=bool)
    inside = a >= a2[0]
    small = (t <= 0.5) & inside
    large = (t > 0.5) & inside
    out = np.zeros(len(a), dtype=bool)
    out[small] = t[small] < np.interp(a[small], a2, t2) * (1.0 - _DOMINATED_RTOL)
    out[large] = b[large] > np.interp(a[large], a2, b2) * (1.0 + _DOMINATED_RTOL)
    return out


def _dominated_share(p: tuple[np.ndarray, ...], q: tuple[np.ndarray, ...]) -> float:
    """The share of 65 evenly spaced points of ``p`` that :func:`_below` finds below ``q``
    (0 for an empty ``p``)."""
    if len(p[0]) == 0:
        return 0.0
    sel = np.linspace(0, len(p[0]) - 1, min(len(p[0]), 65)).astype(np.intp)
    return float(_below(tuple(x[sel] for x in p), q).mean())


def _drop_dominated(runs: list[tuple[np.ndarray, ...]]) -> list[tuple[np.ndarray, ...]]:
    """Drop points lying clearly below the piecewise-linear interpolation of another run.

    Every chord between points of the set lies below their upper concave hull, so such a
    point is not a hull vertex. (Where the directions interleave, this removes in one
    vectorised step what would otherwise take many hull passes.) TPR is compared where it
    is small and beta where it is small, each with a relative margin. Past a run's last
    alpha, ``np.interp`` holds the last value: a point to the right of and below a point q
    of the set is below q for every supporting line of positive slope, and the hull of a
    trade-off curve's points rises everywhere, so it is not a hull vertex either; dropping
    it changes nothing that is kept. Left of a run's first point nothing is compared."""
    if len(runs) < 2:
        return runs
    # every point dropped lies below a chord of points still in the set, so the runs are
    # thinned one after the other, each against the others as already thinned; the run
    # that is most dominated (on a sample of its points) goes first, so that the others
    # are compared with what little is left of it
    share = [float(np.mean([_dominated_share(runs[i], runs[j]) for j in range(len(runs)) if j != i]))
             for i in range(len(runs))]
    for i in sorted(range(len(runs)), key=lambda k: -share[k]):
        drop = np.zeros(len(runs[i][0]), dtype=bool)
        for j in range(len(runs)):
            if j != i and len(runs[j][0]):
                drop |= _below(runs[i], runs[j])
        if drop.any():
            keep = ~drop
            n_keep = int(np.count_nonzero(keep))
            runs[i] = tuple(np.compress(keep, r, out=scratch(f"pld_curve.drop{i}.{k}", n_keep))
                            for k, r in enumerate(runs[i]))
    return runs


def _thinned(chains: list[tuple[np.ndarray, np.ndarray, np.ndarray]]
             ) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Each steep chain thinned (:func:`thin_chain`). Of two large chains where one lies
    mostly below the other (the headline report's add direction: 25 of its 177,823 vertices
    reach the hull), the other is thinned first and the points of the first below it are
    dropped before its own thinning (sound for the same reason as :func:`_drop_dominated`:
    the thinned chain is part of the set whose hull is taken; issue 27: 2 ms a report). A
    chain left with no point is left out."""
    large = len(chains) == 2 and all(len(c[0]) > thinning.THIN_MIN_VERTICES for c in chains)
    if not large:
        return [thin_chain(*c) for c in chains]
    share = [_dominated_share(chains[0], chains[1]), _dominated_share(chains[1], chains[0])]
    i = int(np.argmax(share))  # the more dominated chain
    if share[i] < 0.5:
        return [thin_chain(*c) for c in chains]
    top = thin_chain(*chains[1 - i])
    keep = ~_below(chains[i], top)
    if not keep.any():
        return [top]
    a, t, b = (x[keep] for x in chains[i])
    rest = thin_chain(a, t, b)
    return [rest, top] if i == 0 else [top, rest]


def _symmetric_hull(chains: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> PiecewiseLinearCurve:
    """Upper concave hull of the steep chains and their mirror images (alpha, TPR) ->
    (1 - TPR, 1 - alpha): the worst case of the directions' symmetric curves.

    The set is mirror-symmetric, so its hull H is too, and H crosses the diagonal
    alpha = beta on a segment of slope 1 (the mirror map turns slope s into 1/s). Hence
    H on the side alpha <= beta is the hull K of the chains folded onto that side, cut at
    the first vertex whose outgoing slope is <= 1, and H is that half followed by its
    mirror image. (Proof: the half, its slope-1 continuation and the mirror form a concave
    function through points of the set that lies above every folded point and, by
    symmetry, every mirrored one; a concave function through points of a set is at most
    its hull.) The half is computed from accurately stored alpha and TPR; the mirror half
    stores alpha = 1 - TPR, which rounds near alpha = 1, so it gets its own hull pass
    (repeated alphas keep the larger TPR, the pessimistic reading).

    When a steep half ends before the diagonal, it meets its mirror on the slope-1
    (eps = 0) segment and H is Dong et al.'s Symm(f) exactly; the implied delta(eps) is
    the accountant's for every eps >= 0.

    Chains of more than 2^15 vertices are first replaced by their certified
    tangent envelopes (:mod:`fdpkit.accounting._chain_thinning`): on or above them in TPR
    and within a relative 1e-6 of them, so the hull, the fit and the regret read a few
    hundred thousand vertices instead of millions (issue 29)."""
    chains = _thinned(chains)
    # the folded, thinned and merged runs are scratch buffers (fdpkit._scratch): only the
    # hull's vertices, copied out below, leave this function
    runs = _drop_dominated([_fold(a, t, b, slot) for slot, (a, t, b) in enumerate(chains)])
    a, t, b = runs[0]
    for a2, t2, b2 in runs[1:]:  # sorted runs: merged, not sorted
        if len(a2):
            order = _merge_order(a, a2)
            a, t, b = (_merged((x, x2), order, f"pld_curve.merge.{k}")
                       for k, (x, x2) in enumerate(((a, a2), (t, t2), (b, b2))))
    a, t, b = _dedup(a, t, b)
    keep = upper_concave_hull(a, t, b)
    a, t, b = a[keep], t[keep], b[keep]
    # cut the half at the first vertex whose outgoing slope is <= 1 (dTPR <= dalpha)
    # (the values of np.where(t[1:] <= 0.5, np.diff(t), b[:-1] - b[1:]), in scratch buffers)
    m = len(a) - 1
    d_t = np.subtract(t[1:], t[:-1], out=scratch("pld_curve.cut_dt", m))
    use_b = np.less_equal(t[1:], 0.5, out=scratch("pld_curve.cut_small", m, bool))
    np.logical_not(use_b, out=use_b)
    np.copyto(d_t, np.subtract(b[:-1], b[1:], out=scratch("pld_curve.cut_db", m)), where=use_b)
    flat = np.less_equal(d_t, np.subtract(a[1:], a[:-1], out=scratch("pld_curve.cut_da", m)), out=use_b)
    first = int(np.argmax(flat)) if m > 0 else 0
    u = first + 1 if m > 0 and flat[first] else len(a)
    a, t, b = a[:u], t[:u], b[:u]
    # the mirror half (beta, 1 - alpha, alpha) is built by the curve when first read past
    # the diagonal (PiecewiseLinearCurve._from_symmetric_half)
    return PiecewiseLinearCurve._from_symmetric_half(a, t, b, "lower")


def direction_curve(a: PmfArrays) -> PiecewiseLinearCurve:
    """The symmetric curve implied by one direction's profile (see module docs)."""
    return _symmetric_hull([_steep_chain(a)])


def curve_from_pld(pld: Any, profile: PldProfile | None = None) -> PiecewiseLinearCurve:
    """The certified (pessimistic, symmetric) trade-off curve of a dp_accounting PLD
    (``profile``: the PLD's already computed :class:`PldProfile`, to share its sums)."""
    profile = PldProfile(pld) if profile is None else profile
    return _symmetric_hull([_steep_chain(d) for d in profile.directions])


__all__ = ["curve_from_pld", "direction_curve"]
