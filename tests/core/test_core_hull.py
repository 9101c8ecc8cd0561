"""The vectorised upper concave hull equals Andrew's monotone chain on every input."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fdpkit.curves.hull import _chain, upper_concave_hull


def _reference(alpha, tpr, beta):
    return _chain(alpha, tpr, beta, np.arange(len(alpha)))


def _points(rng, n, kind):
    if kind == "noisy-concave":  # two interleaved concave chains plus rounding noise
        a = np.sort(rng.uniform(0, 1, n))
        t = np.sqrt(a) * (1 + 1e-3 * rng.standard_normal(n))
    elif kind == "quantized":  # alpha rounded to a coarse grid near 1 (the mirror tail)
        x = np.sort(rng.uniform(0, 1, n))
        a = np.round(1 - 1e-6 * x**2, 9)
        t = 1 - 1e-9 * x
    elif kind == "staircase":  # many points below a high one on each side (issue 27's slow case)
        a = np.sort(rng.uniform(0, 1, n))
        t = rng.uniform(0, 0.5, n) * np.sqrt(a)
        t[rng.integers(0, n, 5)] = rng.uniform(0.5, 1.0, 5)
        t[-1] = 0.9
    else:
        a = np.sort(rng.uniform(0, 1, n))
        t = rng.uniform(0, 1, n)
    a[0], a[-1] = 0.0, 1.0
    a = np.maximum.accumulate(a)
    keep = np.concatenate([[True], np.diff(a) > 0])
    a, t = a[keep], np.clip(t[keep], 0, 1)
    return a, t, 1.0 - t


@pytest.mark.parametrize("kind", ["noisy-concave", "quantized", "random", "staircase"])
@pytest.mark.parametrize("seed", range(5))
def test_hull_matches_monotone_chain(kind, seed):
    rng = np.random.default_rng(seed)
    for n in (3, 10, 1000, 30000):
        a, t, b = _points(rng, n, kind)
        np.testing.assert_array_equal(upper_concave_hull(a, t, b), _reference(a, t, b))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=3, max_size=400), st.integers(0, 2**31))
def test_hull_matches_monotone_chain_property(ys, seed):
    rng = np.random.default_rng(seed)
    n = len(ys)
    a = np.linspace(0, 1, n)
    # mostly concave with local dents, so every phase of the algorithm runs
    t = np.sqrt(a) - 0.01 * np.asarray(ys) * (rng.uniform(size=n) < 0.3)
    t = np.clip(t, 0, 1)
    np.testing.assert_array_equal(upper_concave_hull(a, t, 1 - t), _reference(a, t, 1 - t))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 20), max_size=40), st.lists(st.integers(0, 20), max_size=40))
def test_merge_of_sorted_runs_is_a_stable_sort(r1, r2):
    """accounting.pld_curve._merge_order (binary searches) equals a stable sort of the two
    sorted runs concatenated, ties included (the certified curve merges its runs so)."""
    from fdpkit.accounting.pld_curve import _merge_order

    x1, x2 = np.sort(np.array(r1, dtype=float)), np.sort(np.array(r2, dtype=float))
    ref = np.argsort(np.concatenate([x1, x2]), kind="stable")
    assert (_merge_order(x1, x2) == ref).all()


def test_prefilter_drops_only_points_below_both_sides():
    """The O(n) prefilter (points below a higher point on each side) runs on dense
    leftovers and keeps the hull exact, in TPR and in beta (TPR near 1)."""
    from fdpkit.curves import hull

    rng = np.random.default_rng(7)
    n = 200000
    a = np.linspace(0.0, 1.0, n)
    b = 10.0 ** rng.uniform(-20, -1, n)  # TPR near 1: compared in beta
    b[0], b[-1] = 1e-22, 1e-21
    t = 1.0 - b
    drop = hull._below_both_sides(t, b)
    assert drop[1:-1].all() and not drop[0] and not drop[-1]
    np.testing.assert_array_equal(upper_concave_hull(a, t, b), [0, n - 1])
    small = rng.uniform(0, 1e-3, 50000)
    small[[0, -1]] = [1e-3, 2e-3]
    assert not hull._below_both_sides(np.sort(small), 1 - np.sort(small)).any()
