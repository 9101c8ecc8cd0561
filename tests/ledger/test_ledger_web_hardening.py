"""Issue 24's web reproducers as regression tests on SQLite AND PostgreSQL: out-of-range
ids, NUL and over-long text in the API and the forms, proposals that would break the
accounting, dataset names a URL cannot address, login rate limits and backoff (429 with
Retry-After), logins that do not wait on the ledger's write lock, /ledger/history without a
verify per view, deactivated users' sessions, four-eyes and the chain head in the API."""

import re
import threading
import time

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text

from fdpkit.ledger import open_ledger
from fdpkit.ledger.db import write_session
from fdpkit.ledger.users import add_user
from fdpkit.web.main import create_app

PW = "s3cret-Passw0rd!"
ROLES = ("viewer", "analyst", "approver", "admin")


# argon2id at its smallest cost: tests/conftest.py (_cheap_password_hashes) does it for every
# test; these tests are about the routes, not the hash (the login flood measurement in the
# closing note uses the real parameters).


@pytest.fixture
def site(ledger_url):
    led = open_ledger(ledger_url)
    led.add_dataset("census", unit="one person", user="admin")
    for role in ROLES:
        add_user(led, role, role=role, password=PW + role, actor="admin")
    led.close()
    app = create_app(ledger_url=ledger_url)
    yield app, ledger_url
    if getattr(app.state, "ledger", None) is not None:
        app.state.ledger.close()


def api(app, role):
    c = TestClient(app, follow_redirects=False)
    r = c.post("/api/ledger/login", json={"username": role, "password": PW + role})
    assert r.status_code == 200, r.text
    c.headers["X-CSRF-Token"] = r.json()["csrf_token"]
    return c


def page(app, role):
    c = TestClient(app, follow_redirects=False)
    token = re.search(r'name="csrf_token" value="([^"]+)"', c.get("/ledger/login").text).group(1)
    r = c.post("/ledger/login", data={"username": role, "password": PW + role, "csrf_token": token})
    assert r.status_code == 303, r.text
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', c.get("/ledger").text).group(1)
    return c, csrf


def test_out_of_range_release_ids_are_404(site):
    app, _ = site
    c = api(app, "admin")
    p, csrf = page(app, "admin")
    for rid in (2**31, 2**31 + 7, 2**63, 10**30):
        assert c.get(f"/api/ledger/releases/{rid}").status_code in (404, 422)
        for verb in ("approve", "reject", "withdraw", "release"):
            assert c.post(f"/api/ledger/releases/{rid}/{verb}", json={"comment": "x"} if verb != "release" else {}
                          ).status_code in (404, 422)
        assert p.get(f"/ledger/r/{rid}").status_code in (404, 422)


def test_nul_and_long_text_refused_in_api_and_forms(site):
    app, _ = site
    c = api(app, "admin")
    g = {"kind": "gaussian", "sigma": 9}
    assert c.post("/api/ledger/datasets", json={"name": "x\x00y", "unit": "u"}).status_code == 422
    assert c.post("/api/ledger/datasets", json={"name": "xy", "unit": "u\x00"}).status_code == 422
    assert c.post("/api/ledger/datasets/census/releases", json={"mechanism": g, "title": "t\x00"}).status_code == 422
    assert c.post("/api/ledger/datasets/census/releases",
                  json={"mechanism": g, "title": "t", "purpose": "p\x00"}).status_code == 422
    assert c.post("/api/ledger/users", json={"name": "n\x00", "role": "viewer", "password": "x" * 9}).status_code == 422
    assert c.get("/api/ledger/datasets/a%00b/status").status_code == 404
    assert c.get("/api/ledger/datasets/a%00b/timeline").status_code == 404
    assert c.post("/api/ledger/login", json={"username": "a\x00", "password": "x"}).status_code == 401
    p, csrf = page(app, "admin")
    long = "n" * 5000
    assert p.post("/ledger/datasets", data={"name": long, "unit": "u", "csrf_token": csrf}).status_code == 422
    assert p.post("/ledger/datasets", data={"name": "ok", "unit": long, "csrf_token": csrf}).status_code == 422
    assert p.post("/ledger/datasets", data={"name": "ok\x00", "unit": "u", "csrf_token": csrf}).status_code == 422
    assert p.post("/ledger/d/census/propose", data={"title": long, "mechanism": '{"kind": "gaussian", "sigma": 9}',
                                                    "csrf_token": csrf}).status_code == 422
    assert p.post("/ledger/d/census/propose", data={"title": "t\x00", "mechanism": '{"kind": "gaussian", "sigma": 9}',
                                                    "csrf_token": csrf}).status_code == 422
    assert p.post("/ledger/users", data={"name": long, "role": "viewer", "password": "x" * 9,
                                         "csrf_token": csrf}).status_code == 422
    assert p.get("/ledger/d/a%00b").status_code == 404
    # nothing was written, and the ledger still verifies
    assert c.get("/api/ledger/verify").json()["ok"]


@pytest.mark.parametrize("mechanism", [{"kind": "approx_dp", "epsilon": 0, "delta": 1},
                                       {"kind": "uniform-sampling", "mu": 1.7976931348623157e308, "n": 1}])
def test_proposals_that_break_accounting_never_enter_the_queue(site, mechanism):
    app, _ = site
    c = api(app, "analyst")
    r = c.post("/api/ledger/datasets/census/releases", json={"mechanism": mechanism, "title": "jam"})
    assert r.status_code == 422, r.text
    p, _ = page(app, "approver")
    assert p.get("/ledger/queue").status_code == 200
    assert api(app, "viewer").get("/api/ledger/datasets/census/status").status_code == 200


def test_dataset_names_a_url_cannot_address_are_refused(site):
    app, _ = site
    c = api(app, "admin")
    for name in ["a/b", ".", "..", "a b", "x%2Fy", "-lead", "é"]:
        assert c.post("/api/ledger/datasets", json={"name": name, "unit": "u"}).status_code == 422, name
    assert c.post("/api/ledger/datasets", json={"name": "survey-2024.v1_b", "unit": "u"}).status_code == 200
    assert c.get("/api/ledger/datasets/survey-2024.v1_b/status").status_code == 200


def test_login_backoff_and_rate_limit(site):
    app, _ = site
    c = TestClient(app)
    codes = [c.post("/api/ledger/login", json={"username": "viewer", "password": "wrong"}).status_code
             for _ in range(8)]
    assert codes[:5] == [401] * 5 and 429 in codes[5:], codes
    r = c.post("/api/ledger/login", json={"username": "viewer", "password": PW + "viewer"})
    assert r.status_code == 429 and int(r.headers["Retry-After"]) >= 1  # the right password waits too
    assert api(app, "analyst")  # other accounts are not locked out
    from fdpkit.web.login_guard import CLIENT_ATTEMPTS

    codes = [c.post("/api/ledger/login", json={"username": f"u{i}", "password": "wrong"}).status_code
             for i in range(CLIENT_ATTEMPTS + 2)]
    assert codes[-1] == 429


def test_login_does_not_wait_on_the_write_lock(site):
    """A long ledger write (holding SQLite's write lock or PostgreSQL's chain head) must not
    hold logins: they are served, or refused at once with 503 + Retry-After."""
    app, url = site
    led = open_ledger(url)
    started, done = threading.Event(), threading.Event()

    def hold():
        with write_session(led.engine) as s:
            if led.engine.dialect.name == "postgresql":
                s.execute(text("SELECT seq FROM chain_head WHERE id = 1 FOR UPDATE"))
            else:
                s.execute(text("UPDATE chain_head SET seq = seq WHERE id = 1"))
            started.set()
            done.wait(8)

    t = threading.Thread(target=hold)
    t.start()
    try:
        started.wait(5)
        t0 = time.monotonic()
        r = TestClient(app).post("/api/ledger/login", json={"username": "viewer", "password": PW + "viewer"})
        took = time.monotonic() - t0
    finally:
        done.set()
        t.join()
        led.close()
    assert took < 6, took
    assert r.status_code in (200, 503), r.text
    if r.status_code == 503:
        assert int(r.headers["Retry-After"]) >= 1


def test_history_page_verifies_only_on_request(site, monkeypatch):
    from fdpkit.ledger.operations import Ledger

    app, _ = site
    p, _ = page(app, "viewer")
    calls = []
    real = Ledger.verify
    monkeypatch.setattr(Ledger, "verify", lambda self, anchor=None: calls.append(1) or real(self, anchor))
    r = p.get("/ledger/history")
    assert r.status_code == 200 and "Verify now" in r.text and not calls
    r = p.get("/ledger/history?verify=1")
    assert r.status_code == 200 and "Event chain intact" in r.text and calls


def test_deactivated_user_loses_session_and_api_user_changes(site):
    app, _ = site
    admin, analyst = api(app, "admin"), api(app, "analyst")
    assert analyst.get("/api/ledger/datasets").status_code == 200
    r = admin.post("/api/ledger/users/analyst", json={"active": False, "reason": "left"})
    assert r.status_code == 200 and r.json()["active"] is False
    assert analyst.get("/api/ledger/datasets").status_code == 401
    assert TestClient(app).post("/api/ledger/login", json={"username": "analyst",
                                                            "password": PW + "analyst"}).status_code == 401
    assert admin.post("/api/ledger/users/analyst", json={"active": True, "role": "approver"}).json() == {
        "id": 2, "name": "analyst", "role": "approver", "active": True}
    assert admin.post("/api/ledger/users/analyst", json={"password": "new-password-1"}).status_code == 200
    assert admin.post("/api/ledger/users/admin", json={"active": False}).status_code == 422  # last admin
    assert admin.post("/api/ledger/users/ghost", json={"active": False}).status_code == 404
    assert admin.post("/api/ledger/users/analyst", json={}).status_code == 422
    kinds = [e["kind"] for e in admin.get("/api/ledger/events").json()]
    assert {"user.deactivated", "user.activated", "user.role", "user.password_reset"} <= set(kinds)
    assert admin.get("/api/ledger/verify").json()["ok"]


@pytest.mark.parametrize("limit", ["-5", "0", "10001", "99999999999999999999999", "ten"])
def test_events_limit_out_of_range_is_a_422_naming_it(site, limit):
    """A limit outside 1..10,000 is refused naming it (it was cut to the range silently)."""
    app, _ = site
    viewer = api(app, "viewer")
    r = viewer.get(f"/api/ledger/events?limit={limit}")
    assert r.status_code == 422 and r.json()["errors"][0]["loc"][-1] == "limit"
    assert len(viewer.get("/api/ledger/events?limit=1").json()) == 1


def test_admin_page_changes_users(site):
    app, _ = site
    p, csrf = page(app, "admin")
    assert p.post("/ledger/users/1", data={"action": "deactivate", "csrf_token": csrf}).status_code == 303
    assert "<td>viewer</td><td>viewer</td><td>no</td>" in p.get("/ledger/users").text
    assert p.post("/ledger/users/1", data={"action": "role:king", "csrf_token": csrf}).status_code == 422
    assert p.post("/ledger/users/99", data={"action": "activate", "csrf_token": csrf}).status_code == 404


def test_four_eyes_head_and_anchor_in_the_api(site):
    app, _ = site
    approver, other, admin = api(app, "approver"), api(app, "admin"), api(app, "admin")
    r = approver.post("/api/ledger/datasets/census/releases",
                      json={"mechanism": {"kind": "gaussian", "sigma": 9}, "title": "mine"})
    rid = r.json()["id"]
    r = approver.post(f"/api/ledger/releases/{rid}/approve", json={})
    assert r.status_code == 422 and "four-eyes" in r.json()["detail"]
    assert approver.post(f"/api/ledger/releases/{rid}/reject", json={}).status_code == 422  # no reason
    assert other.post(f"/api/ledger/releases/{rid}/approve", json={}).status_code == 200
    head = approver.get("/api/ledger/head").json()
    assert head["anchor"] == f"{head['seq']}:{head['hash']}"
    v = approver.get("/api/ledger/verify", params={"anchor": head["anchor"]}).json()
    assert v["ok"] and v["anchor"] == head["anchor"] and v["head"] == head["anchor"]
    v = approver.get("/api/ledger/verify", params={"anchor": f"{head['seq'] + 3}:{head['hash']}"}).json()
    assert not v["ok"]
    assert approver.get("/api/ledger/verify", params={"anchor": "junk"}).status_code == 422
    r = admin.post("/api/ledger/datasets/census/four-eyes", json={"enabled": False})
    assert r.status_code == 422  # a reason is needed
    r = admin.post("/api/ledger/datasets/census/four-eyes", json={"enabled": False, "reason": "small team"})
    assert r.json() == {"dataset": "census", "four_eyes": False}
