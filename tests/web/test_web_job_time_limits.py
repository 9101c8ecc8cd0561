"""A web job's time limit counts its own computing (CPU time), not the wall clock.

Two heavy reports near the web's work budget (2.6e8 and 2.9e8: 10 s of computing each) took
15-24 s together on 2 cores, but were killed at the former 60 s wall-clock limit while light
reports kept the light lane busy (the heavy lane yields the CPU to it), and answered 422 "use
fewer steps or a coarser discretization". Now a job is ended once it has computed
``Limits.timeout_s`` seconds (422: too large), and a job the machine gives no time to before a
wall-clock limit several times longer is answered 503 + Retry-After (the server busy, the
request not too large). These tests count seconds of computing against limits; none times
anything."""

from __future__ import annotations

import asyncio

import pytest
from fastapi import Request
from fastapi.testclient import TestClient

from fdpkit.accounting.cost import WORK_PER_SECOND
from fdpkit.web.common import Limits, run_heavy
from fdpkit.web.main import create_app
from fdpkit.web.pool import JobFailed, ServerBusy, WorkerPool, wall_limit

#: A job that computes until it is stopped, and one that waits without computing.
COMPUTES = "while True: pass"
WAITS = "import time; time.sleep(60)"


@pytest.fixture(scope="module")
def pool():
    p = WorkerPool(size=1, queue=1, memory_bytes=None)
    yield p
    p.close()


def test_a_job_is_ended_once_it_has_computed_its_time(pool):
    before = pool.pids()
    with pytest.raises(JobFailed, match=r"longer than 0\.5 s of computing; use fewer steps"):
        asyncio.run(pool.run(exec, COMPUTES, timeout=0.5))
    assert asyncio.run(pool.run(eval, "1 + 1", timeout=5)) == 2  # a fresh worker runs the next job
    assert not set(before) & set(pool.pids())


def test_a_job_that_waits_is_not_ended_for_its_computing_time(pool):
    # a wall-clock limit of 0.5 s ended a job that had computed nothing yet (as a heavy job
    # waiting for the CPU the light lane holds); its computing time is not spent by waiting
    assert asyncio.run(pool.run(exec, "import time; time.sleep(1.5)", timeout=0.5)) is None


def test_a_job_the_machine_gives_no_time_to_is_busy_not_too_large(pool):
    with pytest.raises(ServerBusy, match="too busy to finish this computation within 1 s") as busy:
        asyncio.run(pool.run(exec, WAITS, timeout=30, wall_timeout=1.0))
    assert busy.value.retry_after == pool.retry_after


@pytest.fixture(scope="module")
def busy_app():
    app = create_app(Limits(workers=1, heavy_workers=1, timeout_s=30, wall_timeout_s=1.0))

    @app.post("/test-waiting-job", include_in_schema=False)
    async def waiting_job(request: Request):
        return await run_heavy(request, exec, WAITS, work=1e12)  # the heavy lane

    with TestClient(app, raise_server_exceptions=False) as c:
        yield c
    for p in app.state.pools.values():
        p.close()


@pytest.mark.parametrize("accept", ["application/json", "text/html"])
def test_the_app_answers_503_with_retry_after(busy_app, accept):
    r = busy_app.post("/test-waiting-job", headers={"accept": accept})
    assert r.status_code == 503 and r.headers["Retry-After"].isdigit(), (r.status_code, r.headers)
    assert "too busy to finish this computation within 1 s" in r.text


def test_the_limits_give_the_budget_its_computing_time_and_a_share_of_a_core():
    lim = Limits()
    # the cost model errs high (estimate / CPU time 1..2): the budget's work is at most
    # max_work / WORK_PER_SECOND seconds of computing (30 s); the limit doubles it for the
    # rest of a report (figures, documents)
    assert lim.timeout_s * WORK_PER_SECOND >= 2 * lim.budget.max_work
    # a started job keeps its worker while it gets a third of a core or more (the light lane's
    # workers and the server share the machine)
    wall = lim.wall_timeout_s if lim.wall_timeout_s is not None else wall_limit(lim.timeout_s)
    assert wall >= 3 * lim.timeout_s
    # the short limits of tests still leave a cold worker a minute for its imports
    assert wall_limit(0.25) >= 60
