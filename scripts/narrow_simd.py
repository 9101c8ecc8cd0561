"""Print the CPU features to put in NPY_DISABLE_CPU_FEATURES for numpy's narrowest code path.

numpy compiles its SIMD loops for a baseline and several dispatched targets and picks the
widest one the CPU supports at import time (numpy docs, "CPU/SIMD optimizations"). Naming
every *dispatched* target of the installed numpy in ``NPY_DISABLE_CPU_FEATURES`` makes it
use the baseline loops (SSE4.2-class "X86_V2" on x86-64 with numpy 2.4), whatever the CPU:
disabling a target the CPU lacks is accepted silently (only enabling one is an error), and
baseline features, which cannot be disabled, are never named. So the same command works on
an AVX-512 Intel Xeon and on an AMD CPU without AVX-512, and with older numpy builds whose
targets carry other names (AVX2, AVX512F, AVX512_SKX, ...). ``make test`` re-runs
``tests/accounting`` this way, so that a second summation/transcendental code path is
exercised on every machine (issue 22).

Usage: ``NPY_DISABLE_CPU_FEATURES="$(python scripts/narrow_simd.py)" python -m pytest tests/accounting``
"""

try:  # what np.show_runtime() reads
    from numpy._core._multiarray_umath import __cpu_dispatch__
except ImportError:  # numpy < 2
    from numpy.core._multiarray_umath import __cpu_dispatch__

print(" ".join(__cpu_dispatch__))
