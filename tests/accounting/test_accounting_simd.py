"""The SIMD-narrowed re-run of ``tests/accounting`` (issue 22).

``make test`` runs this folder a second time with ``NPY_DISABLE_CPU_FEATURES`` naming every
SIMD target numpy dispatches to (``scripts/narrow_simd.py``), so that numpy's baseline
loops (other summation orders, other exp/log kernels) are exercised on every machine and
no tolerance rests on one CPU's rounding. This checks that the narrowing reached the test
process (pytest-xdist workers included); in the ordinary run there is nothing to check.
"""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

try:
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
except ImportError:  # numpy < 2
    from numpy.core._multiarray_umath import __cpu_dispatch__, __cpu_features__

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "narrow_simd.py"


def test_disabled_simd_targets_are_off_in_this_process():
    for name in os.environ.get("NPY_DISABLE_CPU_FEATURES", "").replace(",", " ").split():
        assert not __cpu_features__.get(name, False), f"{name} still enabled"


def test_the_narrowing_script_names_only_dispatched_targets():
    """Naming baseline features would make numpy refuse to import; unknown names would only
    warn and narrow nothing."""
    out = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, check=True,
                         env={k: v for k, v in os.environ.items() if k != "NPY_DISABLE_CPU_FEATURES"})
    names = out.stdout.split()
    assert names == list(__cpu_dispatch__)
    env = {**os.environ, "NPY_DISABLE_CPU_FEATURES": " ".join(names)}
    check = ("import numpy, sys; from numpy._core._multiarray_umath import __cpu_dispatch__ as d, "
             "__cpu_features__ as f; sys.exit(any(f[k] for k in d))")
    if np.lib.NumpyVersion(np.__version__) >= "2.0.0":
        subprocess.run([sys.executable, "-W", "error::ImportWarning", "-c", check], env=env, check=True)
