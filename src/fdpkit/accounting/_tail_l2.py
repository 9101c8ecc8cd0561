r"""Tail sums of a tilted composition bounded through the l2-norm of its round-off (Step 4b
of :mod:`fdpkit.accounting.tilted`).

Step 4 bounds the upper tail U(L) = P[Y >= L] by summing the per-point upper bounds (6)
from the top. Each of them carries the pass's per-point round-off bound eps_theta, so a
tail of n grid points collects n eps_theta: where the composed loss spreads over millions of
points (tiny sample rates with small noise: the T-th power multiplies the forward
transforms' rounding by T, and no tilt isolates the tail), that sum decides the certified
curve (sigma 0.6, q 1e-7, T 10^5 read mu 3.99 times what the largest-coordinate test
attains; with the round-off bound a hundredth of its size it reads 1.04 times).

The same pass bounds the error vector e = y^ - circ(c) in l2 as well (Eq. 5' of
:mod:`fdpkit.accounting._fftpass`): ||e||_2 <= eps2_theta. With s_L = e^{K - theta L} and
the constant C_up of (6), the exact masses of a pass's window [a, b] satisfy
p(L) <= C_up s_L (y^+_L + |e_L|), so for a <= L <= b, by Cauchy-Schwarz,

    sum_{L <= L' <= b} p(L') <= C_up (sum_{L'} s_{L'} y^+_{L'}
                                      + (sum_{L'} s_{L'}^2)^{1/2} eps2_theta),        (8)

and U(L) <= (8) + U_up(b + d), the bound Step 4 already holds above the window. A tail of n
points now collects sqrt(n) eps2_theta times the l2-norm of s over it, instead of n
eps_theta times its l1-norm: where the pass's spectrum is narrow (a wide composed loss),
eps2_theta sqrt(n) is far below n eps_theta, and (8) is the tighter bound. Both are upper
bounds, so U_up takes their minimum. Each bound is non-increasing in L (sequential sums of
non-negative terms, their square roots and products with positive constants are, under
monotone rounding), and (8) plus U_up(b + d) is at least U_up(b + d), so the minimum stays
non-increasing and (7) still gives masses >= 0. The sums are rounded outward by (n + 8) u.

The bound costs one more FFT pass per tilt (each pass's convolution is computed again
rather than kept: holding every pass's output until the end would raise the composition's
peak memory, which :mod:`fdpkit.accounting.cost` estimates per grid point), two cumulative
sums and an exponential, so it is formed only where the round-off matters: where the tail
sums' error bound of Step 4 exceeds :data:`L2_MIN_TAIL_RATIO` of the sums (the refinement's
measure), and not in a float64 composition that :func:`fdpkit.accounting.tilted.compose` is
about to redo in extended precision. Elsewhere (the headline run among them) the output is
bit for bit that of Step 4.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

#: Form (8) only where Step 4's tail error bound exceeds this share of the tail sums.
L2_MIN_TAIL_RATIO = 1e-6


def tighten_tails(upper: np.ndarray, passes: list, again: Callable[[float, int, int], tuple[np.ndarray, float]],
                  losses: np.ndarray, offset: int, inf_mass: float, u64: float) -> None:
    """Lower ``upper`` (U_up on the output grid, index i = grid index - ``offset``; losses
    ``losses`` on the same index) in place to the bound (8) of each pass.

    ``passes`` holds (a, b, theta, k, c_up, lo, hi): the pass's non-negative upper window
    [a, b] (grid indices), its tilt theta and K(theta), the constant C_up of (6) and its FFT
    window [lo, hi]; ``again(theta, lo, hi)`` computes that pass's convolution on [lo, hi]
    and the l2 bound (5') of its error. Passes run in any order: each reads the current U_up
    just above its window."""
    n = len(upper)
    for a, b, theta, k, c_up, lo, hi in passes:
        i0, i1 = a - offset, b - offset
        if i0 < 0 or i1 >= n or i1 < i0:
            continue
        m = i1 - i0 + 1
        scale = losses[i0:i1 + 1] * -theta
        scale += k
        if float(scale.max()) > 700.0:  # e^{K - theta L} would overflow: no bound here
            continue
        y, eps2 = again(theta, lo, hi)
        if not math.isfinite(eps2):
            continue
        np.exp(scale, out=scale)
        yp = np.maximum(y[a - lo:b - lo + 1], 0.0)
        del y
        yp *= scale
        mass = np.cumsum(yp[::-1])[::-1]
        scale *= scale
        norm = np.cumsum(scale[::-1])[::-1]
        np.sqrt(norm, out=norm)
        norm *= eps2
        mass += norm
        mass *= c_up * (1.0 + (m + 8) * u64)
        mass += upper[i1 + 1] if i1 + 1 < n else inf_mass
        mass *= 1.0 + 2.0 * u64
        np.minimum(upper[i0:i1 + 1], mass, out=upper[i0:i1 + 1])
