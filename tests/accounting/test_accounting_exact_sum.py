"""The vectorised exact sum (issue 27) equals math.fsum bit for bit."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from fdpkit.accounting._exact_sum import exact_sum_nonnegative


@pytest.mark.parametrize("seed", range(20))
def test_exact_sum_equals_fsum_on_wide_ranges(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 20000))
    x = np.abs(rng.standard_normal(n)) * 10.0 ** rng.integers(-320, 300, n)
    x = x[np.isfinite(x)]
    assert exact_sum_nonnegative(x) == math.fsum(x)


def test_exact_sum_edge_cases():
    assert exact_sum_nonnegative(np.array([])) == 0.0
    assert exact_sum_nonnegative(np.array([5e-324] * 7)) == math.fsum([5e-324] * 7)
    # ties round half to even, as fsum: 1 + 2^-53 is a tie, + 2^-1074 breaks it upwards
    tie = np.array([1.0, 2.0 ** -53])
    assert exact_sum_nonnegative(tie) == math.fsum(tie) == 1.0
    up = np.array([1.0, 2.0 ** -53, 5e-324])
    assert exact_sum_nonnegative(up) == math.fsum(up) == 1.0 + 2.0 ** -52
    # many tiny masses under a large one (a PMF's tail): sequential sums lose them
    pmf = np.concatenate([[0.5], np.full(100000, 2.0 ** -60)])
    assert exact_sum_nonnegative(pmf) == math.fsum(pmf)
    assert exact_sum_nonnegative(np.array([1.0, 2.0], dtype=np.float32)) == 3.0  # other dtypes: fsum


@settings(max_examples=200, deadline=None)
@given(hnp.arrays(np.float64, st.integers(0, 300),
                  elements=st.floats(0.0, 1e300, allow_nan=False, allow_infinity=False)))
def test_exact_sum_property(x):
    assert exact_sum_nonnegative(x) == math.fsum(x)
