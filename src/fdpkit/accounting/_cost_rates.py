"""The fitted constants of the accounting cost model (:mod:`fdpkit.accounting.cost`): work
per grid point of each stage, in units of ``WORK_PER_SECOND`` = 1e7 per single-threaded
CPU-second of the reference machine.

How they were fitted (2026-11, after the native single steps and the composition's speed
work had made the model read 3-20x above the measured time): on the cases of
``benchmarks/bench_cost_model.py`` and 29 more (single steps of every kind, Laplace and
randomized response to 10^3 times, pure and approximate DP, DP-SGD at sigma 0.6..9.4,
q 1e-3..0.5, T 100..10^5, d 1e-5..1e-3, fixed-size, truncated Poisson, schedules), the CPU
time (``time.process_time``, FDPKIT_THREADS=1, OPENBLAS_NUM_THREADS=1, best of 3) of building
the single steps gave the per-point leaf rates directly, and the rest of each run was fitted
by non-negative least squares in relative error to the model's counts: factor points summed
over cumulant evaluations, FFT pass points (and their doublings beyond the caches), passes,
output points. The fit read 0.58..1.31x the composition's time; the constants are the fit
times 1.6, so that the estimate errs on the safe side (a budget guards time); the output's
doublings were added after runs of 1e7 points and more read 0.8x (DP-SGD sigma 0.8, q 0.1,
T 10^5). The machine was shared with other work while measuring (load 2-6 on its 2 cores):
load inflates CPU time somewhat, which also errs on the safe side.
``benchmarks/bench_cost_model.py`` prints estimate / CPU time per case: 1.1..2.0 after
the refit on its numeric routes, and 1.1..1.9 on eight more runs of 0.4..29 s.
"""

from __future__ import annotations

import math

#: Work of one grid point of a single-step PMF, per adjacency direction, as dp_accounting
#: builds it (``FDPKIT_NATIVE_STEPS=0``): subsampled mechanisms and DP-SGD steps evaluate
#: inverse privacy losses in a Python loop (about 3.5 us a point); plain Gaussian and Laplace
#: are vectorised CDFs; a curve's profile is vectorised; finite-epsilon PMFs are two points.
LEAF_WORK_SUBSAMPLED = 35.0
LEAF_WORK_FIXED_SIZE = 38.0
LEAF_WORK_PLAIN = 8.0
LEAF_WORK_CURVE = 2.0  # fdpkit's own builder (native_pld_from_curve): 0.7-1.6 measured
LEAF_WORK_FINITE = 0.35
#: The same, as fdpkit builds the steps itself (:mod:`fdpkit.accounting.single_step`, the
#: default: :func:`fdpkit.accounting.pld.native_steps`), whole grids at once. Measured CPU
#: time a point (FDPKIT_THREADS=1, best of 3): subsampled Gaussian 1.2-1.7 (sigma 0.3-2,
#: q 0.01-0.5, d 1e-5..1e-4), subsampled Laplace 0.8, truncated Poisson 1.1 (its two
#: Gaussian steps and their mixture, per point of the mixture), fixed-size zero-out 1.5,
#: fixed-size replace-one 2.3 (the step's curve, then its PMF), plain Laplace 0.6.
NATIVE_LEAF_WORK = {"subsampled": 2.2, "subsampled laplace": 1.3, "truncated": 1.6, "fixed-size": 2.2,
                    "replace-one": 3.3, "plain": 1.0}
#: Work of building one distinct single step beyond its points (about 1.5 ms measured).
LEAF_WORK_PER_STEP = 2e4
#: Work per factor grid point of one cumulant evaluation (tilt placement, Chernoff windows).
CUMULANT_WORK_PER_POINT = 0.033
#: Extra cumulant evaluations of the real composition beyond the coarse plan's (the passes'
#: own tilts and the Chernoff masses), as a factor.
CUMULANT_CALLS_FACTOR = 1.3
#: Work per grid point of one tilted FFT pass (transforms, powers, bounds, merge) ...
PASS_WORK_PER_POINT = 0.72
#: ... plus this much per point for each doubling of the pass beyond PASS_CACHE_POINTS
#: (larger arrays leave the caches: 0.2 us a point at 5e7 points, 0.06 at 1e6) ...
PASS_WORK_PER_DOUBLING = 0.22
PASS_CACHE_POINTS = 2**20
#: ... plus this much per pass (Python and numpy overhead: about 2.5 ms).
PASS_WORK_FIXED = 4e4
#: A factor with at most FEW_ATOMS masses (randomized response, pure and approximate DP):
#: its cumulant points cost FEW_ATOMS_CUMULANT_FACTOR times an ordinary factor's (mostly
#: zeros), and its FFT work FEW_ATOMS_PASS_FACTOR times (the composition once redid itself
#: in extended precision there: 3; it no longer does, measured over epsilon 0.01..3,
#: T 50..10^6, d 1e-5..1e-3: the passes the plan predicts, in float64).
FEW_ATOMS = 4
FEW_ATOMS_PASS_FACTOR = 1.0
FEW_ATOMS_CUMULANT_FACTOR = 0.2
#: Work per output grid point (tail sums, privacy profile, certified curve) ...
OUTPUT_WORK_PER_POINT = 0.22
#: ... plus this much per point for each doubling of a composition's output beyond
#: PASS_CACHE_POINTS (sigma 0.8, q 0.1, T 10^5: 9.8 s of CPU for outputs of 2e7 and 1.5e7
#: points, read 8.0 s without it).
OUTPUT_WORK_PER_DOUBLING = 0.18
#: Work per convolution grid point of dp_accounting's pairwise ``compose`` (compose_curves).
CONVOLVE_WORK_PER_POINT = 0.5
#: Work of a Rényi (RDP/zCDP) accounting: per subsampled Gaussian (dp_accounting's RDP
#: series at every order) and per other part.
RDP_WORK_SUBSAMPLED = 1.2e6
RDP_WORK_PART = 1e4


def doublings(points: float) -> float:
    """How many times ``points`` doubles PASS_CACHE_POINTS (0 below it)."""
    return max(0.0, math.log2(max(points, 1.0) / PASS_CACHE_POINTS))


def pass_work(points: float) -> float:
    """Work of one float64 tilted FFT pass over ``points`` grid points (see PASS_WORK_*)."""
    return PASS_WORK_FIXED + points * (PASS_WORK_PER_POINT + PASS_WORK_PER_DOUBLING * doublings(points))
