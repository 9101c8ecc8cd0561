"""Workers started with the server warm up (issue 27): fdpkit is imported and its caches
filled before the first job, so no request waits for a cold worker; replacements and
pools without ``warm`` stay idle until their first job."""

import asyncio

from fdpkit.web.common import Limits
from fdpkit.web.pool import WorkerPool

#: A job that imports nothing: whether the jobs' module is already loaded in the worker.
LOADED = "'fdpkit.web.jobs' in __import__('sys').modules and 'fdpkit.accounting.single_step' in __import__('sys').modules"


def _loaded(pool: WorkerPool) -> bool:
    return asyncio.run(pool.run(eval, LOADED, timeout=120))


def test_started_workers_are_warm_and_cold_pools_import_nothing():
    warm = WorkerPool(size=1, queue=1, warm=True)
    cold = WorkerPool(size=1, queue=1)
    try:
        warm.start()
        cold.start()
        assert _loaded(warm) is True      # warm_up ran before the first job was read
        assert _loaded(cold) is False     # a cold worker imports nothing until a job needs it
    finally:
        warm.close()
        cold.close()


def test_serve_limits_warm_and_defaults_do_not():
    assert Limits().warm_workers is False
    assert Limits(warm_workers=True).warm_workers is True
