r"""The cost model's view of the extended-precision redo of the tilted composition.

:func:`fdpkit.accounting.tilted.compose` composes in float64 and, where the float64 bound
on a tail sum that matters stays above ``REL_TAIL`` of the sum after its refinement passes,
composes again in numpy's longdouble (where that is wider than float64). That happens at
tiny sample rates with small noise (sigma 0.6..1, q 1e-7..1e-5: rare, large losses whose
tail no tilt isolates), and there the redo is most of the run: at sigma 0.6, q 1e-7,
T 10^5, d 1e-5, 2.5 of 3.0 s, its passes wider (longdouble's round-off allows wider
windows) and each point 3-8x dearer than a float64 one. The condition is read off the
composition itself, run in float64 on the cost model's coarse factors (about
:data:`fdpkit.accounting.cost.COARSE_POINTS` points each, milliseconds): its worst bound
is the fine grid's up to the grid step (measured over sigma 0.6..1.5, q 1e-7..1e-3,
T 10^3..10^5 at d 1e-4: every redone run reads at least 0.03 on the coarse grid, every
other at most 2.4e-4, against ``REL_TAIL`` = 1e-3). An estimate, never a bound: it
decides cost only.
"""

from __future__ import annotations

import numpy as np

from fdpkit.accounting import tilted
from fdpkit.accounting._pld_adapter import PmfArrays

#: Work per grid point of a longdouble FFT pass, in float64 pass units. A longdouble point
#: costs 2.8..7.7x a float64 one in CPU time (numpy's longdouble FFT has no vectorised
#: kernels), but the redone passes are also counted at their own, wider sizes, with the
#: refinement passes before them. Refitted with the cost model's float64 constants (2026-11,
#: FDPKIT_THREADS=1): at 3.0 the estimate of five redone runs (sigma 0.6..0.8, q 1e-7..1e-5,
#: T 10^3..10^5, d 1e-5..1e-4) reads 1.25..1.8x their CPU time (it was 1.0 against a
#: float64 pass rate 3.6x higher).
LONGDOUBLE_PASS_FACTOR = 3.0
#: Times the longdouble composition runs its passes: once, and once more for the tail sums
#: bounded in l2 (Step 4b of :mod:`fdpkit.accounting.tilted`), which the float64 run skips
#: when it is redone.
LONGDOUBLE_PASS_RUNS = 1


#: Largest coarse composition (grid points of its planned window) run to predict the redo:
#: a few milliseconds. A larger one (a leaf whose coarse grid is the fine one, e.g. 10^7
#: Laplace releases) is not run, and no redo is counted.
PROBE_MAX_POINTS = 100_000


def redo_passes(parts: list[tuple[PmfArrays, int]], planned: float) -> list[float]:
    """The FFT pass sizes (coarse grid points) of the float64 composition of ``parts``
    (coarse factors, times; ``planned`` its planned window), its refinement passes included,
    where :func:`fdpkit.accounting.tilted.compose` redoes it in longdouble (its worst tail
    bound above ``REL_TAIL``, as compose decides); [] where it does not, or where the
    window is over :data:`PROBE_MAX_POINTS`."""
    if not np.finfo(np.longdouble).eps < np.finfo(np.float64).eps or planned > PROBE_MAX_POINTS:
        return []  # no wider type here (compose never redoes), or too large to probe
    sizes: list[float] = []
    worst = tilted._compose_once(parts, np.float64, redone_above=-1.0, sizes=sizes)[1]
    return sizes if worst > tilted.REL_TAIL else []
