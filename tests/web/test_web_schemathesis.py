"""Property-based API fuzzing with schemathesis against the app WITH its production limits
(the defaults of :class:`Limits`: cost budget, body size, worker pool): no input produces a
server error."""

import os
import shutil
import tempfile

import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from fdpkit.web.common import Limits
from fdpkit.web.main import create_app

APP = create_app(Limits())  # the production limits, not reduced ones
schema = schemathesis.openapi.from_asgi("/openapi.json", APP)


@schema.parametrize()
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_server_errors(case):
    response = case.call()
    assert response.status_code < 500, (case.path, case.body, response.text[:300])


# --------------------------------------------------------------------------------------
# the ledger API, logged in as admin (anonymous calls above only reach the 401s)
# --------------------------------------------------------------------------------------
LEDGER_PASSWORD = "s3cret-Passw0rd!admin"
#: Every API operation the schemathesis runs must reach (the recent sweep, audit, calibrate
#: and ledger endpoints included): a guard against an endpoint left out of the schema.
REQUIRED = {"/api/sweep", "/api/sweep/design", "/api/audit", "/api/audit/upload", "/api/audit/simulate",
            "/api/calibrate/dpsgd", "/api/report", "/api/report/dpsgd", "/api/report/uniform-sampling", "/api/report/points",
            "/api/ledger/datasets", "/api/ledger/datasets/{name}/check", "/api/ledger/datasets/{name}/releases",
            "/api/ledger/datasets/{name}/status", "/api/ledger/datasets/{name}/thresholds",
            "/api/ledger/datasets/{name}/timeline", "/api/ledger/events", "/api/ledger/login",
            "/api/ledger/releases/{release_id}", "/api/ledger/releases/{release_id}/approve",
            "/api/ledger/releases/{release_id}/reject", "/api/ledger/releases/{release_id}/release",
            "/api/ledger/releases/{release_id}/withdraw", "/api/ledger/users", "/api/ledger/verify"}


def test_schema_covers_the_recent_endpoints():
    assert REQUIRED <= set(APP.openapi()["paths"])


def _ledger_app():
    """The app (production limits) on a fresh SQLite ledger in a temporary directory, with a
    dataset, an admin and a proposed release; the directory goes when the module is done."""
    from fdpkit.ledger import open_ledger
    from fdpkit.ledger.users import add_user

    folder = tempfile.mkdtemp(prefix="fdpkit-fuzz-ledger-")
    url = f"sqlite:///{os.path.join(folder, 'ledger.sqlite')}"
    led = open_ledger(url)
    led.add_dataset("census", unit="one person", user="admin")
    add_user(led, "admin", role="admin", password=LEDGER_PASSWORD, actor="admin")
    led.propose("census", {"kind": "gaussian", "sigma": 3.0}, title="seed", user="admin")
    led.close()
    return create_app(Limits(), ledger_url=url), folder


LEDGER_APP, LEDGER_DIR = _ledger_app()
ledger_schema = schemathesis.openapi.from_asgi("/openapi.json", LEDGER_APP).include(path_regex="^/api/ledger/")


@pytest.fixture(scope="module")
def ledger_session():
    from fastapi.testclient import TestClient

    try:
        with TestClient(LEDGER_APP) as c:
            r = c.post("/api/ledger/login", json={"username": "admin", "password": LEDGER_PASSWORD})
            assert r.status_code == 200, r.text
            yield {"fdpkit_session": r.cookies["fdpkit_session"]}, r.json()["csrf_token"]
    finally:
        shutil.rmtree(LEDGER_DIR, ignore_errors=True)


@ledger_schema.parametrize()
@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
def test_ledger_api_logged_in_no_server_errors(case, ledger_session):
    cookies, csrf = ledger_session
    response = case.call(headers={"X-CSRF-Token": csrf}, cookies=cookies)
    assert response.status_code < 500, (case.path, case.body, response.text[:300])
