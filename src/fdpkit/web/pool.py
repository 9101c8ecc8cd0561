"""A bounded pool of worker PROCESSES for heavy web work (accounting, rendering).

Why processes: a thread cannot be stopped, so a request that times out would keep a core
busy and its memory held. A worker process can be killed: on timeout, on client disconnect
or when it dies, the pool kills it and starts a fresh one. Each worker caps its own address
space with ``resource.setrlimit(RLIMIT_AS)`` so one request cannot exhaust the machine, and
a worker that has grown large is recycled after its job.

The queue is bounded: when ``size`` jobs run and ``queue`` more wait, :class:`ServerBusy`
is raised at once (the app answers 503 with Retry-After). No maths here.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import threading
from multiprocessing.connection import Connection
from typing import Any, Callable

#: A worker whose resident memory exceeds this after a job is replaced (returns memory).
RECYCLE_RSS_BYTES = 500 * 1024**2
#: Jobs after which a worker is replaced regardless (bounds slow leaks).
MAX_JOBS_PER_WORKER = 200


class ServerBusy(Exception):
    """Every worker is busy and the waiting queue is full (HTTP 503 + Retry-After)."""

    def __init__(self, retry_after: int) -> None:
        super().__init__("the server is busy; retry later")
        self.retry_after = retry_after


class JobFailed(ValueError):
    """A job could not finish (timeout, out of memory, worker died): HTTP 422."""


#: The worker process's program. It is deliberately standalone (``python -c``): unless its
#: pool warms its workers (``warm=True``: :func:`fdpkit.web.jobs.warm_up` runs once when the
#: worker starts, so that no request waits for imports and cold caches), it imports no part
#: of fdpkit until a job arrives (unpickling the job's function imports its module), so a
#: freshly started or recycled worker costs no CPU while idle.
_WORKER_CODE = r"""
import os, resource, signal, sys
from multiprocessing.connection import Connection

def rss():
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0

def main(fd, memory_bytes, nice, recycle_rss, max_jobs, warm):
    conn = Connection(fd)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the server, which stops us
    if nice:
        os.nice(nice)
    if memory_bytes:
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        cap = memory_bytes if hard == resource.RLIM_INFINITY else min(memory_bytes, hard)
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    if warm:  # import the jobs' modules and warm their caches before the first job
        try:
            from fdpkit.web.jobs import warm_up
            warm_up()
        except Exception:
            pass
    jobs = 0
    while True:
        try:
            fn, args, kwargs = conn.recv()
        except (EOFError, OSError):
            return
        except MemoryError:
            result = ("memory", "")
        else:
            try:
                result = ("ok", fn(*args, **kwargs))
            except MemoryError:
                result = ("memory", "")
            except ValueError as exc:
                result = ("value", str(exc), getattr(exc, "parameter", None))
            except Exception as exc:
                result = ("error", f"{type(exc).__name__}: {exc}")
        jobs += 1
        retiring = jobs >= max_jobs or rss() > recycle_rss
        try:
            conn.send((retiring, result))
        except MemoryError:
            conn.send((True, ("memory", "")))
        del result
        if retiring:
            conn.close()
            return

main(*map(int, sys.argv[1:7]))
"""


class _Worker:
    """One worker: ``python -m fdpkit.web.pool FD MEMORY`` talking pickles over a socket pair
    (a fresh interpreter: no fork of a threaded server, no re-import of ``__main__``)."""

    def __init__(self, memory_bytes: int | None, nice: int = 0, warm: bool = False) -> None:
        mine, theirs = socket.socketpair()
        env = {**os.environ, **_CHILD_ENV}
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _WORKER_CODE, str(theirs.fileno()), str(memory_bytes or 0), str(nice),
             str(RECYCLE_RSS_BYTES), str(MAX_JOBS_PER_WORKER), str(int(warm))],
            pass_fds=(theirs.fileno(),), env=env, stdin=subprocess.DEVNULL, close_fds=True,
        )
        theirs.close()
        self.conn = Connection(mine.detach())

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        try:
            self.conn.close()
        except OSError:  # pragma: no cover
            pass
        if self.alive():
            self.proc.kill()
        # reap in the background so no zombie is left and the event loop never waits
        threading.Thread(target=self.proc.wait, args=(5,), daemon=True).start()


#: One BLAS thread per worker: the pool's size is the parallelism.
_CHILD_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


class WorkerPool:
    """``size`` worker processes, at most ``queue`` jobs waiting, ``memory_bytes`` address
    space per worker (None: no cap), workers ``nice``-d by that much (a heavy lane yields
    the CPU to a light one); ``warm``: the workers :meth:`start` starts (with the server)
    import fdpkit and warm their caches at once (:func:`fdpkit.web.jobs.warm_up`), so the
    first requests do not wait for a cold worker; replacements start cold. Workers start
    on first use or at :meth:`start`; the pool works from any event loop (the test client
    runs one per request)."""

    #: seconds between looks for a free worker while a job waits in the queue
    POLL_S = 0.01

    def __init__(self, size: int = 2, queue: int = 8, memory_bytes: int | None = 3 * 1024**3,
                 retry_after: int = 5, nice: int = 0, warm: bool = False) -> None:
        self.size, self.queue, self.memory_bytes, self.retry_after = size, queue, memory_bytes, retry_after
        self.nice, self.warm = nice, warm
        self._idle: list[_Worker] = []
        self._workers: set[_Worker] = set()
        self._lock = threading.Lock()
        self.pending = 0

    def start(self) -> None:
        """Start the workers now rather than on first use (warmed if the pool warms)."""
        with self._lock:
            while len(self._workers) < self.size:
                self._start_one(self.warm)

    def _start_one(self, warm: bool = False) -> None:
        # only the workers started with the server warm up: a replacement (after a kill, a
        # death or recycling) stays idle until its first job, so no CPU is spent behind a
        # request that was just stopped for taking too long
        w = _Worker(self.memory_bytes, self.nice, warm)
        self._workers.add(w)
        self._idle.append(w)

    def _replace(self, w: _Worker) -> None:
        w.kill()
        with self._lock:
            self._workers.discard(w)
            self._start_one()

    async def _acquire(self) -> _Worker:
        while True:
            with self._lock:
                while len(self._workers) < self.size:
                    self._start_one()
                if self._idle:
                    w = self._idle.pop(0)
                    if w.alive():
                        return w
                    self._workers.discard(w)
                    continue
            await asyncio.sleep(self.POLL_S)

    async def run(self, fn: Callable, *args: Any, timeout: float, **kwargs: Any) -> Any:
        """Run ``fn(*args, **kwargs)`` (picklable, module-level) in a worker; at most
        ``timeout`` seconds of computing. Raises ServerBusy, JobFailed or the job's
        ValueError (same message)."""
        if self.pending >= self.size + self.queue:
            raise ServerBusy(self.retry_after)
        self.pending += 1
        w: _Worker | None = None
        done = False
        try:
            w = await self._acquire()
            try:
                w.conn.send((fn, args, kwargs))
            except (OSError, ValueError):
                raise JobFailed("a worker stopped unexpectedly; please retry") from None
            loop = asyncio.get_running_loop()
            ready = loop.create_future()
            fd = w.conn.fileno()
            loop.add_reader(fd, lambda: ready.done() or ready.set_result(None))
            try:
                await asyncio.wait_for(ready, timeout)
            except asyncio.TimeoutError:
                raise JobFailed(f"the computation took longer than {timeout:g} s; use fewer steps or a "
                                "coarser discretization") from None
            finally:
                loop.remove_reader(fd)
            try:
                retiring, msg = w.conn.recv()
            except (EOFError, OSError):
                raise JobFailed("the computation ran out of memory on this server; use a coarser "
                                "discretization or fewer steps") from None
            done = not retiring
        finally:
            self.pending -= 1
            if w is not None:
                if done and w.alive():
                    with self._lock:
                        self._idle.append(w)
                else:  # timed out, cancelled (client left), crashed or recycled: replace it
                    self._replace(w)
        kind = msg[0]
        if kind == "ok":
            return msg[1]
        if kind == "value":
            exc = ValueError(msg[1])
            exc.parameter = msg[2]  # type: ignore[attr-defined]
            raise exc
        if kind == "memory":
            raise JobFailed("the computation ran out of memory on this server; use a coarser "
                            "discretization or fewer steps")
        raise RuntimeError(msg[1])

    def close(self) -> None:
        with self._lock:
            for w in list(self._workers):
                w.kill()
            self._workers.clear()
            self._idle.clear()
