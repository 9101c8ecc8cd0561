"""The memory this process may take (:func:`_machine_memory`): the machine's physical memory,
or less under an address-space limit (``ulimit -v``) or a container's memory limit (cgroup).
:mod:`fdpkit.accounting.cost` refuses compositions beyond it before any work."""

from __future__ import annotations

import math
import os


def _machine_memory() -> float:
    """The memory this process may take, in bytes: the machine's physical memory (64 GiB where
    it cannot be read), or less where the process is limited (:func:`_process_limit`)."""
    try:
        physical = float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        physical = 64.0 * 1024**3
    return min(physical, _process_limit())


#: The memory limit of a container: cgroup v2, then v1 ("max" or a huge number: none).
_CGROUP_LIMITS = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")


def _process_limit() -> float:
    """What this process may still map under its address-space limit (``ulimit -v``, RLIMIT_AS:
    the limit less what it maps now), and its container's memory limit (cgroup); inf where
    neither is set. Without it a limited process passed the check on the machine's memory
    and then failed inside numpy with a bare MemoryError (or was killed)."""
    limit = math.inf
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY:
            with open("/proc/self/statm") as fh:
                mapped = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
            limit = max(0.0, float(soft - mapped))
    except (ImportError, OSError, ValueError, AttributeError):  # pragma: no cover - non-Linux
        pass
    for path in _CGROUP_LIMITS:
        try:
            with open(path) as fh:
                text = fh.read().strip()
        except OSError:
            continue
        if text.isdigit():
            limit = min(limit, float(text))
        break
    return limit
