"""Step 1 of :mod:`fdpkit.accounting.tilted`: a single-step PMF whose total mass is above 1
(dp_accounting's pessimistic connect-the-dots PMF can carry 1 + 4e-8) is made a probability
distribution by removing mass from its lowest losses, a pessimistic change of its trade-off
curve (the derivation is that module's Step 1). The check that the result sums to at most 1 is
exact, so the invariant holds on every CPU whatever the rounding of the sums that chose what
to keep."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np

from fdpkit.accounting._exact_sum import exact_sum_fraction
from fdpkit.accounting._pld_adapter import PmfArrays


def _mass_excess(probs: np.ndarray, inf: float) -> float:
    """``inf + sum(probs) - 1``, correctly rounded (as ``math.fsum`` of the three, which is
    exact before its one rounding: the same value, from the vectorised exact sum of
    :mod:`fdpkit.accounting._exact_sum`, 20x faster), so the sign is exact. When it is <= 0
    the float check ``inf + math.fsum(probs) <= 1`` holds too: with S the exact sum,
    fsum(probs) = RN(S) <= RN(1 - inf) (rounding is monotone); for inf >= 1/2, 1 - inf is
    exact (Sterbenz) and the sum is exactly 1; else RN(1 - inf) is within 2^-54 of 1 - inf,
    and RN(1 + e) = 1 for |e| <= 2^-54. (A NaN or infinite mass has no exact sum: then
    ``math.fsum`` itself answers, NaN or inf, as before.)"""
    total = exact_sum_fraction(probs)
    if total is None:
        return math.fsum(itertools.chain((inf, -1.0), probs.tolist()))
    return float(total + Fraction(inf) - 1)


def _trim_to_one(probs: np.ndarray, inf: float) -> np.ndarray:
    """``probs`` (non-negative, not modified) with mass removed from its lowest entries until
    ``inf + sum(probs) <= 1`` holds exactly and as ``inf + math.fsum(probs)`` in floats
    (Step 1: removing mass from the lowest losses is pessimistic). The check is exact
    (``math.fsum``), so the invariant holds on every CPU whatever the rounding of the sums
    that chose what to keep; each pass lowers an entry strictly, so the loop ends (after one
    pass in practice: the excess left by a float64 sum is a few units of round-off)."""
    excess = _mass_excess(probs, inf)
    if excess <= 0.0:
        return probs
    out = probs.copy()
    while excess > 0.0:
        for i in np.flatnonzero(out > 0.0):
            if out[i] <= excess:
                excess -= out[i]  # rounded: the exact check below decides
                out[i] = 0.0
                if excess > 0.0:
                    continue
            else:  # lowered by at least the excess: the difference rounded towards 0
                out[i] = max(0.0, float(np.nextafter(out[i] - excess, 0.0)))
            break
        else:  # every finite mass removed: inf <= 1 alone satisfies the bound
            return np.zeros_like(out)
        excess = _mass_excess(out, inf)
    return out


def repair(a: PmfArrays) -> PmfArrays:
    """Step 1: remove mass from the lowest losses until ``infinity_mass + sum(probs) <= 1``
    (a pessimistic change of the PMF's trade-off curve; see module docs).

    What to keep is chosen with a running sum from the largest loss; that sum is rounded
    (by an amount that depends on the CPU's summation order), so the result is then
    trimmed by :func:`_trim_to_one`, whose check is exact: ``infinity_mass +
    math.fsum(probs) <= 1`` holds by construction, never by luck."""
    p = np.clip(np.asarray(a.probs, dtype=float), 0.0, None)
    inf = min(max(float(a.infinity_mass), 0.0), 1.0)
    if _mass_excess(p, inf) <= 0.0:
        return PmfArrays(a.losses, p, inf, a.discretization)
    from_top = inf + np.cumsum(p[::-1])  # TPR after each mass, from the largest loss
    keep = int(np.searchsorted(from_top, 1.0, side="right"))  # masses fully kept
    out = np.zeros_like(p)
    n = len(p)
    if keep:
        out[n - keep:] = p[n - keep:]
    if keep < n:
        rest = 1.0 - (from_top[keep - 1] if keep else inf)
        out[n - keep - 1] = min(max(0.0, rest), p[n - keep - 1])
    return PmfArrays(a.losses, _trim_to_one(out, inf), inf, a.discretization)
