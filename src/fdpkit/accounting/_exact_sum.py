r"""The correctly rounded sum of non-negative floats, vectorised (issue 27).

``math.fsum`` is exact before its one rounding, but it walks a NumPy array element by
element (8 ms for the 2e5 masses of the headline report's composed PMF). This computes
the same number from the bit patterns. A finite float64 x >= 0 is x = m 2^(e - 1075) with
the integer significand m < 2^53 and the biased exponent e (m = the stored fraction plus
2^52 when e > 0; e = 1 and no hidden bit for subnormals). Split m = h 2^26 + l
(h < 2^27, l < 2^26). Per exponent, the sums of h and of l over at most 2^26 terms are
integers below 2^53, so ``np.bincount``'s float64 accumulation adds them exactly in any
order. The per-exponent integers are then combined with Python's exact integers, and the
one rounding to float is Python's correctly rounded ``int / 2^k`` (round half to even, as
``math.fsum``). Hence the result equals ``math.fsum(x)`` bit for bit
(``tests/accounting/test_accounting_exact_sum.py``).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from fdpkit._scratch import scratch

#: At most this many terms per call: per-exponent sums of the 27-bit halves stay below 2^53.
_MAX_TERMS = 1 << 26

#: Scale of :func:`sum_upper_bound`'s integer parts: x 2^51 splits into floor and fraction.
_SCALE = 2.0 ** 51


def exact_sum_nonnegative(x: np.ndarray) -> float:
    """``math.fsum(x)`` for a 1-d float64 array of finite values >= 0 (see module docs).

    Parameters
    ----------
    x : numpy.ndarray
        Finite, non-negative float64 values (not checked beyond the dtype: callers pass
        PMF masses); longer arrays than 2^26 or other dtypes are summed by ``math.fsum``.

    Returns
    -------
    float
        The exact sum, rounded once to the nearest float64.

    Examples
    --------
    >>> exact_sum_nonnegative(np.array([1.0, 1e-20, 1e-20]))
    1.0
    >>> exact_sum_nonnegative(np.array([0.1] * 10)) == math.fsum([0.1] * 10)
    True
    """
    parts = _exact_parts(x)
    if parts is None:
        return math.fsum(np.ravel(np.asarray(x)).tolist())
    total, shift = parts
    if shift >= 0:
        return float(total << shift)
    return total / (1 << -shift)


def exact_sum_fraction(x: np.ndarray) -> Fraction | None:
    """The exact sum of a 1-d array of floats >= 0 as a :class:`fractions.Fraction` (the same
    integer arithmetic as :func:`exact_sum_nonnegative`, before its rounding), so that
    further terms can be added exactly; None when a value is infinite or NaN.

    >>> exact_sum_fraction(np.array([0.5, 0.25, 2.0 ** -60])) == Fraction(3, 4) + Fraction(1, 2 ** 60)
    True
    >>> exact_sum_fraction(np.array([0.5, np.inf])) is None
    True
    """
    parts = _exact_parts(x)
    if parts is None:
        values = np.ravel(np.asarray(x, dtype=float)).tolist()
        if not all(math.isfinite(v) for v in values):
            return None
        return sum((Fraction(v) for v in values), Fraction(0))
    total, shift = parts
    return Fraction(total << shift) if shift >= 0 else Fraction(total, 1 << -shift)


def _exact_parts(x: np.ndarray) -> tuple[int, int] | None:
    """(integer, shift) with sum(x) = integer 2^shift exactly (module docs); None for input the
    bit arithmetic does not take (other dtypes, more than :data:`_MAX_TERMS` terms, an
    infinity or a NaN)."""
    if isinstance(x, np.ndarray) and x.ndim == 1 and x.strides[0] < 0:
        x = x[::-1]  # a reversed view: the exact sum does not depend on the order (no copy)
    x = np.ascontiguousarray(x)
    if x.dtype != np.float64 or x.ndim != 1 or len(x) > _MAX_TERMS:
        return None
    if len(x) == 0:
        return 0, 0
    # the temporaries live in per-thread scratch buffers (fdpkit._scratch): same integer
    # operations as the expressions they replace, so the same (exact) result
    n = len(x)
    bits = x.view(np.uint64)
    biased = scratch("exact_sum.biased", n, np.uint64)
    np.right_shift(bits, np.uint64(52), out=biased)
    np.bitwise_and(biased, np.uint64(0x7FF), out=biased)  # -0.0 (sign bit set) is 0
    if int(biased.max()) == 0x7FF:
        return None  # an infinity or a NaN: no exact sum (the callers fall back)
    mant = scratch("exact_sum.mant", n, np.uint64)
    np.bitwise_and(bits, np.uint64((1 << 52) - 1), out=mant)
    hidden = scratch("exact_sum.hidden", n, np.uint64)
    np.not_equal(biased, 0, out=hidden, casting="unsafe")  # 0 or 1
    np.left_shift(hidden, np.uint64(52), out=hidden)
    mant += hidden  # the hidden bit of normals
    expo = biased.view(np.int64)  # biased exponents < 2^11: the same values
    np.maximum(expo, 1, out=expo)  # subnormals: m 2^(1 - 1075)
    e0 = int(expo.min())
    expo -= e0
    weights = scratch("exact_sum.weights", n)
    np.right_shift(mant, np.uint64(26), out=hidden)
    np.copyto(weights, hidden, casting="unsafe")  # < 2^27: exact in float64
    hi = np.bincount(expo, weights=weights)
    mant &= np.uint64((1 << 26) - 1)
    np.copyto(weights, mant, casting="unsafe")
    lo = np.bincount(expo, weights=weights)
    total = 0
    for k in np.flatnonzero((hi != 0.0) | (lo != 0.0)).tolist():
        total += ((int(hi[k]) << 26) + int(lo[k])) << k
    return total, e0 - 1075


def sum_upper_bound(x: np.ndarray) -> float:
    r"""An upper bound on the exact sum of non-negative floats summing to at most 2: for PMF
    masses (a sum near 1) within two units in the last place of it, for a fifth of the work
    of :func:`exact_sum_nonnegative` (issue 27: 44 ms for the 4.5 million masses of a
    large-mu chain).

    Each x is split exactly as x 2^51 = h + r (h = floor(x 2^51), 0 <= r < 1: scaling by a
    power of two and taking the integer and fraction parts are exact). The h are integers
    and so are all their partial sums, which stay below the total sum(h) <= 2^52 < 2^53
    when that total is at most 2^52: every addition is exact, in any order (numpy's
    pairwise sum included). The fractions sum to R <= n; any summation order is within
    (n - 1) u R of it (Higham 2002, Eq. 4.4), so their share of the sum, R 2^-51, is known
    to within 2 n u R 2^-51 <= 2 n^2 u 2^-51 (2e-18 at n = 4.5 million). The bound is the
    float just above the correctly rounded sum of sum(h), the computed R and that error
    (math.fsum), scaled back by 2^-51: at most two floats above the exact sum plus that
    error (which is far below one float when the sum is near 1, and a relative 3 n u at
    most when every x is below 2^-51: the computed R may exceed R by (n - 1) u R).

    Parameters
    ----------
    x : numpy.ndarray
        Finite, non-negative float64 values (not checked: callers pass PMF masses). Other
        dtypes, or totals above 2, are summed by :func:`exact_sum_nonnegative`.

    Returns
    -------
    float
        A float >= the exact sum (see above for how far above).

    Examples
    --------
    >>> v = sum_upper_bound(np.full(10, 0.1))
    >>> v >= 1.0 and v <= math.nextafter(math.nextafter(1.0, 2.0), 2.0)
    True
    """
    x = np.asarray(x)
    if x.dtype != np.float64 or x.ndim != 1 or len(x) == 0:
        return exact_sum_nonnegative(x)
    n = len(x)
    k = np.multiply(x, _SCALE, out=scratch("sum_bound.k", n))
    h = np.floor(k, out=scratch("sum_bound.h", n))
    np.subtract(k, h, out=k)  # the fractions r, in [0, 1)
    total_h = float(np.sum(h))
    if not total_h <= 2.0 ** 52:  # (NaN, or a total above 2: the integer sums could round)
        return exact_sum_nonnegative(x)
    frac = float(np.sum(k))
    if total_h == 0.0 and frac == 0.0:
        return 0.0  # all zero: every partial sum is exactly 0
    # (n - 1) u R <= 2 (n - 1) u frac (R <= frac / (1 - n u), n u < 1/2); an addition whose result
    # is below the normal range errs by at most half its spacing, 2^-1075: n of them at most
    err = 2.0 * (n - 1) * _U * frac + n * _SUBNORMAL
    return math.nextafter(math.fsum((total_h, frac, err)) / _SCALE, math.inf)


#: Unit round-off of float64.
_U = float(np.finfo(float).eps) / 2.0
#: The smallest positive float64 (the spacing of the subnormals).
_SUBNORMAL = 5e-324
