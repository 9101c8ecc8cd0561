"""The vectorised exact sum (issue 27) equals math.fsum bit for bit; the cheaper upper bound
on the sum is never below the exact sum and at most two floats above it."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from fdpkit.accounting._exact_sum import exact_sum_fraction, exact_sum_nonnegative, sum_upper_bound


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
    assert exact_sum_nonnegative(np.array([-0.0, 0.5, -0.0])) == 0.5  # negative zeros are zeros
    assert exact_sum_fraction(np.array([0.5, 2.0 ** -1074, -0.0])) == Fraction(1, 2) + Fraction(2.0 ** -1074)
    # an infinity or a NaN has no exact sum: fsum's answer, as before the vectorised sum
    assert exact_sum_nonnegative(np.array([0.5, np.inf])) == math.inf
    assert math.isnan(exact_sum_nonnegative(np.array([0.5, np.nan])))
    assert exact_sum_fraction(np.array([0.5, np.nan])) is None


@settings(max_examples=200, deadline=None)
@given(hnp.arrays(np.float64, st.integers(0, 300),
                  elements=st.floats(0.0, 1e300, allow_nan=False, allow_infinity=False)))
def test_exact_sum_property(x):
    assert exact_sum_nonnegative(x) == math.fsum(x)


def _exact(x: np.ndarray) -> Fraction:
    return sum((Fraction(v) for v in x.tolist()), Fraction(0))


def _within_two_ulps_above(bound: float, x: np.ndarray) -> bool:
    exact = _exact(x)
    ceiling = math.nextafter(math.nextafter(float(exact), math.inf), math.inf)
    return Fraction(bound) >= exact and bound <= ceiling


@pytest.mark.parametrize("seed", range(10))
def test_sum_upper_bound_is_an_upper_bound_within_two_ulps(seed):
    """PMF-like masses (total at most 1, spread over 300 decades): the bound is never below
    the exact (rational) sum and at most two floats above its rounding."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 50000))
    x = np.abs(rng.standard_normal(n)) * 10.0 ** rng.integers(-320, 0, n)
    x = x / (math.fsum(x) * float(rng.uniform(1.0, 3.0)))
    assert _within_two_ulps_above(sum_upper_bound(x), x)


def test_sum_upper_bound_edge_cases():
    assert sum_upper_bound(np.array([])) == 0.0
    assert _within_two_ulps_above(sum_upper_bound(np.array([5e-324] * 7)), np.array([5e-324] * 7))
    # many tiny masses under a large one: the fractions below 2^-51 are not lost
    pmf = np.concatenate([[0.5], np.full(100000, 2.0 ** -60)])
    assert _within_two_ulps_above(sum_upper_bound(pmf), pmf)
    # totals above 2 (where the integer parts could round) fall back to the exact sum
    big = np.array([1.5, 1.5, 1e-20])
    assert sum_upper_bound(big) == exact_sum_nonnegative(big)


@settings(max_examples=200, deadline=None)
@given(hnp.arrays(np.float64, st.integers(0, 300),
                  elements=st.floats(0.0, 2.0 / 300, allow_nan=False, allow_infinity=False)))
def test_sum_upper_bound_property(x):
    """Any masses: never below the exact sum; above it by at most two floats plus the stated
    error of the fractions' sum, a relative 3 n u."""
    bound, exact = sum_upper_bound(x), _exact(x)
    assert Fraction(bound) >= exact
    slack = Fraction(3 * len(x)) * Fraction(2.0 ** -53) * exact
    assert Fraction(math.nextafter(math.nextafter(float(exact + slack), math.inf), math.inf)) >= Fraction(bound)


@settings(max_examples=200, deadline=None)
@given(hnp.arrays(np.float64, st.integers(0, 300),
                  elements=st.floats(0.0, 0.02, allow_nan=False, allow_infinity=False)),
       st.floats(0.0, 1.0, allow_nan=False))
def test_mass_excess_is_fsum_of_the_three(probs, inf):
    """The composition's repair check (tilted.py, Step 1) reads inf + sum(probs) - 1 from the
    exact sum: the same float as math.fsum of the three, so its sign is exact."""
    from fdpkit.accounting.tilted import _mass_excess

    assert _mass_excess(probs, inf) == math.fsum([inf, -1.0, *probs.tolist()])


def test_mass_excess_of_non_finite_masses_is_fsums():
    from fdpkit.accounting.tilted import _mass_excess

    assert _mass_excess(np.array([0.5, np.inf]), 0.0) == math.inf
    assert math.isnan(_mass_excess(np.array([0.5, np.nan]), 0.0))
