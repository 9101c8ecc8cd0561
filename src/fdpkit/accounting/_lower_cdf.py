"""Step 5 of :mod:`fdpkit.accounting.tilted`: the composed PMF's small masses near loss 0,
written from the small end so that they keep their digits (issue 29, large mu)."""

from __future__ import annotations

import numpy as np

#: P[Y < L] below which Step 5 sums the output masses from the small end.
SMALL_HEAD = 2.0 ** -20


def small_head(upper: np.ndarray, head: np.ndarray, u: float) -> tuple[np.ndarray, int] | None:
    r"""Step 5 (Eq. 8): the output's lower CDF where it is small, or None if not needed.

    Eq. (7) bounds the tail by U(L) = min(U_top(L), 1 - H(L)), H(L) (``head``) a lower bound
    on P[Y < L] summed from the small end. Where P[Y < L] is below the unit round-off, 1 - H
    rounds to 1 and Eq. (7)'s differences of U near 1 lose every digit of the small masses
    near loss 0 (at mu >~ 16 they are all below 1e-16: the curve then has beta = 0 up to
    its diagonal, and mu reads inf; issue 29). The same PMF is written from the other end:
    with C(L) = 1 - U_top(L) (exact where U_top >= 1/2, Sterbenz), the output's lower CDF
    is B(L) = max(C(L), H(L)) = 1 - U(L), so its masses are p_out(L) = B(L + d) - B(L) and
    its mass below loss 0 is B(0). Both are computed directly on the prefix where B stays
    below SMALL_HEAD (the first ``m`` masses, plus B at the m + 1 grid points); the mass
    below 0 is then placed at loss -d (moved up from where it lies: pessimistic, and every
    negative loss of the composition is at most -d on the grid), so the curve reads
    beta near its diagonal from the small end (``accounting.curve._steep_chain``). The
    differences of floats are within a relative u of the exact ones; the curve's sums
    round beta down by more than that."""
    if head[0] <= 0.0 or not (upper[0] >= 0.5):
        return None
    c = 1.0 - upper  # exact: upper in [1/2, 1] there (Sterbenz); used only while small
    b = np.maximum(c, head)
    m = min(int(np.searchsorted(b, SMALL_HEAD, side="right")), len(b) - 1)  # b non-decreasing
    if m <= 0 or not (b[0] > c[0]):
        return None
    # from L_m on the masses are Eq. (7)'s: U(L_m) there is at least 1 - B(L_m), so every
    # tail sum of the output is at least 1 - B (up to 2u B, inside the curve's TPR slack)
    return b[:m + 1] * (1.0 - 2 * u), m
