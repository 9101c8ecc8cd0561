"""A release accounted under another neighbouring relation than its dataset declares, released
by an fdpkit older than the relation rule (``fdpkit.ledger.rules.check_relation``): the chain
keeps it (append-only) and the total counts it, so every reading of the total says so, one
line per such release, and ``verify`` reports it as a finding (the CLI exits 1)."""

import json
import re

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from fdpkit.cli import app
from fdpkit.ledger import open_ledger
from fdpkit.ledger.users import add_user
from fdpkit.mechanisms import dpsgd

PASSWORD = "s3cret-Passw0rd!"
NOTE = ("release 2 was accounted under relation replace-one while dataset members declares add-remove: "
        "its figure may not bound add-remove")


def _old_ledger(url, monkeypatch):
    """What an fdpkit without the relation rule wrote: the same lifecycle, the rule absent
    (every event chained as that version chained it; nothing written around the chain)."""
    led = open_ledger(url)
    led.add_dataset("members", unit="one person", user="admin")
    led.add_dataset("clean", unit="one person", user="admin")
    add_user(led, "viewer", role="viewer", password=PASSWORD, actor="admin")
    with monkeypatch.context() as m:
        for where in ("fdpkit.ledger.lifecycle.check_relation", "fdpkit.ledger.budget.check_relation"):
            m.setattr(where, lambda *a: None)
        for name, mech in (("members", {"kind": "gaussian", "sigma": 3.0}),
                           ("members", dpsgd(1.1, 0.01, 10, relation="replace-one").to_dict()),
                           ("members", dpsgd(1.1, 0.01, 10, relation="zero-out").to_dict()),
                           ("clean", dpsgd(1.1, 0.01, 10).to_dict())):
            r = led.propose(name, mech, title="old", user="ana")
            led.approve(r.id, user="bob", report=False)
            led.release(r.id, user="bob")
    return led


@pytest.fixture
def old(ledger_url, monkeypatch):
    led = _old_ledger(ledger_url, monkeypatch)
    yield ledger_url, led
    led.close()


def test_the_python_totals_and_verify_name_the_release(old):
    url, led = old
    st = led.status("members")
    assert st.released.count == 3  # history is not rewritten: the release stays counted
    (note,) = st.relation_notes
    assert note.startswith(NOTE) and "\n" not in note
    assert st.to_dict()["relation_notes"] == [note]
    assert led.status("clean").relation_notes == [] and led.status("clean").to_dict()["relation_notes"] == []
    from fdpkit.ledger.timeline import ledger_document

    warnings = next(s for s in ledger_document(led, "members").sections if s.title == "Warnings").paragraphs
    assert warnings[0] == note
    integrity = next(s for s in ledger_document(led, "members").sections if s.title == "Integrity").paragraphs
    assert f"Finding: {note}" in integrity  # verify's finding, where the report states verify's answer
    res = led.verify()
    assert res.ok and res.findings == (note,) and res.to_dict()["findings"] == [note]


def test_the_cli_says_it_and_verify_exits_1(old):
    url, _ = old
    runner = CliRunner()
    r = runner.invoke(app, ["ledger", "--db", url, "status", "members"])
    assert r.exit_code == 0, r.output
    assert any(line.startswith("! " + NOTE) for line in r.stdout.splitlines()), r.stdout
    r = runner.invoke(app, ["ledger", "--db", url, "status", "members", "--format", "json"])
    assert json.loads(r.stdout)["relation_notes"][0].startswith(NOTE)
    r = runner.invoke(app, ["ledger", "--db", url, "status", "clean"])
    assert r.exit_code == 0 and "relation" not in r.stdout.split("Thresholds")[1]
    r = runner.invoke(app, ["ledger", "--db", url, "verify"])
    assert r.exit_code == 1 and "ledger intact" in r.stdout, r.output
    assert any(line.startswith("finding: " + NOTE) for line in r.stdout.splitlines()), r.stdout
    r = runner.invoke(app, ["ledger", "--db", url, "verify", "--format", "json"])
    data = json.loads(r.stdout)
    assert r.exit_code == 1 and data["ok"] is True and data["findings"][0].startswith(NOTE)


def test_the_web_pages_say_it(old):
    from fdpkit.web.main import create_app

    url, _ = old
    if not url.startswith("sqlite"):
        pytest.skip("the pages read the same Status on every backend; SQLite shows them")
    c = TestClient(create_app(ledger_url=url), follow_redirects=False)
    token = re.search(r'name="csrf_token" value="([^"]+)"', c.get("/ledger/login").text).group(1)
    assert c.post("/ledger/login", data={"username": "viewer", "password": PASSWORD, "csrf_token": token,
                                         "next": "/ledger"}).status_code == 303
    alerts = c.get("/ledger/d/members").text.split('id="alerts"')[1].split("</ul>")[0]
    assert NOTE in alerts
    assert 'id="alerts"' not in c.get("/ledger/d/clean").text
    index = c.get("/ledger").text
    assert index.count("relation-badge") == 1 and 'href="/ledger/d/members#alerts"' in index
    history = c.get("/ledger/history?verify=1").text
    assert NOTE in history.split('id="verify-findings"')[1]
    assert c.get("/api/ledger/verify").json()["findings"][0].startswith(NOTE)
    assert c.get("/api/ledger/datasets/members/status").json()["relation_notes"][0].startswith(NOTE)
