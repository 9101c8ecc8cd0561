"""Ledger web pages and JSON API: every route x role (anonymous refused, wrong roles
refused, right roles allowed), CSRF on every POST, passwords never stored or shown in
clear, and a full propose -> approve -> release round through the pages."""

import json
import re

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, text

from fdpkit.ledger import open_ledger
from fdpkit.ledger.users import add_user
from fdpkit.web.main import create_app

ROLES = ("viewer", "analyst", "approver", "admin")
PASSWORD = "s3cret-Passw0rd!"


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    url = f"sqlite:///{tmp_path_factory.mktemp('web') / 'ledger.sqlite'}"
    led = open_ledger(url)
    led.add_dataset("census", unit="one person", user="admin")
    for role in ROLES:
        add_user(led, role, role=role, password=PASSWORD + role, actor="admin")
    r = led.propose("census", {"kind": "gaussian", "sigma": 3.0}, title="seed", user="analyst")
    led.approve(r.id, user="approver", report=False)
    led.release(r.id, user="approver")
    led.close()
    return url


_APPS = {}


def _client(url):
    if url not in _APPS:
        _APPS[url] = create_app(ledger_url=url)
    return TestClient(_APPS[url], follow_redirects=False)


@pytest.fixture(scope="module")
def logged_in(setup):
    """One logged-in client per (role, page or API), with its CSRF token."""
    out = {}
    for who in ROLES:
        for api in (False, True):
            c = _client(setup)
            out[who, api] = (c, _login_api(c, who) if api else _login_page(c, who))
    return out


def _login_page(c, role):
    page = c.get("/ledger/login")
    token = re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1)
    r = c.post("/ledger/login", data={"username": role, "password": PASSWORD + role, "csrf_token": token,
                                      "next": "/ledger"})
    assert r.status_code == 303, r.text
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', c.get("/ledger").text).group(1)
    return csrf


def _login_api(c, role):
    r = c.post("/api/ledger/login", json={"username": role, "password": PASSWORD + role})
    assert r.status_code == 200, r.text
    return r.json()["csrf_token"]


# (method, path, minimum role, body): pages use form bodies, the API JSON bodies
PAGES = [
    ("GET", "/ledger", "viewer", None),
    ("GET", "/ledger/d/census", "viewer", None),
    ("GET", "/ledger/r/1", "viewer", None),
    ("GET", "/ledger/d/census/export.csv", "viewer", None),
    ("GET", "/ledger/r/1/report.pdf", "viewer", None),
    ("GET", "/ledger/r/1/record", "viewer", None),
    ("GET", "/ledger/r/1/release", "approver", None),
    ("GET", "/ledger/propose", "analyst", None),
    ("POST", "/ledger/propose", "analyst", {"dataset": "census", "title": "t", "mechanism": '{"kind": "gaussian", "sigma": 9}'}),
    ("GET", "/ledger/history", "viewer", None),
    ("GET", "/ledger/queue", "approver", None),
    ("GET", "/ledger/users", "admin", None),
    ("POST", "/ledger/d/census/propose", "analyst", {"title": "t", "mechanism": '{"kind": "gaussian", "sigma": 9}'}),
    ("POST", "/ledger/r/999/approve", "approver", {}),
    ("POST", "/ledger/r/999/reject", "approver", {}),
    ("POST", "/ledger/r/999/release", "approver", {}),
    ("POST", "/ledger/r/999/withdraw", "analyst", {}),
    ("POST", "/ledger/d/census/thresholds", "admin", {"metric": "mu", "level": "notice", "value": "5"}),
    ("POST", "/ledger/datasets", "admin", {"name": "", "unit": "x"}),
    ("POST", "/ledger/users", "admin", {"name": "", "role": "viewer", "password": "x"}),
    ("POST", "/ledger/users/999", "admin", {"action": "activate"}),
    ("POST", "/ledger/lifts/999/approve", "approver", {}),
    ("POST", "/ledger/lifts/999/reject", "approver", {}),
]
API = [
    ("GET", "/api/ledger/datasets", "viewer", None),
    ("GET", "/api/ledger/datasets/census/status", "viewer", None),
    ("GET", "/api/ledger/datasets/census/timeline", "viewer", None),
    ("POST", "/api/ledger/datasets/census/check", "viewer", {"mechanism": {"kind": "gaussian", "sigma": 9}}),
    ("GET", "/api/ledger/releases/1", "viewer", None),
    ("GET", "/api/ledger/events", "viewer", None),
    ("GET", "/api/ledger/verify", "viewer", None),
    ("POST", "/api/ledger/datasets/census/releases", "analyst",
     {"mechanism": {"kind": "gaussian", "sigma": 9}, "title": "api"}),
    ("POST", "/api/ledger/releases/999/withdraw", "analyst", {}),
    ("POST", "/api/ledger/releases/999/approve", "approver", {}),
    ("POST", "/api/ledger/releases/999/reject", "approver", {}),
    ("POST", "/api/ledger/releases/999/preview", "viewer", {}),
    ("POST", "/api/ledger/releases/999/release", "approver", {"confirm": True}),
    ("POST", "/api/ledger/datasets/census/thresholds", "admin", {"metric": "mu", "level": "notice", "value": 5}),
    ("POST", "/api/ledger/datasets", "admin", {"name": "census", "unit": "x"}),
    ("GET", "/api/ledger/users", "admin", None),
    ("POST", "/api/ledger/users", "admin", {"name": "admin", "role": "viewer", "password": "longenough"}),
    ("GET", "/api/ledger/head", "viewer", None),
    ("POST", "/api/ledger/datasets/census/four-eyes", "admin", {"enabled": True}),
    ("POST", "/api/ledger/users/nobody", "admin", {"active": True}),
    ("POST", "/api/ledger/datasets/census/lift-requests", "admin",
     {"metric": "mu", "level": "hard", "value": 5, "reason": "r"}),
    ("GET", "/api/ledger/lift-requests", "viewer", None),
    ("GET", "/api/ledger/lift-requests/999", "viewer", None),
    ("POST", "/api/ledger/lift-requests/999/approve", "approver", {}),
    ("POST", "/api/ledger/lift-requests/999/reject", "approver", {}),
]


def _call(c, method, path, body, api, csrf=None):
    if method == "GET":
        return c.get(path)
    if api:
        return c.post(path, json=body, headers={"X-CSRF-Token": csrf} if csrf else {})
    data = dict(body)
    if csrf:
        data["csrf_token"] = csrf
    return c.post(path, data=data)


def test_route_tables_cover_every_ledger_route(setup):
    app = create_app(ledger_url=setup)
    routes = {(m, r.path) for r in app.routes for m in getattr(r, "methods", ())
              if r.path.startswith(("/ledger", "/api/ledger")) and "login" not in r.path and "logout" not in r.path
              and r.path != "/ledger/setup"  # the first-run setup: anonymous by design (test_ledger_setup.py)
              and m != "HEAD"}
    listed = {(m, re.sub(r"/(census|999|1)(?=/|$)", "/{x}", p)) for m, p, _, _ in PAGES + API}
    norm = {(m, re.sub(r"\{[a-z_]+\}", "{x}", p)) for m, p in routes}
    norm = {(m, p.replace("report.{x}", "report.pdf").replace("export.{x}", "export.csv")) for m, p in norm}
    assert norm <= listed, norm - listed


@pytest.mark.parametrize("method,path,role,body", PAGES + API, ids=[f"{m} {p}" for m, p, _, _ in PAGES + API])
def test_anonymous_is_refused(setup, method, path, role, body):
    c = _client(setup)
    api = path.startswith("/api/")
    r = _call(c, method, path, body, api)
    if api:
        assert r.status_code == 401
    else:
        assert r.status_code == 303 and r.headers["location"].startswith("/ledger/login")


@pytest.mark.parametrize("method,path,role,body", PAGES + API, ids=[f"{m} {p}" for m, p, _, _ in PAGES + API])
def test_roles(logged_in, method, path, role, body):
    api = path.startswith("/api/")
    rank = ROLES.index(role)
    for who in ROLES:
        c, csrf = logged_in[who, api]
        r = _call(c, method, path, body, api, csrf)
        if ROLES.index(who) < rank:
            assert r.status_code == 403, (who, r.status_code, r.text[:200])
        else:
            assert r.status_code not in (401, 403, 500), (who, r.status_code, r.text[:300])
        if method == "POST":  # the same request without its CSRF token is refused
            r = _call(c, method, path, body, api, None)
            assert r.status_code == 403
            r = _call(c, method, path, body, api, "wrong-token")
            assert r.status_code == 403


def test_login_form_needs_its_csrf_cookie(setup):
    c = _client(setup)
    r = c.post("/ledger/login", data={"username": "admin", "password": PASSWORD + "admin", "csrf_token": "forged"})
    assert r.status_code == 403 and "fdpkit_session" not in r.cookies
    r = c.post("/api/ledger/login", json={"username": "admin", "password": "wrong"})
    assert r.status_code == 401


def test_login_redirect_stays_local(setup):
    c = _client(setup)
    page = c.get("/ledger/login?next=https://evil.example/")
    assert 'value="/ledger"' in page.text and "evil" not in page.text


def test_calculator_stays_public(setup):
    c = _client(setup)
    assert c.get("/calculator").status_code == 200


@pytest.mark.production_hash
def test_passwords_never_in_clear(setup, caplog):
    c = _client(setup)
    csrf = _login_api(c, "admin")
    secret = "Very-Secret-Pass-123"
    with caplog.at_level("DEBUG"):
        r = c.post("/api/ledger/users", json={"name": "newbie", "role": "viewer", "password": secret},
                   headers={"X-CSRF-Token": csrf})
    assert r.status_code == 200 and secret not in r.text
    assert secret not in caplog.text
    eng = create_engine(setup)
    with eng.connect() as conn:
        for table in ("users", "events", "web_sessions"):
            rows = conn.execute(text(f"SELECT * FROM {table}")).all()
            assert secret not in repr(rows)
        h = conn.execute(text("SELECT password_hash FROM users WHERE name = 'newbie'")).scalar()
    eng.dispose()
    assert h.startswith("$argon2id$v=19$m=65536,t=3,p=4$")  # the production parameters
    assert "password" not in json.dumps(c.get("/api/ledger/users").json())
    # the new account works
    c2 = _client(setup)
    assert c2.post("/api/ledger/login", json={"username": "newbie", "password": secret}).status_code == 200


def test_round_trip_through_the_pages(setup):
    analyst = _client(setup)
    csrf = _login_page(analyst, "analyst")
    r = analyst.post("/ledger/d/census/propose", data={"csrf_token": csrf, "title": "big table",
                                                       "mechanism": '{"kind": "gaussian", "sigma": 0.9}'})
    assert r.status_code == 303
    rid = int(r.headers["location"].rsplit("/", 1)[1])
    bad = analyst.post("/ledger/d/census/propose", data={"csrf_token": csrf, "title": "x", "mechanism": "{nope"})
    assert bad.status_code == 422 and "not valid JSON" in bad.text
    approver = _client(setup)
    csrf = _login_page(approver, "approver")
    q = approver.get("/ledger/queue")
    assert f"queue-{rid}" in q.text and "would exceed" in q.text
    assert approver.post(f"/ledger/r/{rid}/approve", data={"csrf_token": csrf}).status_code == 303
    confirm = approver.post(f"/ledger/r/{rid}/release", data={"csrf_token": csrf})  # asks first (issue 25)
    assert confirm.status_code == 200 and 'id="confirm-form"' in confirm.text
    assert approver.post(f"/ledger/r/{rid}/release", data={"csrf_token": csrf, "confirm": "yes"}).status_code == 303
    page = approver.get("/ledger/d/census").text
    assert 'id="alerts"' in page and "warning threshold exceeded" in page and "<svg" in page
    again = approver.post(f"/ledger/r/{rid}/approve", data={"csrf_token": csrf})
    assert again.status_code == 422 and "only a proposed" in again.text
    pdf = approver.get("/ledger/d/census/export.pdf")
    assert pdf.status_code == 200 and pdf.content.startswith(b"%PDF")
    assert approver.get(f"/ledger/r/{rid}/report.pdf").content.startswith(b"%PDF")
    api = _client(setup)
    _login_api(api, "viewer")
    st = api.get("/api/ledger/datasets/census/status").json()
    assert st["released_count"] >= 2 and st["exceeded"]
    assert api.get("/api/ledger/verify").json()["ok"] is True


def test_one_admin_cannot_lift_the_hard_limit(logged_in):
    # the admin threshold form and API raised a hard limit in one step (one person); lifting it now
    # needs a second person (the CLI's --approver), so both answer 422 and write nothing, while
    # lowering it stays a one-admin edit
    for api in (False, True):
        c, csrf = logged_in["admin", api]
        path = "/api/ledger/datasets/census/thresholds" if api else "/ledger/d/census/thresholds"
        value = 50 if api else "50"
        r = _call(c, "POST", path, {"metric": "epsilon", "level": "hard", "value": value}, api, csrf)
        assert r.status_code == 422 and "four-eyes: lifting the hard limit" in r.text, r.text[:300]
    c, csrf = logged_in["admin", True]
    st = c.get("/api/ledger/datasets/census/status").json()
    hard = [t for t in st["thresholds"] if t["level"] == "hard" and t["metric"] == "epsilon"]
    assert hard and hard[0]["value"] < 50


def _hard_epsilon(c, name):
    st = c.get(f"/api/ledger/datasets/{name}/status").json()
    return [t["value"] for t in st["thresholds"] if t["level"] == "hard" and t["metric"] == "epsilon"]


def test_lifting_the_hard_limit_through_a_second_person(setup, logged_in):
    # a web-only deployment could not lift a hard limit at all (every one-person lift: 422); now an
    # admin requests it and another approver approves it, on the pages and through the API
    led = open_ledger(setup)
    led.add_dataset("lifted", unit="one person", user="admin")
    led.close()
    admin, acsrf = logged_in["admin", False]
    r = admin.post("/ledger/d/lifted/thresholds", data={"csrf_token": acsrf, "metric": "epsilon", "level": "hard",
                                                        "value": "20"})
    assert r.status_code == 422 and "needs a second person" in r.text and "give a reason" in r.text
    assert 'id="value" name="value" value="20"' in r.text  # the fields are kept
    r = admin.post("/ledger/d/lifted/thresholds", data={"csrf_token": acsrf, "metric": "epsilon", "level": "hard",
                                                        "value": "20", "reason": "renewed budget"})
    assert r.status_code == 303 and r.headers["location"] == "/ledger/d/lifted#lifts"
    api, _ = logged_in["viewer", True]
    assert _hard_epsilon(api, "lifted") == [8.0]  # a request changes no limit
    (lift,) = api.get("/api/ledger/lift-requests?dataset=lifted").json()
    lid = lift["id"]
    assert (lift["requested_by"], lift["state"], lift["change"]) == ("admin", "pending", "ε 20 at δ = 1e-05 (hard)")
    page = admin.get("/ledger/d/lifted").text
    assert f'id="lift-{lid}"' in page and f'id="lift-{lid}-waits"' in page and f"approve-lift-{lid}" not in page
    # the requester cannot approve it (page and API), an analyst may not at all
    r = admin.post(f"/ledger/lifts/{lid}/approve", data={"csrf_token": acsrf})
    assert r.status_code == 422 and "cannot approve it" in r.text
    c, csrf = logged_in["admin", True]
    r = c.post(f"/api/ledger/lift-requests/{lid}/approve", json={}, headers={"X-CSRF-Token": csrf})
    assert r.status_code == 422 and "cannot approve it" in r.json()["detail"]
    c, csrf = logged_in["analyst", False]
    assert c.post(f"/ledger/lifts/{lid}/approve", data={"csrf_token": csrf}).status_code == 403
    assert _hard_epsilon(api, "lifted") == [8.0]
    # another approver sees it in the queue and on the dataset page, and approves it
    approver, pcsrf = logged_in["approver", False]
    q = approver.get("/ledger/queue").text
    assert f'id="lift-{lid}"' in q and f"approve-lift-{lid}" in q and "renewed budget" in q
    assert f"approve-lift-{lid}" in approver.get("/ledger/d/lifted").text
    r = approver.post(f"/ledger/lifts/{lid}/approve", data={"csrf_token": pcsrf, "next": "/ledger/queue",
                                                            "comment": "ok"})
    assert r.status_code == 303 and r.headers["location"] == "/ledger/queue#lifts"
    assert _hard_epsilon(api, "lifted") == [20.0]
    ev = api.get("/api/ledger/events?limit=1").json()[-1]
    assert ev["kind"] == "threshold.set" and ev["actor"] == "approver"
    assert (ev["data"]["requested_by"], ev["data"]["approver"]) == ("admin", "approver")
    # the API: request a removal, reject it (a reason is needed); a stale request is refused
    c, csrf = logged_in["admin", True]
    h = {"X-CSRF-Token": csrf}
    r = c.post("/api/ledger/datasets/lifted/lift-requests", json={"metric": "epsilon", "remove": True, "reason": "x"},
               headers=h)
    assert r.status_code == 200 and r.json()["action"] == "remove", r.text
    rid = r.json()["id"]
    p, pc = logged_in["approver", True]
    ph = {"X-CSRF-Token": pc}
    assert p.post(f"/api/ledger/lift-requests/{rid}/reject", json={}, headers=ph).status_code == 422
    r = p.post(f"/api/ledger/lift-requests/{rid}/reject", json={"comment": "keep it"}, headers=ph)
    assert r.status_code == 200 and r.json()["state"] == "rejected"
    r = c.post("/api/ledger/datasets/lifted/lift-requests", json={"metric": "epsilon", "value": 30, "reason": "x"},
               headers=h)
    sid = r.json()["id"]
    r = c.post("/api/ledger/datasets/lifted/thresholds", json={"metric": "epsilon", "level": "hard", "value": 15},
               headers=h)  # lowering: at once, and it supersedes the request
    assert r.status_code == 200
    r = p.post(f"/api/ledger/lift-requests/{sid}/approve", json={}, headers=ph)
    assert r.status_code == 422 and "superseded" in r.json()["detail"]
    assert _hard_epsilon(api, "lifted") == [15.0]
    states = [x["state"] for x in api.get("/api/ledger/lift-requests?dataset=lifted&state=all").json()]
    assert states == ["approved", "rejected", "superseded"]
    assert api.get("/api/ledger/lift-requests/999").status_code == 404
    # the one-person API lift names the way to a second person
    r = c.post("/api/ledger/datasets/lifted/thresholds", json={"metric": "epsilon", "level": "hard", "value": 50},
               headers=h)
    assert r.status_code == 422 and "/api/ledger/datasets/lifted/lift-requests" in r.json()["detail"]
    assert api.get("/api/ledger/verify").json()["ok"] is True


def test_dataset_page_total_in_plain_words(logged_in):
    # it said "1 released release composes to ..."
    c, _ = logged_in["viewer", False]
    page = c.get("/ledger/d/census").text
    assert "Released so far: " in page and "released release" not in page
    # the method row was empty: the page's reading of the total had no method_label
    assert "<tr><th>method</th><td>GDP (exact)</td></tr>" in page


def test_logged_alerts_say_when_they_were_true(tmp_path):
    # session 13: the dataset page listed "notice threshold exceeded: ε 5.844 > 2" (now) beside
    # "alert: notice threshold exceeded: ε 5.106 > 2" (logged when release 1 crossed it) with
    # nothing to say which total is the current one; the ledger export's warnings too
    from fdpkit.ledger.timeline import ledger_document

    url = f"sqlite:///{tmp_path / 'alerts.sqlite'}"
    led = open_ledger(url)
    led.add_dataset("survey", unit="one person", user="admin")
    add_user(led, "viewer", role="viewer", password=PASSWORD + "viewer", actor="admin")
    for sigma in (0.2, 0.5):  # ε 23.9 (crosses every default threshold), then the total grows
        r = led.propose("survey", {"kind": "gaussian", "sigma": sigma}, title=f"σ {sigma}", user="analyst")
        led.approve(r.id, user="approver", report=False)
        led.release(r.id, user="approver", override_reason="test")
    now = led.status("survey").released.epsilon
    (notice,) = [e for e in led.status("survey").alerts if '"notice"' in e.payload]
    then = json.loads(notice.payload)["data"]["current"]
    assert then < now
    warnings = next(s for s in ledger_document(led, "survey").sections if s.title == "Warnings").paragraphs
    led.close()
    logged = [w for w in warnings if w.startswith("alert ")]
    assert logged and all(w.startswith("alert logged when release 1 was released, ") for w in logged)
    c = _client(url)
    _login_page(c, "viewer")
    page = c.get("/ledger/d/survey").text
    items = re.findall(r"<li[^>]*>(.*?)</li>", page.split('id="alerts"')[1].split("</ul>")[0], re.S)
    old = [i for i in items if "alert" in i]
    assert old and all("logged when release 1 was released, " in i and " UTC: " in i for i in old)
