"""Issue 31: the ledger export's basic-composition claim gives delta 0 for pure releases."""

import pytest

from fdpkit.ledger import open_ledger
from fdpkit.ledger.timeline import basic_composition_claim, ledger_document


def _release(led, spec, title):
    r = led.propose("census", spec, title=title, user="ana", purpose="table")
    led.approve(r.id, user="bob", comment="fine", pdf=False)  # the claim reads the JSON; PDFs: test_ledger_record
    led.release(r.id, user="bob")


def test_pure_releases_claim_delta_zero(tmp_path):
    led = open_ledger(f"sqlite:///{tmp_path / 'l.sqlite'}")
    try:
        led.add_dataset("census", unit="one person", user="admin")
        for i in range(3):
            _release(led, {"kind": "laplace", "scale": 0.5}, f"count {i}")
        summary = ledger_document(led, "census").summary
        assert "would claim 6 at δ = 0." in summary and "3e-05" not in summary
        _release(led, {"kind": "gaussian", "sigma": 2.0}, "mean")
        rows = _released(led)
        eps, delta = basic_composition_claim(rows)  # the Gaussian release adds its (epsilon, 1e-5)
        assert delta == pytest.approx(1e-5) and eps == pytest.approx(6 + rows[-1]["epsilon_ref"])
    finally:
        led.close()


def _released(led):
    from fdpkit.ledger.operations import release_dict

    return [release_dict(r) for r in led.releases("census", state="released")]


def test_every_surface_states_the_same_basic_claim(tmp_path):
    # the exported report claimed (6, 0) for three Laplace releases of ε 2 while the dataset page, the
    # status (CLI, JSON), the check and the timeline claimed (Σ ε at 1e-5 = 5.99..., 3e-05): two valid
    # claims that differ. Every surface now states the export's: a pure release adds (ε, 0).
    import json

    from fastapi.testclient import TestClient
    from typer.testing import CliRunner

    from fdpkit.cli import app
    from fdpkit.ledger.timeline import timeline
    from fdpkit.ledger.users import add_user
    from fdpkit.report import render_document
    from fdpkit.web.main import create_app

    url = f"sqlite:///{tmp_path / 'l.sqlite'}"
    led = open_ledger(url)
    try:
        led.add_dataset("census", unit="one person", user="admin")
        for i in range(3):
            led.record("census", {"kind": "laplace", "scale": 0.5}, title=f"c{i}", user="ana", approver="bob",
                       report=False)
        st = led.status("census")
        assert (st.released.epsilon_sum, st.released.delta_sum) == (6.0, 0.0)
        assert (st.to_dict()["epsilon_sum"], st.to_dict()["delta_sum"]) == (6.0, 0.0)
        row = timeline(led, "census")[-1]
        assert (row.epsilon_sum, row.delta_sum) == (6.0, 0.0)
        after = led.check("census", {"kind": "gaussian", "sigma": 2.0}).after
        gauss = after.epsilon_ref_sum - st.released.epsilon_ref_sum  # the Gaussian's own ε at 1e-5
        assert after.delta_sum == 1e-05 and after.epsilon_sum == pytest.approx(6 + gauss) and gauss > 0
        doc = ledger_document(led, "census")
        assert "would claim 6 at δ = 0." in doc.summary
        md = render_document(doc, "md")
        md = md.decode() if isinstance(md, bytes) else md
        assert "| δ of the ε sum | 0 |" in md.replace("  ", " ")
        r = CliRunner().invoke(app, ["ledger", "--db", url, "status", "census", "--format", "json"])
        assert (json.loads(r.stdout)["epsilon_sum"], json.loads(r.stdout)["delta_sum"]) == (6.0, 0.0)
        add_user(led, "viewer", role="viewer", password="viewer-pass-123", actor="admin")
        c = TestClient(create_app(ledger_url=url))
        assert c.post("/api/ledger/login", json={"username": "viewer", "password": "viewer-pass-123"}).status_code == 200
        page = c.get("/ledger/d/census").text
        assert "would claim 6 at δ = 0)" in page and "ε sum (basic composition, δ = 0)" in page
        assert c.get("/api/ledger/datasets/census/status").json()["delta_sum"] == 0.0
        assert led.verify().ok  # the chain still records each release's ε at 1e-5 summed
    finally:
        led.close()
