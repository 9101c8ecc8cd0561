"""Per-thread scratch buffers for the temporaries of the numeric passes (issue 27).

A report's passes (composition, curve, hull, fit) work on arrays of 10^5 - 10^6 points.
Fresh temporaries of that size are served by glibc from memory it has just returned to the
kernel (its heap is trimmed, and large blocks are mmapped), so every pass pays a page
fault per 4 KiB touched: about a fifth of the headline report's CPU time when another
large computation runs between reports. The buffers here are allocated once per thread
and reused, so their pages stay mapped.

Rules for callers: a buffer is a *temporary*. It is filled with ``out=`` arguments and
in-place ufuncs, read before the function that took it returns, and never returned,
stored or handed to code that could take the same ``name`` again before it is done with it
(each call site uses its own name). Values computed in a buffer are bit for bit those of
the ufunc expressions they replace (same operations, same order): no bound changes.
"""

from __future__ import annotations

import threading

import numpy as np

#: Buffers larger than this many bytes are not kept (allocated fresh each time).
MAX_KEPT_BYTES = 64 << 20
#: At most this many bytes are kept per thread in all; past it, buffers are allocated fresh.
#: A long-lived process (a web or Dask worker under a memory cap) thus never holds more than
#: this between jobs, whatever sizes earlier jobs had.
MAX_KEPT_TOTAL = 256 << 20

_LOCAL = threading.local()


def scratch(name: str, n: int, dtype=np.float64) -> np.ndarray:
    """A 1-d work array of ``n`` elements (contents undefined), private to this thread.

    Parameters
    ----------
    name : str
        The call site's buffer name: two live temporaries never share one.
    n : int
        Number of elements (>= 0).
    dtype : numpy dtype, optional
        Element type (float64 by default).

    Returns
    -------
    numpy.ndarray
        A view of length ``n`` of a buffer kept for the thread (grown by half again when
        too small), or a fresh array when ``n`` elements exceed :data:`MAX_KEPT_BYTES`.

    Examples
    --------
    >>> buf = scratch("doc", 4)
    >>> np.multiply(np.arange(4.0), 2.0, out=buf).tolist()
    [0.0, 2.0, 4.0, 6.0]
    """
    dtype = np.dtype(dtype)
    if n * dtype.itemsize > MAX_KEPT_BYTES:
        return np.empty(n, dtype=dtype)
    pool = getattr(_LOCAL, "pool", None)
    if pool is None:
        pool = _LOCAL.pool = {}
    key = (name, dtype.str)
    buf = pool.get(key)
    if buf is None or len(buf) < n:
        size = n if buf is None else max(n, len(buf) + len(buf) // 2)
        size = min(size, MAX_KEPT_BYTES // dtype.itemsize)
        kept = sum(b.nbytes for k, b in pool.items() if k != key)
        if kept + size * dtype.itemsize > MAX_KEPT_TOTAL:
            return np.empty(n, dtype=dtype)
        buf = pool[key] = np.empty(size, dtype=dtype)
    return buf[:n]


def ramp(n: int) -> np.ndarray:
    """``np.arange(n, dtype=float)`` as a read-only view of a kept per-thread array.

    Parameters
    ----------
    n : int
        Length (>= 0).

    Returns
    -------
    numpy.ndarray
        0.0, 1.0, ..., n - 1 (float64, read-only).

    Examples
    --------
    >>> ramp(3).tolist()
    [0.0, 1.0, 2.0]
    """
    if n * 8 > MAX_KEPT_BYTES:
        return np.arange(n, dtype=float)
    r = getattr(_LOCAL, "ramp", None)
    if r is None or len(r) < n:
        size = n if r is None else max(n, len(r) + len(r) // 2)
        r = np.arange(min(size, MAX_KEPT_BYTES // 8), dtype=float)
        r.flags.writeable = False
        _LOCAL.ramp = r
    return r[:n]


def roundoff_factors(n: int, unit: float) -> tuple[np.ndarray, np.ndarray]:
    """``(1 - s, 1 + s)`` with ``s = (np.arange(n) + 2.0) * unit``, as read-only views of
    kept per-thread arrays (computed by the same operations, so the same values bit for
    bit): the relative round-off slack of the k-th sequential sum, for every k at once.

    Parameters
    ----------
    n : int
        Length (>= 0).
    unit : float
        The unit round-off (the arrays are rebuilt when it changes).

    Returns
    -------
    tuple of numpy.ndarray

    Examples
    --------
    >>> down, up = roundoff_factors(2, 0.5 ** 53)
    >>> bool(down[0] < 1.0 < up[0])
    True
    """
    kept = getattr(_LOCAL, "roundoff", None)
    if kept is None or kept[0] != unit or len(kept[1]) < n:
        if n * 16 > MAX_KEPT_BYTES:
            s = (np.arange(n, dtype=float) + 2.0) * unit
            return 1.0 - s, 1.0 + s
        size = n if kept is None or kept[0] != unit else max(n, len(kept[1]) + len(kept[1]) // 2)
        size = min(size, MAX_KEPT_BYTES // 16)
        s = np.arange(size, dtype=float)
        s += 2.0
        s *= unit
        down, up = 1.0 - s, 1.0 + s
        down.flags.writeable = False
        up.flags.writeable = False
        kept = _LOCAL.roundoff = (unit, down, up)
    return kept[1][:n], kept[2][:n]


def release() -> None:
    """Drop this thread's buffers (they are otherwise kept for the thread's lifetime: about
    30 arrays of the largest curve's vertex count, e.g. ~100 MB at 4 * 10^5 vertices).

    Examples
    --------
    >>> release()
    """
    _LOCAL.pool = {}
    _LOCAL.ramp = None
    _LOCAL.roundoff = None
