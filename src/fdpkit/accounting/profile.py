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


class _Direction:
    """Cumulative sums of one direction, from the largest loss down (computed once)."""

    def __init__(self, a: PmfArrays) -> None:
        self.m_inf = a.infinity_mass
        self.losses = a.losses[::-1]
        probs = a.probs[::-1]
        with np.errstate(over="ignore"):
            lower_inc = np.exp(-self.losses) * probs
        self.upper_after = self.m_inf + np.cumsum(probs)
        self.lower_after = np.cumsum(lower_inc)
        self.upper_before = np.concatenate([[self.m_inf], self.upper_after[:-1]])
        self.lower_before = np.concatenate([[0.0], self.lower_after[:-1]])
        ok = self.lower_before > 0
        self._ok = ok
        self._lower_safe = np.where(ok, self.lower_before, 1.0)
        # dp_accounting's early exit when exp(-loss) underflows to 0 after adding a mass
        self._zero_lower = self.lower_after == 0

    def epsilon(self, delta: float) -> float:
        if self.m_inf > delta:
            return math.inf
        n = len(self.losses)
        with np.errstate(divide="ignore", invalid="ignore"):
            ok = self._ok & (self.upper_before > delta)
            ratio = np.where(ok, (self.upper_before - delta) / self._lower_safe, 1.0)
            stop = ok & (np.log(ratio) >= self.losses)
        under = (self.upper_after >= delta) & self._zero_lower
        j_stop = int(np.argmax(stop)) if stop.any() else n
        j_under = int(np.argmax(under)) if under.any() else n
        if j_under < j_stop:
            return max(0.0, float(self.losses[j_under]))
        if j_stop < n:
            upper, lower = float(self.upper_before[j_stop]), float(self.lower_before[j_stop])
        else:
            upper, lower = float(self.upper_after[-1]), float(self.lower_after[-1])
        if upper <= lower + delta:
            return 0.0
        return math.log((upper - delta) / lower) * (1.0 + EPS_SAFETY_RTOL)


class PldProfile:
    """epsilon(delta) of a PLD (both directions), with the sums computed once."""

    def __init__(self, pld) -> None:
        remove, add = pmf_arrays(pld)
        self._dirs = [_Direction(remove)] + ([_Direction(add)] if add is not None else [])

    def epsilon_for_delta(self, delta: float) -> float:
        return max(d.epsilon(delta) for d in self._dirs)


def pld_epsilon_for_delta(pld, delta: float) -> float:
    """Smallest epsilon >= 0 with the PLD's delta(epsilon) <= ``delta`` (both directions)."""
    return PldProfile(pld).epsilon_for_delta(delta)
