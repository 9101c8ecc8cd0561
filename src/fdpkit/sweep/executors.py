"""Where a sweep's groups run: in this process, a local process pool, or a Dask cluster.

Every executor calls the same plain function (by default
:func:`fdpkit.sweep.evaluate.evaluate_group`; a study may pass its own ``fn``) on the same
plain data, so results are identical whichever runs them. fdpkit keeps no
scheduler, queue or retry logic of its own: ``concurrent.futures`` runs the local pool and
Dask (``dask.distributed``) runs clusters, with their own scheduling and fault handling.

Workers account with ``FDPKIT_THREADS=1`` and one BLAS/OpenMP thread
(``OPENBLAS_NUM_THREADS=1`` etc., unless the user set them), so that *N* workers use *N*
cores: a BLAS library that starts its own thread pool in every worker oversubscribes the
cores and makes a sweep on 2 workers slower than on one.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

from fdpkit.errors import ParameterError
from fdpkit.sweep.evaluate import evaluate_group
from fdpkit.vocabulary import DASK_CONNECT_TIMEOUT  # a global of this module: tests set it lower here

EXECUTORS = ("inprocess", "processes", "dask")
"""Names of the ways a sweep can run its groups: in this process, in a process pool, on a Dask cluster."""

Group = Sequence[Mapping[str, Any]]
OnDone = Callable[[list], None]


#: Environment of a worker process: one accounting thread, one BLAS/OpenMP thread (read by
#: the BLAS library when it loads, so it must be set before the worker starts).
WORKER_ENV = {"FDPKIT_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
              "MKL_NUM_THREADS": "1"}


#: Dask's default worker environment entries fdpkit's LocalCluster leaves out (see
#: :func:`dask_client`).
DASK_ENVIRON_DROPPED = ("MALLOC_TRIM_THRESHOLD_",)


def _positive_int(name: str, value: Any) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1):
        raise ParameterError(f"{name} must be a positive integer, got {value!r}", name)


def check_executor(executor: str | None, *, workers: Any = None, scheduler: Any = None, dask_local: Any = None,
                   client: Any = None) -> str:
    """The executor a sweep runs on, its arguments checked before any work (ParameterError).

    Default: ``"dask"`` when ``client``, ``scheduler`` or ``dask_local`` is given, else
    ``"processes"``. At most one of those three, and none of them with another executor
    (they were ignored: a sweep given a Dask client and ``executor="inprocess"`` ran in
    process); ``workers`` and ``dask_local`` are positive integers, ``client`` a Dask client.
    """
    _positive_int("workers", workers)
    _positive_int("dask_local", dask_local)
    dask_args = [n for n, v in (("client", client), ("scheduler", scheduler), ("dask_local", dask_local))
                 if v is not None]
    if len(dask_args) > 1:
        raise ParameterError(f"give one of client, scheduler or dask_local, not {' and '.join(dask_args)}",
                             dask_args[0], tuple(dask_args))
    if executor is None:
        executor = "dask" if dask_args else "processes"
    if executor not in EXECUTORS:
        raise ParameterError(f"executor must be one of {', '.join(EXECUTORS)}, got {executor!r}", "executor")
    if dask_args and executor != "dask":
        raise ParameterError(f"{dask_args[0]} runs on Dask: give executor='dask' (or none) with it, "
                             f"got executor={executor!r}", "executor", ("executor", dask_args[0]))
    if client is not None and not (callable(getattr(client, "submit", None)) and hasattr(client, "as_current")):
        raise ParameterError(f"client must be a dask.distributed.Client, got {type(client).__name__}", "client")
    if scheduler is not None:
        check_scheduler_address(scheduler)
    return executor


#: Address schemes whose addresses are ``scheme://host:port`` (checked before connecting).
_HOST_PORT_SCHEMES = ("tcp", "tls", "ws", "wss")


def check_scheduler_address(scheduler: Any) -> None:
    """Refuse a scheduler address Dask cannot parse (ParameterError naming ``scheduler``),
    before any client exists: a ``Client`` that failed inside its constructor on a malformed
    address (``"foo"``, ``"http://..."``) timed out again at interpreter exit, printing a
    traceback after the sweep's error."""
    if not isinstance(scheduler, str):
        raise ParameterError(f"scheduler must be an address (tcp://host:port), got {scheduler!r}", "scheduler")
    try:
        from distributed.comm.addressing import get_address_host_port, parse_address
        from distributed.comm.registry import get_backend
    except ImportError:  # pragma: no cover - the [sweep] extra is installed by make
        raise ValueError("the Dask executor needs the [sweep] extra: pip install 'fdpkit[sweep]'") from None
    try:
        scheme, _ = parse_address(scheduler, strict=False)
        get_backend(scheme)  # an unknown scheme ("http") raises ValueError
        if scheme in _HOST_PORT_SCHEMES:
            _, port = get_address_host_port(scheduler)
            if not 0 < port < 65536:
                raise ValueError(f"port {port} is not between 1 and 65535")
    except (ValueError, TypeError) as exc:
        raise ParameterError(f"scheduler {scheduler[:80]!r} is not a Dask scheduler address "
                             f"(tcp://host:port): {exc}", "scheduler") from None


def _single_threaded() -> None:
    os.environ["FDPKIT_THREADS"] = "1"


@contextlib.contextmanager
def _worker_environment() -> Iterator[None]:
    """Set :data:`WORKER_ENV` (where the user has not) while worker processes are started:
    spawned processes inherit this process's environment."""
    added = {k: v for k, v in WORKER_ENV.items() if k not in os.environ}
    os.environ.update(added)
    try:
        yield
    finally:
        for k in added:
            os.environ.pop(k, None)


def run_inprocess(groups: Sequence[Group], options: Mapping[str, Any], on_done: OnDone, *,
                  fn: Callable = evaluate_group, **_: Any) -> None:
    """Evaluate the groups one after the other in this process, calling ``on_done`` with
    each group's rows."""
    for g in groups:
        on_done(fn(list(g), dict(options)))


def run_processes(groups: Sequence[Group], options: Mapping[str, Any], on_done: OnDone, *,
                  workers: int | None = None, fn: Callable = evaluate_group, **_: Any) -> None:
    """Evaluate the groups on a local pool of ``workers`` spawned, single-threaded processes
    (default: all cores), calling ``on_done`` with each group's rows as it finishes."""
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    n = workers or os.cpu_count() or 1
    ctx = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(max_workers=n, mp_context=ctx, initializer=_single_threaded)
    try:
        with _worker_environment():  # the workers start as the groups are submitted
            pending = {pool.submit(fn, list(g), dict(options)) for g in groups}
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                try:
                    rows = fut.result()
                except BrokenProcessPool as exc:
                    raise RuntimeError(BROKEN_POOL) from exc
                on_done(rows)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


#: Why a process pool broke, in words: a spawned worker imports the main script afresh, so a
#: script that sweeps at module level (no ``__main__`` guard) has every worker start a sweep of
#: its own, which multiprocessing refuses: the worker dies and the pool breaks.
BROKEN_POOL = ("a sweep worker process ended before returning its rows. In a script, run the sweep under "
               "`if __name__ == \"__main__\":` (each worker process imports the script afresh), or pass "
               "executor=\"inprocess\"; a worker stopped by the system (out of memory) ends the same way")


def dask_client(*, scheduler: str | None = None, dask_local: int | None = None):
    """A ``dask.distributed`` client: connected to ``scheduler`` (``tcp://host:port``; a
    ParameterError naming ``scheduler`` when the address is malformed or no scheduler answers
    within :data:`DASK_CONNECT_TIMEOUT` seconds) or
    to a ``LocalCluster`` of ``dask_local`` single-threaded worker processes (closed with
    the client)."""
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:  # pragma: no cover - the [sweep] extra is installed by make
        raise ValueError("the Dask executor needs the [sweep] extra: pip install 'fdpkit[sweep]'") from None
    if scheduler is not None:
        check_scheduler_address(scheduler)
        try:
            return Client(scheduler, timeout=DASK_CONNECT_TIMEOUT, set_as_default=False)
        except (OSError, TimeoutError, ValueError) as exc:
            why = "" if "timed out" in str(exc).lower() else f": {exc}"
            raise ParameterError(f"could not reach the Dask scheduler at {scheduler!r} within "
                                 f"{DASK_CONNECT_TIMEOUT:g} s{why}", "scheduler") from None
    import dask

    # Dask sets MALLOC_TRIM_THRESHOLD_ in its workers, which switches off glibc's dynamic mmap
    # threshold: every large NumPy temporary is then mmap'ed and faulted in afresh, and a
    # sweep group runs about 1.6x slower than in a plain process. fdpkit's own LocalCluster
    # leaves the allocator at its defaults (a remote cluster keeps its own configuration).
    environ = {k: v for k, v in dask.config.get("distributed.nanny.pre-spawn-environ", {}).items()
               if k not in DASK_ENVIRON_DROPPED}
    with dask.config.set({"distributed.nanny.pre-spawn-environ": {**environ, **WORKER_ENV}}):
        cluster = LocalCluster(n_workers=dask_local or 1, threads_per_worker=1, processes=True,
                               dashboard_address=":0", env=dict(WORKER_ENV))
    client = Client(cluster, set_as_default=False)
    client._fdpkit_owns_cluster = cluster  # closed together in close_client
    return client


def close_client(client) -> None:
    """Close a client from :func:`dask_client`, and the local cluster it started, if any."""
    cluster = getattr(client, "_fdpkit_owns_cluster", None)
    client.close()
    if cluster is not None:
        cluster.close()


def run_dask(groups: Sequence[Group], options: Mapping[str, Any], on_done: OnDone, *,
             scheduler: str | None = None, dask_local: int | None = None, client=None,
             on_client: Callable[[Any], None] | None = None, fn: Callable = evaluate_group,
             **_: Any) -> None:
    """Evaluate the groups on Dask: the given ``client``, a scheduler at ``scheduler``, or a
    local cluster of ``dask_local`` workers (closed afterwards); ``on_client`` sees the client
    (e.g. for its dashboard link), ``on_done`` each group's rows as it finishes."""
    from dask.distributed import as_completed

    own = client is None
    if own:
        client = dask_client(scheduler=scheduler, dask_local=dask_local)
    try:
        if on_client is not None:
            on_client(client)
        with client.as_current():
            futures = [client.submit(fn, list(g), dict(options), pure=False) for g in groups]
            try:
                for fut in as_completed(futures):
                    on_done(fut.result())
            finally:
                client.cancel(futures)
    finally:
        if own:
            close_client(client)


RUNNERS = {"inprocess": run_inprocess, "processes": run_processes, "dask": run_dask}
