"""Scratch buffers (issue 27): the curve passes compute their temporaries in per-thread
buffers. They must give the values of the plain expressions bit for bit, and no buffer may
leak into a result (a later computation of another size must not change an earlier curve).
"""

import threading

import numpy as np

from fdpkit._scratch import MAX_KEPT_BYTES, ramp, release, scratch
from fdpkit.accounting._pld_adapter import PmfArrays
from fdpkit.accounting.pld_curve import _steep_chain, _symmetric_hull
from fdpkit.curves.hull import _cross_slices, _slope_gap, upper_concave_hull


def _cross_reference(a, t, b):
    """The pre-scratch expression of _cross_slices."""
    use_t = t[1:-1] <= 0.5
    dt1 = np.where(use_t, t[1:-1] - t[:-2], b[:-2] - b[1:-1])
    dt2 = np.where(use_t, t[2:] - t[:-2], b[:-2] - b[2:])
    return _slope_gap(a[1:-1] - a[:-2], dt1, a[2:] - a[:-2], dt2)


def test_cross_slices_bit_for_bit():
    rng = np.random.default_rng(0)
    for n in (3, 4, 100, 20000):
        a = np.sort(rng.random(n))
        a[n // 3] = a[max(n // 3 - 1, 0)]  # a zero alpha step (division by zero)
        t = np.sort(rng.random(n))
        t[n // 2] = np.nan
        b = 1.0 - t
        assert np.array_equal(_cross_slices(a, t, b), _cross_reference(a, t, b), equal_nan=True)


def _pmf(rng, n, zeros=False, negative=False):
    d = 1e-3
    losses = (int(rng.integers(-n, n // 2 + 1)) + np.arange(n)) * d
    p = rng.random(n) * np.exp(-rng.uniform(0, 60, n))
    if zeros:
        p[rng.random(n) < 0.3] = 0.0
    if negative:
        p[rng.random(n) < 0.05] = -1e-18
    p /= p[p > 0].sum() * 1.5
    return PmfArrays(losses=losses, probs=p, infinity_mass=1e-4, discretization=d)


def _curve(a, b):
    return _symmetric_hull([_steep_chain(a), _steep_chain(b)])


def test_results_do_not_alias_scratch():
    rng = np.random.default_rng(1)
    for zeros, negative in ((False, False), (True, False), (True, True)):
        first = [_pmf(rng, 4000, zeros, negative) for _ in range(2)]
        chain = [x.copy() for x in _steep_chain(first[0])]
        curve = _curve(*first)
        saved = [curve._alpha.copy(), curve._tpr_v.copy(), curve._beta_v.copy()]
        # other computations, larger and smaller, reuse (and grow) the same buffers
        _curve(_pmf(rng, 9000), _pmf(rng, 9000))
        _curve(_pmf(rng, 50), _pmf(rng, 70, True))
        upper_concave_hull(np.sort(rng.random(5000)), np.sort(rng.random(5000)))
        again = _curve(*first)
        for old, arr, new in zip(saved, (curve._alpha, curve._tpr_v, curve._beta_v),
                                 (again._alpha, again._tpr_v, again._beta_v)):
            assert np.array_equal(old, arr)
            assert np.array_equal(old, new)
        for old, new in zip(chain, _steep_chain(first[0])):
            assert np.array_equal(old, new)


def test_scratch_buffers_per_thread_and_limits():
    buf = scratch("test", 10)
    buf[:] = 1.0
    seen = {}

    def other():
        seen["buf"] = scratch("test", 10)

    th = threading.Thread(target=other)
    th.start()
    th.join()
    assert not np.shares_memory(buf, seen["buf"])
    assert np.shares_memory(buf, scratch("test", 5))  # reused within a thread
    assert not np.shares_memory(buf, scratch("test", 10, np.int64))  # per dtype
    big = MAX_KEPT_BYTES // 8 + 1
    assert not np.shares_memory(scratch("test", big), scratch("test", big))  # not kept
    assert np.array_equal(ramp(7), np.arange(7.0))
    assert not ramp(7).flags.writeable
    kept = scratch("test", 10)
    release()
    assert not np.shares_memory(kept, scratch("test", 10))


def test_kept_memory_per_thread_is_capped():
    """Past MAX_KEPT_TOTAL bytes per thread, buffers are fresh arrays (a worker under a memory
    cap keeps at most that much between jobs)."""
    from fdpkit import _scratch

    _scratch.release()
    try:
        n = _scratch.MAX_KEPT_BYTES // 8
        for i in range(_scratch.MAX_KEPT_TOTAL // _scratch.MAX_KEPT_BYTES + 3):
            _scratch.scratch(f"cap-{i}", n)
        kept = sum(b.nbytes for b in _scratch._LOCAL.pool.values())
        assert kept <= _scratch.MAX_KEPT_TOTAL
    finally:
        _scratch.release()
