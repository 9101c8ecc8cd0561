"""Issue 25 problem 8: the stored approval record (JSON and PDF) begins with the dataset,
release title, proposer, approver, decision, comment, time, thresholds and the running
totals before and after, followed by the privacy report it approves; the PDF can be
rendered after the approval (issue 27 item 4) as its own chained event."""

import json
import shutil
import subprocess

import pytest

from fdpkit.ledger import LedgerError
from fdpkit.ledger.record import RECORD_KIND


@pytest.fixture
def census(ledger):
    ledger.add_dataset("census", unit="one person", user="admin")
    ledger.record("census", {"kind": "gaussian", "sigma": 2.0}, title="earlier", user="ana", approver="bob",
                  report=False)
    return ledger


def _pdf_text(pdf: bytes, tmp_path) -> str:
    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext (poppler-utils) is not installed")
    path = tmp_path / "r.pdf"
    path.write_bytes(pdf)
    return subprocess.run(["pdftotext", "-layout", str(path), "-"], capture_output=True, text=True,
                          check=True).stdout


def test_record_begins_with_the_approval(census, tmp_path):
    r = census.propose("census", {"kind": "gaussian", "sigma": 1.0, "sensitivity": 0.5}, title="Weekly counts",
                       user="ana", purpose="monthly table")
    a = census.approve(r.id, user="bob", comment="checked the plan")
    data = json.loads(a.report_json)
    assert next(iter(data)) == "approval"
    rec = data["approval"]
    assert rec["record"] == RECORD_KIND
    assert rec["dataset"] == {"name": "census", "unit": "one person", "relation": "add-remove"}
    assert rec["release"]["title"] == "Weekly counts" and rec["release"]["id"] == r.id
    assert rec["release"]["mechanism"]["sensitivity"] == 0.5
    assert (rec["proposer"], rec["approver"], rec["decision"], rec["comment"]) == (
        "ana", "bob", "approved", "checked the plan")
    assert rec["time"].startswith(a.created_at.isoformat()[:19])
    assert {t["level"] for t in rec["thresholds"]} == {"notice", "warning", "hard"}
    before, after = rec["totals"]["before"], rec["totals"]["after"]
    assert before["count"] == 1 and after["count"] == 2
    assert before["mu"] == pytest.approx(0.5) and after["mu"] == pytest.approx((0.25 + 0.25) ** 0.5)
    assert rec["totals"]["released_before"] == [1]
    assert data["guarantee"]["mu"] == pytest.approx(0.5)  # the privacy report it approves follows
    text = _pdf_text(a.report_pdf, tmp_path)
    head = text[:text.index("privacy report approved")] if "privacy report approved" in text else text
    for word in ("Approval record", "census", "Weekly counts", "ana", "bob", "approved", "checked the plan",
                 "before", "after this release", "hard"):
        assert word in head, word
    assert census.verify().ok


def test_pdf_rendered_later_is_chained(census, tmp_path):
    r = census.propose("census", {"kind": "gaussian", "sigma": 3.0}, title="t", user="ana")
    a = census.approve(r.id, user="bob", pdf=False)
    assert a.report_json is not None and a.report_pdf is None and a.report_pdf_sha256 is None
    assert census.verify().ok
    b = census.render_approval_pdf(r.id)
    assert b.report_pdf.startswith(b"%PDF") and b.report_pdf_sha256
    assert [e.kind for e in census.history(release_id=r.id)][-1] == "approval.pdf"
    n = len(census.history())
    assert census.render_approval_pdf(r.id).report_pdf_sha256 == b.report_pdf_sha256
    assert len(census.history()) == n  # once only
    assert census.verify().ok
    assert "Approval record" in _pdf_text(b.report_pdf, tmp_path)


def test_no_record_no_pdf(census):
    from fdpkit.ledger import NotFound

    r = census.propose("census", {"kind": "gaussian", "sigma": 3.0}, title="t", user="ana")
    with pytest.raises(NotFound, match="no stored approval record"):
        census.render_approval_pdf(r.id)


def test_changed_total_refuses_the_record(census, monkeypatch):
    """A record whose "before" total is stale is never stored: nothing is written."""
    r = census.propose("census", {"kind": "gaussian", "sigma": 3.0}, title="t", user="ana")
    real = type(census)._check
    monkeypatch.setattr(type(census), "_check", lambda self, *a: (real(self, *a)[0], []))
    n = len(census.history())
    with pytest.raises(LedgerError, match="released total of the dataset changed"):
        census.approve(r.id, user="bob", pdf=False)
    assert census.release_info(r.id).state == "proposed" and len(census.history()) == n


def test_record_in_one_transaction_has_the_record(census):
    r = census.record("census", {"kind": "gaussian", "sigma": 4.0}, title="import", user="ana", approver="bob")
    a = census.approvals(r.id)[0]
    rec = json.loads(a.report_json)["approval"]
    assert rec["release"]["id"] == r.id and rec["approver"] == "bob" and rec["totals"]["after"]["count"] == 2
    assert a.report_pdf.startswith(b"%PDF")
    assert census.verify().ok


def test_cli_record(census, tmp_path):
    from typer.testing import CliRunner

    from fdpkit.cli import app

    r = census.propose("census", {"kind": "gaussian", "sigma": 3.0}, title="cli", user="ana")
    census.approve(r.id, user="bob", comment="via cli", pdf=False)
    run = CliRunner()
    out = run.invoke(app, ["ledger", "--db", census.url, "record", str(r.id)])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["approval"]["comment"] == "via cli"
    assert run.invoke(app, ["ledger", "--db", census.url, "record", str(r.id), "-f", "pdf"]).exit_code == 2
    pdf = tmp_path / "rec.pdf"
    assert run.invoke(app, ["ledger", "--db", census.url, "record", str(r.id), "-f", "pdf", "-o", str(pdf)]).exit_code == 0
    assert pdf.read_bytes().startswith(b"%PDF") and census.verify().ok
    bad = run.invoke(app, ["ledger", "--db", census.url, "record", "999"])
    assert bad.exit_code == 2 and "unknown" in bad.output


@pytest.mark.parametrize("pdf", [True, False])
def test_four_eyes_refused_before_any_record(census, pdf):
    r = census.propose("census", {"kind": "gaussian", "sigma": 3.0}, title="mine", user="ana")
    n = len(census.history())
    with pytest.raises(LedgerError, match="four-eyes"):
        census.approve(r.id, user="ana", pdf=pdf)
    assert census.release_info(r.id).state == "proposed" and census.approvals(r.id) == []
    assert len(census.history()) == n


def test_rejection_has_its_record(census, tmp_path):
    r = census.propose("census", {"kind": "gaussian", "sigma": 0.2}, title="Too much", user="ana")
    with pytest.raises(LedgerError, match="comment"):
        census.reject(r.id, user="bob", comment="")  # the reason first, before any rendering
    assert census.release_info(r.id).state == "proposed"
    census.reject(r.id, user="bob", comment="over the hard limit")
    (a,) = census.approvals(r.id)
    assert a.decision == "rejected" and a.report_json and a.report_pdf and a.report_pdf_sha256
    rec = json.loads(a.report_json)["approval"]
    assert (rec["dataset"]["name"], rec["release"]["title"], rec["proposer"], rec["approver"], rec["decision"],
            rec["comment"]) == ("census", "Too much", "ana", "bob", "rejected", "over the hard limit")
    assert rec["time"].startswith(a.created_at.isoformat()[:19])
    before, after = rec["totals"]["before"], rec["totals"]["after"]
    assert before["count"] == 1 and after["count"] == 2 and after["mu"] > before["mu"]  # what it would have made
    assert rec["blocked_by_hard_limit"] is True and {t["level"] for t in rec["thresholds"]} == {"notice", "warning",
                                                                                               "hard"}
    st = census.status("census")
    assert st.released.count == 1 and st.released.mu == pytest.approx(0.5)  # a rejection changes no total
    text = _pdf_text(a.report_pdf, tmp_path)
    head = text[:text.index("privacy report rejected")]
    for word in ("Rejection record", "Too much", "rejected by", "over the hard limit", "had it been released",
                 "would have exceeded", "not released"):
        assert word in head, word
    assert "approval record" not in text.lower()  # the page footers name it a rejection record too
    kinds = [e.kind for e in census.history(release_id=r.id)]
    assert kinds[-1] == "release.rejected" and census.verify().ok


def test_rejection_pdf_after_the_json(census):
    r = census.propose("census", {"kind": "laplace", "scale": 4.0}, title="later", user="ana")
    census.reject(r.id, user="bob", comment="not needed", pdf=False)
    (a,) = census.approvals(r.id)
    assert a.report_json and a.report_pdf is None
    b = census.render_approval_pdf(r.id)
    assert b.report_pdf.startswith(b"%PDF") and census.verify().ok
