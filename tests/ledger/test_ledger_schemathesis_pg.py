"""Schemathesis over ``/api/ledger/*`` on a real PostgreSQL 15 (issue 24: 243 server errors
in 6,775 requests before; now none): logged in as admin, with the production limits, on a
ledger with a dataset, a proposed and a released release. No input may produce a 5xx."""

import collections
import os

import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from fdpkit.web.common import Limits

PASSWORD = "s3cret-Passw0rd!admin"
#: Examples per operation (``FDPKIT_FUZZ_EXAMPLES`` for a longer run: the closing note's
#: figure came from 300).
EXAMPLES = int(os.environ.get("FDPKIT_FUZZ_EXAMPLES", "10"))
#: status code -> responses, printed at the end of the module (``-s``)
SEEN: collections.Counter = collections.Counter()


from fdpkit.web.main import create_app  # noqa: E402

#: The app whose schema is fuzzed; its ledger URL is set by :func:`pg_app` before any
#: request (the app opens its ledger on first use).
APP = create_app(Limits(), ledger_url="sqlite://")
schema = schemathesis.openapi.from_asgi("/openapi.json", APP).include(path_regex="^/api/ledger/")


@pytest.fixture(scope="module")
def pg_app(pg_server):
    from fdpkit.ledger import open_ledger
    from fdpkit.ledger.users import add_user

    import uuid

    import psycopg

    name = "fuzz_" + uuid.uuid4().hex[:12]
    with psycopg.connect(host=pg_server, user="postgres", dbname="postgres", autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    url = f"postgresql+psycopg://postgres@/{name}?host={pg_server}"
    led = open_ledger(url)
    led.add_dataset("census", unit="one person", user="admin")
    add_user(led, "admin", role="admin", password=PASSWORD, actor="admin")
    add_user(led, "spare", role="admin", password=PASSWORD, actor="admin")  # fuzzing may re-role one admin
    led.record("census", {"kind": "gaussian", "sigma": 3.0}, title="seed", user="ana", approver="bob", report=False)
    led.propose("census", {"kind": "gaussian", "sigma": 3.0}, title="seed", user="ana")
    led.close()
    APP.state.ledger_url = url
    assert getattr(APP.state, "ledger", None) is None
    yield APP
    print(f"\nschemathesis on PostgreSQL: {sum(SEEN.values())} responses, by status {dict(sorted(SEEN.items()))}")
    if getattr(APP.state, "ledger", None) is not None:
        APP.state.ledger.close()


@pytest.fixture(scope="module")
def pg_session(pg_app):
    from fastapi.testclient import TestClient

    with TestClient(pg_app) as c:
        r = c.post("/api/ledger/login", json={"username": "admin", "password": PASSWORD})
        assert r.status_code == 200, r.text
        yield {"fdpkit_session": r.cookies["fdpkit_session"]}, r.json()["csrf_token"]


@schema.parametrize()
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
def test_ledger_api_on_postgresql_no_server_errors(case, pg_session):
    cookies, csrf = pg_session
    if case.path == "/api/ledger/users/{name}" and (case.path_parameters or {}).get("name") == "admin":
        return  # never lock the fuzzing session out of its own account
    # a generous read timeout: on a shared, loaded machine a worker process can take seconds
    response = case.call(headers={"X-CSRF-Token": csrf}, cookies=cookies, timeout=120)
    SEEN[response.status_code] += 1
    assert response.status_code < 500, (case.method, case.path, case.body, response.text[:300])


@pytest.mark.parametrize("path", ["/api/ledger/releases/2147483648", "/api/ledger/releases/9223372036854775808",
                                  "/api/ledger/datasets/a%00b/status"])
def test_known_postgresql_500s_are_gone(pg_app, pg_session, path):
    from fastapi.testclient import TestClient

    cookies, _ = pg_session
    c = TestClient(pg_app, cookies=cookies)
    assert c.get(path).status_code == 404
