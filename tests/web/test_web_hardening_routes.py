"""Issue 14 on every route: heavy work of the sweep, audit and calibrate endpoints runs in a
worker PROCESS that is killed at the time limit (a 422, and no worker left computing), a
failing job is a 500 that still carries the security headers, and every route of every
router (pages, JSON twins, ledger pages and API, anonymous and logged in) answers with the
security headers and never a 5xx.

No timed assertions: the time limit is the server's configured one, and "no worker left
computing" compares CPU ticks of idle workers with a generous bound."""

from __future__ import annotations

import json
import operator
import re

import pytest
from fastapi import Request
from fastapi.testclient import TestClient

from fdpkit.ledger import open_ledger
from fdpkit.ledger.users import add_user
from fdpkit.web.common import Limits, run_heavy
from fdpkit.web.main import ROUTERS, create_app
from fdpkit.web.server import SECURITY_HEADERS
from pool_checks import assert_idle, assert_reaped, full_pool_pids, pool_pids, running

#: The time limit of the test server (seconds): every SLOW request below needs more.
TIME_LIMIT_S = 1.0
#: Seconds to wait for a killed worker to be gone.
REAP_S = 30.0
PASSWORD = "s3cret-Passw0rd!admin"

#: Requests within every limit and budget that compute well beyond TIME_LIMIT_S.
SLOW = [
    ("/api/audit/simulate", {"mechanism": {"kind": "repeated", "times": 250,
                                           "inner": {"kind": "laplace", "scale": 1.0}}, "trials": 200_000}),
    # ~3.7 s on the 2-core Xeon (8 large-mu settings; the former sigma 1-2, q 0.1-0.2, T 2000-4000
    # grid took 0.5 s once large curves were thinned, issue 27)
    ("/api/sweep", {"noise_multiplier": [0.8, 1.0], "sample_rate": [0.2, 0.3], "steps": [4000, 8000],
                    "discretization": 1e-3}),
    # ~7.8 s on the 2-core Xeon (400,000 steps at discretization 2e-5, within the cost budget).
    # The former 200,000 steps at 1e-4 took 1.5 s here and under the 1 s limit on CI once
    # composition got faster (issue 27): keep this one several times above the limit.
    ("/api/calibrate/dpsgd", {"epsilon": 1.0, "delta": 1e-5, "batch_size": 10, "dataset_size": 100_000,
                              "epochs": 40, "discretization": 2e-5}),
]


def _assert_headers(r) -> None:
    for k, v in SECURITY_HEADERS.items():
        assert r.headers.get(k) == v, (r.request.method, r.request.url.path, r.status_code, k)


def _workers(app) -> list[int]:
    return pool_pids(app)


@pytest.fixture(scope="module")
def slow_app():
    app = create_app(Limits(timeout_s=TIME_LIMIT_S, workers=1, heavy_workers=1, queue=2, heavy_queue=2))
    with TestClient(app, raise_server_exceptions=False) as c:
        yield app, c


@pytest.fixture(scope="module")
def job_app():
    """The production limits, and two test routes whose jobs fail or add in a worker."""
    app = create_app(Limits(workers=1, heavy_workers=1))

    @app.post("/failing-job", include_in_schema=False)
    async def failing_job(request: Request):
        return await run_heavy(request, operator.truediv, 1, 0, work=0.0)  # ZeroDivisionError in the worker

    @app.post("/adding-job", include_in_schema=False)
    async def adding_job(request: Request):
        return {"sum": await run_heavy(request, operator.add, 1, 2, work=0.0)}

    with TestClient(app, raise_server_exceptions=False) as c:
        yield app, c


@pytest.mark.parametrize("path, body", SLOW, ids=[p for p, _ in SLOW])
def test_over_the_time_limit_is_422_and_the_worker_is_killed(slow_app, path, body):
    app, c = slow_app
    before = set(full_pool_pids(app))
    r = c.post(path, json=body)
    assert r.status_code == 422, r.text
    assert f"longer than {TIME_LIMIT_S:g} s" in r.json()["detail"]
    _assert_headers(r)
    assert all(pool.pending == 0 for pool in app.state.pools.values())
    now = set(_workers(app))
    assert_reaped([pid for pid in before if pid not in now], REAP_S)
    # no worker keeps computing: the pool's processes are idle from now on
    assert_idle(lambda: [pid for pid in _workers(app) if running(pid)])


def test_a_failing_job_is_a_500_with_headers_and_the_pool_recovers(job_app):
    app, c = job_app
    r = c.post("/failing-job")
    assert r.status_code == 500
    _assert_headers(r)
    ok = c.post("/api/convert", json={"epsilon": 1.0, "delta": 1e-5})
    assert ok.status_code == 200
    r = c.post("/adding-job")  # the same lane runs the next job
    assert r.status_code == 200 and r.json() == {"sum": 3}


# --------------------------------------------------------------------------------------
# every route of every router: security headers, never a 5xx
# --------------------------------------------------------------------------------------
ROUTES = sorted({(m, r.path) for mod in ROUTERS for r in mod.router.routes for m in r.methods})


def _path(template: str, name: str, release_id: int, fmt: str) -> str:
    return (template.replace("{name}", name).replace("{release_id}", str(release_id))
            .replace("{fmt}", fmt))


@pytest.fixture(scope="module")
def route_clients(tmp_path_factory):
    url = f"sqlite:///{tmp_path_factory.mktemp('routes') / 'ledger.sqlite'}"
    led = open_ledger(url)
    led.add_dataset("census", unit="one person", user="admin")
    add_user(led, "admin", role="admin", password=PASSWORD, actor="admin")
    led.close()
    app = create_app(ledger_url=url)
    anonymous = TestClient(app, follow_redirects=False, raise_server_exceptions=False)
    admin = TestClient(app, follow_redirects=False, raise_server_exceptions=False)
    with anonymous, admin:
        yield anonymous, admin, _login(admin)


def _login(c) -> str:
    """Log ``c`` in as admin (again: the every-route test posts to /ledger/logout); the CSRF token."""
    r = c.post("/api/ledger/login", json={"username": "admin", "password": PASSWORD})
    assert r.status_code == 200, r.text
    return r.json()["csrf_token"]


def _bad_request(c, method: str, path: str, csrf: str | None):
    """A request with a bogus body (or none): it must be refused or answered, never a 5xx."""
    if method == "GET":
        return c.get(path)
    if path.startswith("/api/"):
        return c.post(path, json={"bogus": 1}, headers={"X-CSRF-Token": csrf} if csrf else {})
    return c.post(path, data={"bogus": "1", **({"csrf_token": csrf} if csrf else {})})


def test_every_route_is_listed():
    paths = {p for _, p in ROUTES}
    for p in ("/api/sweep", "/api/sweep/design", "/sweep", "/api/audit", "/api/audit/upload",
              "/api/audit/simulate", "/audit", "/api/calibrate/dpsgd", "/calibrate", "/ledger",
              "/api/ledger/datasets", "/api/ledger/datasets/{name}/check", "/ledger/d/{name}/export.{fmt}",
              "/ledger/r/{release_id}/report.{fmt}", "/api/ledger/datasets/{name}/timeline"):
        assert p in paths


def test_security_headers_on_every_route(route_clients):
    anonymous, admin, csrf = route_clients
    statuses: set[int] = set()
    failures = []
    for method, template in sorted(ROUTES, key=lambda route: route[1] == "/ledger/logout"):  # log out last
        for c, token, name, rid, fmt in ((anonymous, None, "census", 1, "csv"), (admin, csrf, "census", 1, "pdf"),
                                         (admin, csrf, "no-such-dataset", 999, "json")):
            path = _path(template, name, rid, fmt)
            r = _bad_request(c, method, path, token)
            statuses.add(r.status_code)
            if r.status_code >= 500:
                failures.append((method, path, r.status_code, r.text[:200]))
                continue
            _assert_headers(r)
    assert not failures, failures
    r404 = admin.get("/no-such-page")
    assert r404.status_code == 404
    _assert_headers(r404)
    assert {200, 303, 401, 404, 422} <= statuses | {r404.status_code}, statuses


def test_page_forms_with_bad_values_are_answered_with_headers(route_clients):
    """The new pages' forms with hostile values: an error on the page (4xx/200), never a 5xx."""
    anonymous, _, _ = route_clients
    forms = [
        ("/sweep", {"task": "map", "noise_multiplier": "inf", "sample_rate": "1e400", "steps": "1e400"}),
        ("/sweep", {"task": "design", "mu": "nan", "batch_size": "1e400", "epochs": "-1", "dataset_size": "x"}),
        ("/audit", {"mode": "counts", "true_positives": "1e400", "false_positives": "0", "n_members": "10",
                    "n_nonmembers": "10"}),
        ("/audit", {"mode": "simulate", "ran": '{"kind": "gaussian", "sigma": 0.001}', "trials": "1e308"}),
        ("/audit", {"mode": "simulate", "ran": "[" * 5000, "trials": "10"}),
        ("/calibrate", {"target": "epsilon", "target_value": "1e308", "batch_size": "1e400", "dataset_size": "0"}),
        ("/report", {"kind": "mechanism", "mechanism": "[" * 5000}),  # deeper than the JSON parser can hold
    ]
    for path, data in forms:
        r = anonymous.post(path, data=data)
        assert r.status_code < 500, (path, data, r.text[:300])
        _assert_headers(r)
        assert re.search(r'class="error"', r.text), (path, data)


def test_a_form_starlette_cannot_read_is_a_page_for_browsers(route_clients):
    """Over 1,000 fields (or a broken multipart body): Starlette's 400 reached browsers as a bare
    JSON line; now the site's error page with a way back to the form (JSON callers keep JSON)."""
    anonymous, _, _ = route_clients
    many = ("a=1&" * 1_001).encode()
    form = {"content-type": "application/x-www-form-urlencoded"}
    r = anonymous.post("/risk", content=many, headers={**form, "accept": "text/html"})
    assert r.status_code == 400 and r.headers["content-type"].startswith("text/html"), r.text[:200]
    assert "Too many fields" in r.text and 'href="/risk"' in r.text
    _assert_headers(r)
    r = anonymous.post("/audit", content=b"--x\r\nbroken", headers={"content-type": "multipart/form-data; boundary=x",
                                                                       "accept": "text/html"})
    assert r.status_code in (400, 422) and r.headers["content-type"].startswith("text/html"), r.text[:200]
    r = anonymous.post("/risk", content=many, headers=form)  # no text/html: JSON as before
    assert r.status_code == 400 and r.json()["detail"].startswith("Too many fields")


def test_ledger_refuses_work_beyond_the_server_limits(route_clients):
    """The ledger accounts a proposed mechanism in the server: the server's limits and cost
    budget apply before it does (422 naming what to change), on the API and the page."""
    _, admin, _ = route_clients
    csrf = _login(admin)
    heavy = {"kind": "repeated", "times": 10**7, "inner": {"kind": "laplace", "scale": 1.0}}
    for path, body in (("/api/ledger/datasets/census/check", {"mechanism": heavy}),
                       ("/api/ledger/datasets/census/releases", {"mechanism": heavy, "title": "t"})):
        r = admin.post(path, json=body, headers={"X-CSRF-Token": csrf})
        assert r.status_code == 422 and r.json()["detail"].startswith("steps"), r.text
        _assert_headers(r)
    for text in ("[" * 5000, json.dumps(heavy)):
        r = admin.post("/ledger/d/census/propose", data={"title": "t", "mechanism": text, "csrf_token": csrf})
        assert r.status_code == 422, r.text[:300]
        _assert_headers(r)
    for path in ("/api/ledger/releases/9223372036854775808", "/ledger/r/9223372036854775808",
                 "/api/ledger/releases/0"):  # beyond the database's integers (was a 500), or no row
        r = admin.get(path)
        assert r.status_code == 404, (path, r.status_code, r.text[:200])
        _assert_headers(r)
    ok = admin.post("/api/ledger/datasets/census/check", json={"mechanism": {"kind": "gaussian", "sigma": 3.0}},
                    headers={"X-CSRF-Token": csrf})
    assert ok.status_code == 200, ok.text
