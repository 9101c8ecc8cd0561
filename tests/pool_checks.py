"""Checks shared by the tests that kill web worker processes at the time limit (imported
by name: pytest puts this folder on sys.path for its conftest.py)."""

from __future__ import annotations

import os
import time

#: CPU ticks (1/100 s) an idle worker may use while watched for WATCH_S seconds.
IDLE_TICKS = 20
WATCH_S = 1.0


def cpu_ticks(pid: int) -> int:
    """User + system CPU ticks of process ``pid`` so far (/proc/PID/stat)."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def running(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie waiting to be reaped."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def pool_pids(app) -> list[int]:
    """Process ids of the live workers of every worker pool of ``app``."""
    return [pid for pool in getattr(app.state, "pools", {}).values() for pid in pool.pids()]


def full_pool_pids(app, wait_s: float = 30.0) -> list[int]:
    """:func:`pool_pids` once every started pool has all its workers again (pebble starts
    the replacement of a killed worker a moment after the kill)."""
    deadline = time.monotonic() + wait_s
    pools = list(getattr(app.state, "pools", {}).values())
    while time.monotonic() < deadline and any(len(p.pids()) < p.size for p in pools):
        time.sleep(0.05)
    return pool_pids(app)


def assert_reaped(killed: list, reap_s: float) -> None:
    """Every killed worker (a process id) is gone within ``reap_s`` seconds."""
    assert killed, "the worker that ran past the time limit was not replaced"
    deadline = time.monotonic() + reap_s
    while any(running(p) for p in killed) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(running(p) for p in killed), "a killed worker is still running"


def assert_idle(alive_pids) -> None:
    """No worker keeps computing: after WATCH_S, each of ``alive_pids()`` uses at most
    IDLE_TICKS over the next WATCH_S."""
    time.sleep(WATCH_S)
    pids = list(alive_pids())
    start = {p: cpu_ticks(p) for p in pids}
    time.sleep(WATCH_S)
    busy = {p: cpu_ticks(p) - start[p] for p in pids if os.path.exists(f"/proc/{p}")}
    assert all(t <= IDLE_TICKS for t in busy.values()), f"CPU ticks per worker after the 422: {busy}"
