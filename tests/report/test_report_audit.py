"""The "Audit" section in every report format."""

import io
import json

import pytest
from pypdf import PdfReader

import fdpkit as fp
from fdpkit.audit import simulate_attack
from fdpkit.report import build_document, render_document
from fdpkit.report.audit import audit_section, build_audit_document, with_audit


@pytest.fixture(scope="module")
def violated():
    sim = simulate_attack(fp.Gaussian(0.5), trials=2000, seed=4)
    return fp.run_audit(sim.member_scores, sim.nonmember_scores, mechanism=fp.Gaussian(1.0))


def test_audit_section_tables(violated):
    s = audit_section(violated)
    assert s.title == "Audit" and s.paragraphs[0].startswith("VIOLATION")
    rows = dict(s.tables[0].rows)
    assert rows["violation"] == "YES" and "Bonferroni" in rows["bounds"]
    assert float(rows["μ lower bound"]) == pytest.approx(violated.mu_lower, rel=1e-3)


def test_stand_alone_document_in_every_format(violated):
    doc = build_audit_document(violated)
    assert [s.title for s in doc.sections] == ["Audit", "Warnings"]
    data = json.loads(render_document(doc, "json"))
    assert data["audit"]["violation"] is True and data["audit"]["mu_lower"] == pytest.approx(violated.mu_lower)
    md = render_document(doc, "md").decode()
    assert "## Audit" in md and "VIOLATION" in md
    csv = render_document(doc, "csv").decode()
    assert "# Audit" in csv and "μ lower bound" in csv
    html = render_document(doc, "html").decode()
    assert "<h2>Audit</h2>" in html and "id='fig-audit-roc'" in html and "<svg" in html
    pdf = PdfReader(io.BytesIO(render_document(doc, "pdf")))
    text = "".join(p.extract_text() for p in pdf.pages)
    assert "Audit" in text and "VIOLATION" in text
    assert "fdpkit audit report, page 1" in text and "privacy report" not in text  # the footer names it


def test_audit_appended_to_a_privacy_report(violated):
    doc = with_audit(build_document(fp.privacy_report(fp.Gaussian(1.0))), violated)
    titles = [s.title for s in doc.sections]
    assert "Audit" in titles and titles.count("Warnings") == 1
    warnings = next(s for s in doc.sections if s.title == "Warnings").paragraphs
    assert "None." not in warnings and warnings[-1].startswith("VIOLATION")
    assert doc.figures[-1].name == "audit-roc"
    assert json.loads(render_document(doc, "json"))["audit"]["violation"] is True
    assert "## Audit" in render_document(doc, "md").decode()
