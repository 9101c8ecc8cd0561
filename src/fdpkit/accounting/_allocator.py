"""Keep freed NumPy arrays in the process's heap instead of returning them to the OS.

Why
---
A headline DP-SGD report (noise 9.4, rate 0.33, 2,000 steps) creates about 17 MB of arrays of
a few hundred thousand float64 each (the composed PMFs, their cumulative sums, the curve's
vertices). glibc serves blocks above its mmap threshold (128 KiB, raised dynamically up to
the largest block freed) with a fresh ``mmap`` and trims the top of the heap whenever more
than twice that is free, so every report faults its arrays in page by page again: about
4,200 minor page faults, 10-15 ms of a 65-80 ms report (issue 27), and the same in every
setting of a sweep. With the thresholds below the freed blocks stay in the heap and the
next report reuses them: after the first reports, none or a few hundred page faults (where other work left its arrays in between). The cost is memory the
process keeps: up to :data:`TRIM_THRESHOLD` bytes of free heap are not handed back.

What
----
:func:`tune` calls ``mallopt(M_MMAP_THRESHOLD, 64 MiB)`` and ``mallopt(M_TRIM_THRESHOLD,
128 MiB)`` once per process, on glibc only, when the first composition starts
(:func:`fdpkit.accounting.tilted.compose`; nothing happens at import). It leaves the
allocator alone where someone has already chosen its behaviour: the environment sets any
``MALLOC_*_`` variable (Dask's workers set ``MALLOC_TRIM_THRESHOLD_``; fdpkit's own
LocalCluster leaves it out) or a ``glibc.malloc`` tunable in ``GLIBC_TUNABLES``, or
``FDPKIT_MALLOC_TUNING=0`` switches it off. Results never depend on it: only where arrays
live.
"""

from __future__ import annotations

import ctypes
import os
import sys
from typing import Mapping

#: Blocks up to this size come from the heap (glibc's dynamic threshold stops at 32 MiB).
MMAP_THRESHOLD = 64 << 20
#: Free memory at the top of the heap kept for reuse instead of being returned to the OS.
TRIM_THRESHOLD = 128 << 20

_M_TRIM_THRESHOLD = -1  # glibc's malloc.h
_M_MMAP_THRESHOLD = -3

_state: list[bool] = []  # [whether set], once per process (a fork inherits the settings)


def _chosen_elsewhere(environ: Mapping[str, str]) -> bool:
    """Whether the environment already configures glibc's allocator (or opts out)."""
    if environ.get("FDPKIT_MALLOC_TUNING", "").strip() == "0":
        return True
    if any(k.startswith("MALLOC_") and k.endswith("_") for k in environ):
        return True
    return "glibc.malloc." in environ.get("GLIBC_TUNABLES", "")


def tune() -> bool:
    """Set the thresholds (see the module docs) once per process; returns whether they are
    set. A no-op returning False off glibc, where the environment configures the allocator,
    or after a failed ``mallopt``."""
    if _state:
        return _state[0]
    ok = False
    if sys.platform.startswith("linux") and not _chosen_elsewhere(os.environ):
        try:
            libc = ctypes.CDLL("libc.so.6")
            mallopt = libc.mallopt
        except (OSError, AttributeError):  # musl, or no libc.so.6
            mallopt = None
        if mallopt is not None:
            mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
            mallopt.restype = ctypes.c_int
            ok = bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
    _state.append(ok)
    return ok
