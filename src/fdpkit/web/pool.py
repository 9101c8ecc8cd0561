"""A bounded pool of worker PROCESSES for heavy web work (accounting, rendering), on
:class:`pebble.ProcessPool`.

Why processes: a thread cannot be stopped, so a request that times out would keep a core
busy and its memory held. pebble kills a worker whose job runs past its time limit or is
cancelled (the client left) and starts a fresh one; a worker is also replaced after
:data:`MAX_JOBS_PER_WORKER` jobs (``max_tasks``: bounds slow leaks). Each worker caps its
own address space with ``resource.setrlimit(RLIMIT_AS)`` so one request cannot exhaust the
machine, runs its BLAS on one thread (the pool's size is the parallelism) and, in the heavy
lane, at a lower CPU priority.

Workers are fresh interpreters (the ``spawn`` start method: no fork of a threaded server).
A pool that warms (``warm=True``, what ``fdpkit serve`` uses) runs
:func:`fdpkit.web.jobs.warm_up` in each worker as it starts, so no request waits for
imports and cold caches; a pool that does not warm imports nothing of fdpkit's maths until
a job needs it.

The queue is bounded: when ``size`` jobs run and ``queue`` more wait, :class:`ServerBusy`
is raised at once (the app answers 503 with Retry-After). No maths here.

A job's time limit counts its own computing, not the wall clock: the worker's CPU-time
timer (``ITIMER_PROF``, every thread of the process) is set to the limit as the job starts,
and the kernel ends the worker when it rings (``SIGPROF``), even inside a long NumPy call;
the job is refused for its size (422). A wall-clock limit, several times longer, only
catches a job that the machine has no time to run (the heavy lane yields the CPU to the
light one: two heavy reports of 2.6e8 and 2.9e8 work, 10 s of computing each, took 15-24 s
together on 2 cores, and were killed at the former 60 s wall-clock limit while light
reports kept the light lane busy, told "use fewer steps"): that one is answered 503 with
Retry-After, the server being busy, not the request too large.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
import threading
from concurrent.futures import CancelledError, TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Callable

from pebble import ProcessExpired, ProcessPool

#: Jobs after which a worker is replaced (pebble's ``max_tasks``: bounds slow leaks).
MAX_JOBS_PER_WORKER = 200

#: One BLAS thread per worker: the pool's size is the parallelism.
_CHILD_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


class ServerBusy(Exception):
    """Every worker is busy and the waiting queue is full, or a job could not be given its
    computing time before its wall-clock limit (HTTP 503 + Retry-After)."""

    def __init__(self, retry_after: int, message: str = "the server is busy; retry later") -> None:
        super().__init__(message)
        self.retry_after = retry_after


class JobFailed(ValueError):
    """A job could not finish (timeout, out of memory, worker died): HTTP 422."""


_OUT_OF_MEMORY = ("the computation ran out of memory on this server; use a coarser discretization or "
                  "fewer steps")


def _start_worker(memory_bytes: int, nice: int, warm: bool | str, warmed: Any = None) -> None:
    """pebble's initializer: runs once in each worker process as it starts; counts itself
    in ``warmed`` (a shared integer) when its warm-up is done."""
    import resource

    for k, v in _CHILD_ENV.items():
        os.environ[k] = v
    signal.signal(signal.SIGPROF, signal.SIG_DFL)  # the job's time limit (_within) ends the worker
    if nice:
        os.nice(nice)
    if memory_bytes:
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        cap = memory_bytes if hard == resource.RLIM_INFINITY else min(memory_bytes, hard)
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    if warm:  # import the jobs' modules and warm their caches before the first job
        try:
            from fdpkit.web.jobs import warm_up

            warm_up(full=warm != "basic")
        except Exception:  # a failed warm-up costs speed, never correctness
            pass
        if warmed is not None:
            with warmed.get_lock():
                warmed.value += 1


def _within(fn: Callable, cpu_s: float, args: tuple, kwargs: dict) -> Any:
    """``fn(*args, **kwargs)`` in this worker, ended by the kernel (``SIGPROF``, whose default
    action ends the process) once it has computed ``cpu_s`` seconds (CPU time of every
    thread: ``ITIMER_PROF``); the timer is stopped when it returns."""
    signal.setitimer(signal.ITIMER_PROF, max(cpu_s, 1e-3))
    try:
        return fn(*args, **kwargs)
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)


def wall_limit(cpu_s: float) -> float:
    """The wall-clock seconds a started job of ``cpu_s`` seconds of computing is given: three
    times as long (a third of a core, shared with the other lane's workers and the server),
    and at least a minute more (a cold worker's imports, a machine busy for a moment).

    >>> wall_limit(60.0), wall_limit(0.25)
    (180.0, 60.25)
    """
    return max(3.0 * cpu_s, cpu_s + 60.0)


def _noop() -> None:
    """The job :meth:`WorkerPool.start` schedules so that pebble starts its workers."""


class WorkerPool:
    """``size`` worker processes (a :class:`pebble.ProcessPool`), at most ``queue`` jobs
    waiting, ``memory_bytes`` address space per worker (None: no cap), workers ``nice``-d
    by that much (a heavy lane yields the CPU to a light one); ``warm``: every worker
    imports fdpkit and warms its caches as it starts (:func:`fdpkit.web.jobs.warm_up`;
    ``"basic"``: the accounting passes only, for a lane whose jobs take seconds anyway).
    Workers start at :meth:`start` (with the server) or on first use; the pool works from
    any event loop (the test client runs one per request)."""

    def __init__(self, size: int = 2, queue: int = 8, memory_bytes: int | None = 3 * 1024**3,
                 retry_after: int = 5, nice: int = 0, warm: bool | str = False) -> None:
        self.size, self.queue, self.memory_bytes, self.retry_after = size, queue, memory_bytes, retry_after
        self.nice, self.warm = nice, warm
        self.pending = 0
        self._lock = threading.Lock()
        self._pool: ProcessPool | None = None
        self._context = multiprocessing.get_context("spawn")
        self._warmed = self._context.Value("i", 0) if warm else None

    def _executor(self) -> ProcessPool:
        with self._lock:
            if self._pool is None:
                self._pool = ProcessPool(max_workers=self.size, max_tasks=MAX_JOBS_PER_WORKER,
                                         initializer=_start_worker,
                                         initargs=(self.memory_bytes or 0, self.nice, self.warm, self._warmed),
                                         context=self._context)
            return self._pool

    def start(self) -> None:
        """Start the workers now rather than on first use (each warms as it starts if the
        pool warms)."""
        self._executor().schedule(_noop)

    def warmed(self) -> int:
        """How many workers have finished their warm-up so far (replacements included;
        0 for a pool that does not warm)."""
        return 0 if self._warmed is None else int(self._warmed.value)

    def pids(self) -> list[int]:
        """Process ids of the live workers (for tests and monitoring)."""
        pool = self._pool
        if pool is None:
            return []
        workers = pool._pool_manager.worker_manager.workers  # noqa: SLF001  (pebble keeps no public list)
        return [pid for pid, proc in list(workers.items()) if proc.is_alive()]

    async def run(self, fn: Callable, *args: Any, timeout: float, wall_timeout: float | None = None,
                  **kwargs: Any) -> Any:
        """Run ``fn(*args, **kwargs)`` (picklable, module-level) in a worker; at most
        ``timeout`` seconds of computing (CPU time; then the worker is ended: JobFailed, the
        job too large) and ``wall_timeout`` seconds once started (default: :func:`wall_limit`;
        then pebble kills the worker: ServerBusy, the machine too busy to run it). Raises
        ServerBusy, JobFailed, or the job's own exception (a ValueError keeps its message
        and its ``parameter``)."""
        if self.pending >= self.size + self.queue:
            raise ServerBusy(self.retry_after)
        wall = wall_limit(timeout) if wall_timeout is None else wall_timeout
        job = (fn, timeout, args, kwargs)
        self.pending += 1
        try:
            try:
                future = self._executor().schedule(_within, args=job, timeout=wall)
            except RuntimeError:  # the pool broke since (pebble refuses work): a fresh one
                self._discard()
                future = self._executor().schedule(_within, args=job, timeout=wall)
            try:
                return await asyncio.wrap_future(future)
            except asyncio.CancelledError:  # the client left: pebble kills the worker
                future.cancel()
                raise
            except FutureTimeout:  # started, but not given its computing time: the machine is busy
                raise ServerBusy(self.retry_after, f"the server was too busy to finish this computation within "
                                 f"{wall:g} s; retry later") from None
            except MemoryError:
                raise JobFailed(_OUT_OF_MEMORY) from None
            except ProcessExpired as exc:  # its time limit (_within), the kernel (memory), or a crash
                if exc.exitcode == -signal.SIGPROF:
                    raise JobFailed(f"the computation took longer than {timeout:g} s of computing; use fewer "
                                    "steps or a coarser discretization") from None
                raise JobFailed(_OUT_OF_MEMORY) from None
            except CancelledError:
                raise JobFailed("the computation was stopped; please retry") from None
            except BrokenProcessPool:  # every worker died at once: the next job gets a fresh pool
                self._discard()
                raise JobFailed("the server's worker processes stopped unexpectedly; please retry") from None
        finally:
            self.pending -= 1

    def _discard(self) -> None:
        """Forget a broken pool (stopped in the background); the next job starts a new one."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            threading.Thread(target=pool.stop, daemon=True).start()

    def close(self) -> None:
        """Stop every worker at once (running jobs are killed)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.stop()
            pool.join(timeout=10)
