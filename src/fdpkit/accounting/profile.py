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


def _epsilon_one_direction(a: PmfArrays, delta: float) -> float:
    m_inf = a.infinity_mass
    if m_inf > delta:
        return math.inf
    losses = a.losses[::-1]
    probs = a.probs[::-1]
    with np.errstate(over="ignore"):
        lower_inc = np.exp(-losses) * probs
    upper_after = m_inf + np.cumsum(probs)
    lower_after = np.cumsum(lower_inc)
    upper_before = np.concatenate([[m_inf], upper_after[:-1]])
    lower_before = np.concatenate([[0.0], lower_after[:-1]])
    with np.errstate(divide="ignore", invalid="ignore"):
        ok = (upper_before > delta) & (lower_before > 0)
        stop = ok & (np.log(np.where(ok, (upper_before - delta) / np.where(ok, lower_before, 1.0), 1.0)) >= losses)
    # dp_accounting's early exit when exp(-loss) underflows to 0 after adding a mass
    under = (upper_after >= delta) & (lower_after == 0)
    j_stop = int(np.argmax(stop)) if stop.any() else len(losses)
    j_under = int(np.argmax(under)) if under.any() else len(losses)
    if j_under < j_stop:
        return max(0.0, float(losses[j_under]))
    if j_stop < len(losses):
        upper, lower = float(upper_before[j_stop]), float(lower_before[j_stop])
    else:
        upper, lower = float(upper_after[-1]), float(lower_after[-1])
    if upper <= lower + delta:
        return 0.0
    return math.log((upper - delta) / lower) * (1.0 + EPS_SAFETY_RTOL)


def pld_epsilon_for_delta(pld, delta: float) -> float:
    """Smallest epsilon >= 0 with the PLD's delta(epsilon) <= ``delta`` (both directions)."""
    remove, add = pmf_arrays(pld)
    eps = _epsilon_one_direction(remove, delta)
    if add is not None:
        eps = max(eps, _epsilon_one_direction(add, delta))
    return eps
