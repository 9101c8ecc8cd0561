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
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
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
    """Every worker is busy and the waiting queue is full (HTTP 503 + Retry-After)."""

    def __init__(self, retry_after: int) -> None:
        super().__init__("the server is busy; retry later")
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

    async def run(self, fn: Callable, *args: Any, timeout: float, **kwargs: Any) -> Any:
        """Run ``fn(*args, **kwargs)`` (picklable, module-level) in a worker; at most
        ``timeout`` seconds of computing (then pebble kills the worker). Raises ServerBusy,
        JobFailed, or the job's own exception (a ValueError keeps its message and its
        ``parameter``)."""
        if self.pending >= self.size + self.queue:
            raise ServerBusy(self.retry_after)
        self.pending += 1
        try:
            try:
                future = self._executor().schedule(fn, args=args, kwargs=kwargs, timeout=timeout)
            except RuntimeError:  # the pool broke since (pebble refuses work): a fresh one
                self._discard()
                future = self._executor().schedule(fn, args=args, kwargs=kwargs, timeout=timeout)
            try:
                return await asyncio.wrap_future(future)
            except asyncio.CancelledError:  # the client left: pebble kills the worker
                future.cancel()
                raise
            except FutureTimeout:
                raise JobFailed(f"the computation took longer than {timeout:g} s; use fewer steps or a "
                                "coarser discretization") from None
            except MemoryError:
                raise JobFailed(_OUT_OF_MEMORY) from None
            except ProcessExpired:  # killed by the kernel (memory) or crashed
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
