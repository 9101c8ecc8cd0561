"""The accountant's own privacy profile, vectorised over its PMF arrays.

dp_accounting computes epsilon for a delta with a Python loop over the privacy-loss grid
(``pld_pmf._get_epsilon_for_delta``). This module evaluates the same formula,

    delta(eps) = m_inf + sum_{l_i > eps} p_i - e^eps sum_{l_i > eps} e^{-l_i} p_i,

with the same accumulation order (from the largest loss down) and the same stopping rule,
but with numpy cumulative sums. numpy's exp can differ from math.exp in the last bit, so
the result is rounded up by a relative 1e-9 (EPS_SAFETY_RTOL): never below
dp_accounting's answer, and equal to it for any practical purpose. Each adjacency
direction is solved and the larger epsilon is returned, as in
``PrivacyLossDistribution.get_epsilon_for_delta``. ``tests/accounting`` checks equality
with dp_accounting on a grid of deltas.
"""

from __future__ import annotations

import math

import numpy as np

from fdpkit.accounting._pld_adapter import PmfArrays, pmf_arrays

#: Relative amount by which epsilon is rounded up (see module docs).
EPS_SAFETY_RTOL = 1e-9


#: Relative margin (of the larger of the two terms) added to h_j in _skip_index.
_SKIP_MARGIN = 1e-12

#: Indices per block of the safe-start search (:meth:`_Direction._skip_index`).
_SKIP_BLOCK = 256

#: Losses are scanned from the top in chunks of this many grid points; epsilon is usually
#: found in the first few, so most of the grid is never touched.
_CHUNK = 8192


class _Direction:
    """Cumulative sums of one direction, from the largest loss down.

    The sums over the non-negative losses (all the trade-off curve needs, and where
    epsilon > 0 is found) are computed at once; the rest only if a delta requires it,
    continuing the same sequential sums."""

    def __init__(self, a: PmfArrays) -> None:
        self.m_inf = a.infinity_mass
        self.losses = a.losses[::-1]
        self.probs = a.probs[::-1]
        n = len(self.losses)
        #: number of losses >= 0 (they come first, in descending order)
        self.n_steep = n - int(np.searchsorted(a.losses, 0.0, side="left"))
        self._m = 0
        self._extend(min(n, self.n_steep + 1))
        self._h_max: np.ndarray | None = None  # see _skip_index

    def _extend(self, m: int) -> None:
        """Make lower_inc, upper_after and lower_after cover the first ``m`` losses."""
        lo = self._m
        if m <= lo:
            return
        with np.errstate(over="ignore"):
            inc = np.exp(-self.losses[lo:m]) * self.probs[lo:m]
        if lo == 0:
            self.lower_inc, self._cp, self._cq = inc, np.cumsum(self.probs[:m]), np.cumsum(inc)
        else:  # continue the sequential sums exactly as one cumsum would
            cp = np.cumsum(np.concatenate([self._cp[-1:], self.probs[lo:m]]))[1:]
            cq = np.cumsum(np.concatenate([self._cq[-1:], inc]))[1:]
            self.lower_inc = np.concatenate([self.lower_inc, inc])
            self._cp, self._cq = np.concatenate([self._cp, cp]), np.concatenate([self._cq, cq])
        self.upper_after = self.m_inf + self._cp
        self.lower_after = self._cq
        self._m = m

    def _skip_index(self, delta: float) -> int:
        """An index before which neither of dp_accounting's exits can fire (see module docs).

        With upper/lower sums ub, lb before index j, the loop stops at j when
        log((ub - delta) / lb) >= loss_j, i.e. when h_j = ub - lb e^{loss_j} >= delta: h_j is
        the hockey-stick divergence at eps = loss_j, which grows as the loss falls. An upper
        bound of h_j plus a margin far above the rounding of either form is computed once
        per direction, per block of :data:`_SKIP_BLOCK` indices (over the non-negative
        losses), from the block's extreme sums and the extreme e^{loss} (issue 27: a few
        passes over the block ends instead of ten over every index); every block where the
        exact test can fire has that bound >= delta, so a binary search on its running
        maximum finds a safe start (the first index of the first such block). The
        underflow exit needs lower sum 0, which holds on a prefix only."""
        if self._h_max is None:
            m = self._m
            ua, la = self.upper_after[:m], self.lower_after[:m]
            starts = np.arange(0, m, _SKIP_BLOCK)
            last = np.minimum(starts + _SKIP_BLOCK, m) - 1
            # j in [s, e] reads ub = ua[j - 1] (m_inf at j = 0) and lb = la[j - 1] (0 at
            # j = 0): the block's extremes over ua[s .. e] and la[s .. e] (one extra index:
            # only a wider range) and the index before the block
            before = starts - 1
            ub_prev = np.where(before >= 0, ua[np.maximum(before, 0)], self.m_inf)
            lb_prev = np.where(before >= 0, la[np.maximum(before, 0)], 0.0)
            ub_hi = np.maximum(np.maximum.reduceat(ua, starts), ub_prev)
            ub_hi = np.maximum(ub_hi, self.m_inf)
            lb_lo = np.minimum(np.minimum.reduceat(la, starts), lb_prev)
            lb_hi = np.maximum(np.maximum.reduceat(la, starts), lb_prev)
            with np.errstate(over="ignore", invalid="ignore"):
                # losses descend: e^{loss} is largest at the block's first index; widened by
                # a relative 1e-12 against a non-monotone last bit of np.exp
                e_lo = np.exp(self.losses[last]) * (1.0 - _SKIP_MARGIN)
                e_hi = np.exp(self.losses[starts]) * (1.0 + _SKIP_MARGIN)
                sub = np.minimum(lb_lo * e_lo, lb_lo * e_hi)  # lb may be (slightly) negative
                h = ub_hi - sub
                h += 2.0 * _SKIP_MARGIN * np.maximum(np.maximum(ub_hi, lb_hi * e_hi), 0.0)
            h[~(h == h)] = np.inf  # NaN (inf - inf): unknown, so a candidate
            self._h_max = np.maximum.accumulate(h)
            self._skip_m = m  # the indices the bounds cover (later _extend calls add more)
            nonzero = la != 0.0
            n_zero = int(np.argmax(nonzero)) if nonzero.any() else m
            self._zero_prefix = n_zero if not (la[n_zero:] == 0.0).any() else -1
            self._ua_max = np.maximum.accumulate(self.upper_after[:n_zero])
        if self._zero_prefix < 0:
            return 0
        b = int(np.searchsorted(self._h_max, delta, side="left"))
        j = b * _SKIP_BLOCK if b < len(self._h_max) else self._skip_m
        j_u = int(np.searchsorted(self._ua_max, delta, side="left"))
        return min(j, j_u if j_u < self._zero_prefix else self._skip_m)

    def _first_stop(self, delta: float) -> tuple[int, int]:
        """(j_stop, j_under): the first index where dp_accounting's loop stops, and the first
        where exp(-loss) has underflowed after adding mass (its early exit); n if none."""
        n = len(self.losses)
        for lo in range(self._skip_index(delta), n, _CHUNK):
            hi = min(lo + _CHUNK, n)
            self._extend(hi)
            ua, la = self.upper_after[lo:hi], self.lower_after[lo:hi]
            if lo == 0:
                ub = np.concatenate([[self.m_inf], ua[:-1]])
                lb = np.concatenate([[0.0], la[:-1]])
            else:
                ub, lb = self.upper_after[lo - 1:hi - 1], self.lower_after[lo - 1:hi - 1]
            with np.errstate(divide="ignore", invalid="ignore"):
                ok = (lb > 0) & (ub > delta)
                ratio = np.where(ok, (ub - delta) / np.where(ok, lb, 1.0), 1.0)
                stop = ok & (np.log(ratio) >= self.losses[lo:hi])
            under = (ua >= delta) & (la == 0)
            j_stop = lo + int(np.argmax(stop)) if stop.any() else n
            j_under = lo + int(np.argmax(under)) if under.any() else n
            if min(j_stop, j_under) < n:
                return j_stop, j_under
        return n, n

    def epsilon(self, delta: float) -> float:
        if self.m_inf > delta:
            return math.inf
        n = len(self.losses)
        j_stop, j_under = self._first_stop(delta)
        if j_under < j_stop:
            return max(0.0, float(self.losses[j_under]))
        if j_stop < n:
            if j_stop == 0:
                upper, lower = float(self.m_inf), 0.0
            else:
                upper = float(self.upper_after[j_stop - 1])
                lower = float(self.lower_after[j_stop - 1])
        else:
            self._extend(n)
            upper, lower = float(self.upper_after[-1]), float(self.lower_after[-1])
        if upper <= lower + delta:
            return 0.0
        return math.log((upper - delta) / lower) * (1.0 + EPS_SAFETY_RTOL)


class PldProfile:
    """epsilon(delta) of a PLD (both directions), with the sums computed once."""

    def __init__(self, pld) -> None:
        remove, add = pmf_arrays(pld)
        self.directions = [_Direction(remove)] + ([_Direction(add)] if add is not None else [])

    def epsilon_for_delta(self, delta: float) -> float:
        """Smallest ε with (ε, δ)-DP: the larger of the two adjacency directions' ε at ``delta``."""
        return max(d.epsilon(delta) for d in self.directions)


def pld_epsilon_for_delta(pld, delta: float) -> float:
    """Smallest epsilon >= 0 with the PLD's delta(epsilon) <= ``delta`` (both directions)."""
    return PldProfile(pld).epsilon_for_delta(delta)
