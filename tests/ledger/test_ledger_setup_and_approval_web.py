"""Issue 25 problems 6-8 and issue 27 item 4 (ledger part), through the web app:

6. the ledger can be started from the browser: with no account the login page says so and
   offers the first-admin setup, guarded by a one-time setup token (never an open "create
   admin" page); a role guide; the CLI hint carries ``--db``; every ledger page names the
   ledger database;
7. plan / report / calibrate -> proposal: ``/api/plan`` returns ``"mechanism"`` (with its
   sensitivity), the result pages carry a "Propose this release" button, the proposal form
   arrives prefilled;
8. the approval record (JSON and PDF) begins with the approval; releasing asks for
   confirmation; the override reason is a visible field with its rule;
27.4: approving answers with the JSON record and renders the PDF in a worker afterwards.
"""

import html
import json
import re

import pytest
from fastapi.testclient import TestClient

from fdpkit.ledger import open_ledger
from fdpkit.ledger.users import add_first_admin, add_user, users
from fdpkit.web.main import create_app

PASSWORD = "s3cret-Passw0rd!"
TOKEN = "one-time-setup-token-for-tests"
PLAN = {"guide": "utility_first", "effect": 0.2, "n": 100, "sd": 0.25, "alpha": 0.01, "data_range": 1,
        "max_relative_loss": 0.01, "prior": 0.01, "fpr": 0.001}


def _csrf(text: str) -> str:
    return re.search(r'name="csrf_token" value="([^"]+)"', text).group(1)


@pytest.fixture
def empty(tmp_path):
    return f"sqlite:///{tmp_path / 'ledger.sqlite'}"


# ------------------------------------------------------------------ problem 6: first run
def test_login_without_accounts_offers_setup_with_db(empty):
    c = TestClient(create_app(ledger_url=empty, setup_token=TOKEN), follow_redirects=False)
    page = c.get("/ledger/login").text
    assert 'id="no-accounts"' in page and 'href="/ledger/setup"' in page
    db = empty.removeprefix("sqlite:///")
    assert f"--db {db}" in page and "--role admin" in page and db in page
    assert 'id="role-guide"' in page and "analyst cannot add datasets" in page.replace("An analyst", "analyst")


def test_setup_without_a_token_is_closed(empty):
    c = TestClient(create_app(ledger_url=empty), follow_redirects=False)  # no token: the CLI way only
    page = c.get("/ledger/setup")
    assert page.status_code == 200 and 'id="setup-off"' in page.text
    r = c.post("/ledger/setup", data={"csrf_token": _csrf(page.text), "setup_token": "", "name": "root",
                                      "password": PASSWORD, "password_repeat": PASSWORD})
    assert r.status_code == 403 and "setup token" in r.text
    with open_ledger(empty) as led:
        assert users(led) == []


def test_first_admin_with_the_token_once(empty):
    app = create_app(ledger_url=empty, setup_token=TOKEN)
    c = TestClient(app, follow_redirects=False)
    page = c.get("/ledger/setup")
    form = {"csrf_token": _csrf(page.text), "name": "root", "password": PASSWORD, "password_repeat": PASSWORD}
    assert c.post("/ledger/setup", data={**form, "setup_token": "guess"}).status_code == 403
    c.cookies.clear()
    r = c.post("/ledger/setup", data={**form, "setup_token": TOKEN})  # no CSRF cookie: refused
    assert r.status_code == 403 and "expired" in r.text
    page = c.get("/ledger/setup")
    form["csrf_token"] = _csrf(page.text)
    bad = c.post("/ledger/setup", data={**form, "setup_token": TOKEN, "password_repeat": "other-password"})
    assert bad.status_code == 422 and "differ" in bad.text and 'value="root"' in bad.text
    form["csrf_token"] = _csrf(bad.text)
    r = c.post("/ledger/setup", data={**form, "setup_token": TOKEN})
    assert r.status_code == 303 and r.headers["location"].startswith("/ledger")
    home = c.get("/ledger?welcome=1").text
    assert "root (admin)" in home and 'id="welcome"' in home and 'id="ledger-db"' in home
    assert app.state.setup_token is None  # used once
    other = TestClient(app, follow_redirects=False)
    assert other.get("/ledger/setup").status_code == 303  # accounts exist: the login page
    assert 'id="no-accounts"' not in other.get("/ledger/login").text
    with open_ledger(empty) as led:
        (u,) = users(led)
        assert (u.name, u.role) == ("root", "admin")
        added = [json.loads(e.payload)["data"] for e in led.history(kind="user.added")]
        assert added == [{"name": "root", "role": "admin", "first_admin": True}]
        assert led.verify().ok


def test_first_admin_only_while_empty(empty):
    with open_ledger(empty) as led:
        add_first_admin(led, "root", password=PASSWORD)
        with pytest.raises(ValueError, match="accounts already"):
            add_first_admin(led, "mallory", password=PASSWORD)
        assert [u.name for u in users(led)] == ["root"]


def test_serve_prints_a_token_only_for_an_empty_ledger(empty, capsys):
    from fdpkit.cli.serve import _first_run_token

    token = _first_run_token(empty, "http://127.0.0.1:8000")
    err = capsys.readouterr().err
    assert token and token in err and "/ledger/setup" in err
    with open_ledger(empty) as led:
        add_first_admin(led, "root", password=PASSWORD)
    assert _first_run_token(empty, "http://127.0.0.1:8000") is None


# ------------------------------------------------------------------ a populated ledger
@pytest.fixture(scope="module")
def populated(tmp_path_factory):
    url = f"sqlite:///{tmp_path_factory.mktemp('i25') / 'ledger.sqlite'}"
    with open_ledger(url) as led:
        led.add_dataset("survey", unit="one person", user="admin")
        for name, role in (("ana", "analyst"), ("bob", "approver"), ("val", "viewer")):
            add_user(led, name, role=role, password=PASSWORD, actor="admin")
    return url, create_app(ledger_url=url)


def _login(app, name):
    c = TestClient(app, follow_redirects=False)
    page = c.get("/ledger/login")
    r = c.post("/ledger/login", data={"username": name, "password": PASSWORD, "csrf_token": _csrf(page.text),
                                      "next": "/ledger"})
    assert r.status_code == 303
    return c, _csrf(c.get("/ledger").text)


def test_every_ledger_page_names_the_database(populated):
    url, app = populated
    c, _ = _login(app, "val")
    for path in ("/ledger", "/ledger/d/survey", "/ledger/history"):
        assert url.removeprefix("sqlite:///") in c.get(path).text, path
    page = c.get("/ledger").text
    assert 'id="why-no-dataset"' in page and 'id="role-guide"' in page


def test_plan_api_returns_the_mechanism(populated):
    _, app = populated
    c = TestClient(app)
    plan = c.post("/api/plan", json=PLAN).json()
    m = plan["mechanism"]
    assert m["kind"] == "gaussian" and m["sensitivity"] == pytest.approx(0.01)
    # the σ the plan prints, rounded down (its power), which is what is added: a little less
    # private than the exact σ, never more
    assert m["sigma"] == pytest.approx(plan["sigma"], rel=1e-3) and m["sigma"] <= plan["sigma"]
    assert f"σ = {m['sigma']!r} " in plan["noise"][0]
    assert m["sensitivity"] / m["sigma"] == pytest.approx(plan["mu_min"], rel=1e-3)
    three = c.post("/api/plan", json={**PLAN, "tests": 3}).json()["mechanism"]
    assert three["kind"] == "repeated" and three["times"] == 3
    first = c.post("/api/plan", json={**PLAN, "guide": "privacy_first", "blatant_disclosure_ok": False,
                                      "high_confidence_ok": True, "max_relative_risk": 3}).json()
    assert first["mechanism"]["sensitivity"] == pytest.approx(0.01)
    assert all(o["mechanism"] for o in first["options"])


def _bridge(text: str) -> dict:
    form = re.search(r'<form method="get" action="/ledger/propose".*?</form>', text, re.S)
    assert form, "no 'Propose this release' button"
    fields = dict(re.findall(r'name="([a-z]+)" value="([^"]*)"', form.group(0)))
    return {k: html.unescape(v) for k, v in fields.items()}


def test_plan_to_proposal_without_retyping(populated):
    url, app = populated
    c, _ = _login(app, "ana")
    page = c.get("/plan", params=PLAN).text
    fields = _bridge(page)
    assert json.loads(fields["mechanism"])["sensitivity"] == pytest.approx(0.01) and fields["from"] == "plan"
    form = c.get("/ledger/propose", params=fields)
    assert form.status_code == 200 and 'id="propose-source"' in form.text and "sensitivity" in form.text
    assert 'id="mechanism-words"' in form.text and "noise standard deviation σ" in form.text
    r = c.post("/ledger/propose", data={"csrf_token": _csrf(form.text), "dataset": "survey", "title": "From the plan",
                                        "mechanism": html.unescape(re.search(r'<textarea id="mechanism"[^>]*>(.*?)</textarea>',
                                                                             form.text, re.S).group(1))})
    assert r.status_code == 303
    rid = int(r.headers["location"].rsplit("/", 1)[1])
    with open_ledger(url) as led:
        rel = led.release_info(rid)
        assert json.loads(rel.spec)["sensitivity"] == pytest.approx(0.01) and rel.analyst == "ana"
    bad = c.post("/ledger/propose", data={"csrf_token": _csrf(form.text), "dataset": "nope", "title": "x",
                                          "mechanism": fields["mechanism"]})
    assert bad.status_code == 422 and 'id="propose-error"' in bad.text and "nope" in bad.text


def test_report_and_calibrate_results_carry_the_button(populated):
    _, app = populated
    c = TestClient(app)
    report = c.get("/report", params={"kind": "mechanism", "mechanism": '{"kind": "gaussian", "sigma": 2, "sensitivity": 0.5}'})
    if "propose-bridge" not in report.text:  # the report form's field names may differ: post the form
        report = c.post("/report", data={"kind": "mechanism", "mechanism": '{"kind": "gaussian", "sigma": 2, "sensitivity": 0.5}'})
    spec = json.loads(_bridge(report.text)["mechanism"])
    assert spec == {"kind": "gaussian", "sigma": 2.0, "sensitivity": 0.5}
    cal = c.get("/calibrate", params={"target": "epsilon", "target_value": 3, "delta": 1e-5, "batch_size": 256,
                                      "dataset_size": 60000, "epochs": 1, "sampling": "poisson",
                                      "relation": "add-remove", "unit": "example", "discretization": 1e-3})
    spec = json.loads(_bridge(cal.text)["mechanism"])
    assert spec["kind"] == "dpsgd" and spec["noise_multiplier"] > 0


def test_approval_record_confirmation_and_override(populated):
    url, app = populated
    ana, csrf_a = _login(app, "ana")
    r = ana.post("/ledger/propose", data={"csrf_token": csrf_a, "dataset": "survey", "title": "Too much",
                                          "mechanism": '{"kind": "gaussian", "sigma": 0.1}'})
    rid = int(r.headers["location"].rsplit("/", 1)[1])
    bob, csrf = _login(app, "bob")
    assert bob.post(f"/ledger/r/{rid}/approve", data={"csrf_token": csrf, "comment": "big but planned"}).status_code == 303
    rec = bob.get(f"/ledger/r/{rid}/report.json")
    assert rec.status_code == 200 and "approval-record" in rec.headers["content-disposition"]
    data = rec.json()
    a = data["approval"]
    assert next(iter(data)) == "approval"
    assert (a["dataset"]["name"], a["release"]["title"], a["proposer"], a["approver"], a["decision"], a["comment"]) == (
        "survey", "Too much", "ana", "bob", "approved", "big but planned")
    assert a["time"] and a["thresholds"] and a["totals"]["after"]["mu"] > a["totals"]["before"]["mu"]
    assert a["blocked_by_hard_limit"] is True
    page = bob.get(f"/ledger/r/{rid}").text
    assert 'id="report-json"' in page and ('id="report-pdf"' in page or 'id="pdf-pending"' in page)
    pdf = bob.get(f"/ledger/r/{rid}/report.pdf")
    assert pdf.status_code == 200 and pdf.content.startswith(b"%PDF")
    assert 'id="report-pdf"' in bob.get(f"/ledger/r/{rid}/record").text
    # releasing asks first; beyond the hard limit the override reason is a visible field with its rule
    ask = bob.post(f"/ledger/r/{rid}/release", data={"csrf_token": csrf})
    assert ask.status_code == 200 and 'id="confirm-form"' in ask.text
    assert 'id="override_reason"' in ask.text and "hard limit" in ask.text and "four-eyes" in ask.text
    assert bob.get(f"/ledger/r/{rid}/release").text.count('id="override_reason"') == 1
    refused = bob.post(f"/ledger/r/{rid}/release", data={"csrf_token": csrf, "confirm": "yes"})
    assert refused.status_code == 422 and 'id="release-error"' in refused.text and 'id="override_reason"' in refused.text
    with open_ledger(url) as led:
        assert led.release_info(rid).state == "approved"
    done = bob.post(f"/ledger/r/{rid}/release", data={"csrf_token": csrf, "confirm": "yes",
                                                       "override_reason": "board decision 12"})
    assert done.status_code == 303
    with open_ledger(url) as led:
        rel = led.release_info(rid)
        assert rel.state == "released" and rel.override_reason == "board decision 12"
        assert "approval.pdf" in [e.kind for e in led.history(release_id=rid)]
        assert led.verify().ok


def test_api_approve_answers_before_the_pdf(populated):
    url, app = populated
    api = TestClient(app)
    tok = api.post("/api/ledger/login", json={"username": "ana", "password": PASSWORD}).json()["csrf_token"]
    rid = api.post("/api/ledger/datasets/survey/releases", json={"mechanism": {"kind": "gaussian", "sigma": 30},
                                                                  "title": "api"},
                   headers={"X-CSRF-Token": tok}).json()["id"]
    api2 = TestClient(app)
    tok2 = api2.post("/api/ledger/login", json={"username": "bob", "password": PASSWORD}).json()["csrf_token"]
    out = api2.post(f"/api/ledger/releases/{rid}/approve", json={"comment": "ok"}, headers={"X-CSRF-Token": tok2})
    assert out.status_code == 200 and out.json()["state"] == "approved"
    got = api2.get(f"/api/ledger/releases/{rid}").json()
    (a,) = got["approvals"]
    assert a["report_json_sha256"] and a["at"]
    # the test client runs the background job before returning: the PDF is there, chained
    assert a["report_pdf_sha256"] and got["events"][-1]["kind"] == "approval.pdf"


def test_pdf_not_rendered_is_rendered_on_download(populated):
    """A record stored without its PDF (a failed or interrupted render) does not poll
    forever: the page links the PDF, which renders when opened, once, chained."""
    url, app = populated
    with open_ledger(url) as led:
        r = led.propose("survey", {"kind": "gaussian", "sigma": 40}, title="no pdf yet", user="ana")
        led.approve(r.id, user="bob", pdf=False)
    c, _ = _login(app, "val")
    page = c.get(f"/ledger/r/{r.id}").text
    assert 'id="pdf-render"' in page and "hx-trigger" not in page.split('id="record"', 1)[1].split(">", 1)[0]
    pdf = c.get(f"/ledger/r/{r.id}/report.pdf")
    assert pdf.status_code == 200 and pdf.content.startswith(b"%PDF")
    assert 'id="report-pdf"' in c.get(f"/ledger/r/{r.id}").text
    with open_ledger(url) as led:
        assert [e.kind for e in led.history(release_id=r.id)].count("approval.pdf") == 1 and led.verify().ok


def test_api_release_refuses_confirm_false_and_has_a_dry_run(populated):
    url, app = populated
    with open_ledger(url) as led:
        led.add_dataset("fresh", unit="one person", user="admin")  # survey's total may be past its hard limit
        rid = led.propose("fresh", {"kind": "gaussian", "sigma": 40}, title="api release", user="ana").id
        led.approve(rid, user="bob", report=False)
    api = TestClient(app)
    tok = api.post("/api/ledger/login", json={"username": "bob", "password": PASSWORD}).json()["csrf_token"]
    h = {"X-CSRF-Token": tok}
    for body in ({"confirm": False}, {"confirm": False, "override_reason": "x"}):
        r = api.post(f"/api/ledger/releases/{rid}/release", json=body, headers=h)
        assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "confirm"], r.text
        assert "preview" in r.json()["detail"][0]["msg"]
    pre = api.post(f"/api/ledger/releases/{rid}/preview", json={}, headers=h)
    assert pre.status_code == 200, pre.text
    p = pre.json()
    assert p["dry_run"] is True and p["release"]["state"] == "approved" and p["check"]["blocked"] is False
    assert p["check"]["after"]["count"] == p["check"]["before"]["count"] + 1
    assert p["confirm"]["body"] == {"confirm": True}
    assert api.post("/api/ledger/releases/999999/preview", json={}, headers=h).status_code == 404
    with open_ledger(url) as led:
        assert led.release_info(rid).state == "approved"  # the preview wrote nothing
    done = api.post(f"/api/ledger/releases/{rid}/release", json={"confirm": True}, headers=h)
    assert done.status_code == 200 and done.json()["state"] == "released"


def test_rejection_record_from_the_page_and_the_api(populated):
    url, app = populated
    ana, csrf_a = _login(app, "ana")
    rids = []
    for title in ("Rejected on the page", "Rejected by the API"):
        r = ana.post("/ledger/propose", data={"csrf_token": csrf_a, "dataset": "survey", "title": title,
                                              "mechanism": '{"kind": "gaussian", "sigma": 3}'})
        rids.append(int(r.headers["location"].rsplit("/", 1)[1]))
    bob, csrf = _login(app, "bob")
    assert bob.post(f"/ledger/r/{rids[0]}/reject", data={"csrf_token": csrf, "comment": ""}).status_code == 422
    assert bob.post(f"/ledger/r/{rids[0]}/reject", data={"csrf_token": csrf, "comment": "not this quarter"}
                    ).status_code == 303
    api = TestClient(app)
    tok = api.post("/api/ledger/login", json={"username": "bob", "password": PASSWORD}).json()["csrf_token"]
    out = api.post(f"/api/ledger/releases/{rids[1]}/reject", json={"comment": "duplicate"},
                   headers={"X-CSRF-Token": tok})
    assert out.status_code == 200 and out.json()["state"] == "rejected"
    for rid, comment in zip(rids, ("not this quarter", "duplicate")):
        page = bob.get(f"/ledger/r/{rid}").text
        assert 'id="report-json"' in page and "rejected" in page
        rec = bob.get(f"/ledger/r/{rid}/report.json")
        assert rec.status_code == 200 and "rejection-record" in rec.headers["content-disposition"]
        a = rec.json()["approval"]
        assert (a["decision"], a["approver"], a["comment"]) == ("rejected", "bob", comment)
        assert a["time"] and a["thresholds"] and a["totals"]["after"]["count"] == a["totals"]["before"]["count"] + 1
        pdf = bob.get(f"/ledger/r/{rid}/report.pdf")
        assert pdf.status_code == 200 and pdf.content.startswith(b"%PDF")
        assert "rejection-record.pdf" in pdf.headers["content-disposition"]
    with open_ledger(url) as led:
        assert all(led.release_info(r).state == "rejected" for r in rids) and led.verify().ok
