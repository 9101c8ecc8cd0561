"""Reports a reviewer can file (issue 15): headline first, internal notes collapsed, PDF
pages and text via pdftoppm / pypdf, the same plots in HTML and PDF, human input labels."""

import re
import subprocess

import pytest

import fdpkit as fp
from fdpkit._numerics import safe_g
from fdpkit.report import build_document, render_document, write_atomic
from fdpkit.report.model import Section

PDF_DPI = 40


@pytest.fixture(scope="module")
def rep():
    return fp.privacy_report(fp.dpsgd(2.0, 0.05, 100), discretization=1e-3)


@pytest.fixture(scope="module")
def doc(rep):
    return build_document(rep)


def test_headline_first(doc, rep):
    assert doc.sections[0].key == "headline"
    rows = dict(doc.sections[0].tables[0].rows)
    # upper bounds print their last digit up (safe_g), never to nearest
    assert rows["μ (tight, pessimistic)"] == safe_g(rep.mu, 4, up=True)
    assert rows["ε at δ = 1e-05"] == safe_g(rep.epsilon_for_delta(1e-5), 4, up=True)
    assert rows["best attack TPR at FPR 0.001"] == safe_g(rep.tpr(1e-3), 4, up=True)
    assert rep.grade.label in rows["protection grade"]
    assert doc.data["grade"]["label"] == rep.grade.label and "comparison" in doc.data
    assert doc.sections[-1].collapsed and doc.sections[-1].key == "notes"


def test_human_labels_and_no_dotted_keys(doc):
    inputs = doc.section("inputs").tables[0].rows
    labels = [r[0] for r in inputs]
    assert not any("inner." in lab or "." in lab.split(" ")[0] for lab in labels)
    assert "noise multiplier σ" in labels and "steps" in labels and "sample rate q" in labels


def test_sections_are_extensible(doc):
    extra = doc.with_section(Section("Audit", ("A sentence.",), key="extra"))
    keys = [s.key for s in extra.sections]
    assert keys.index("extra") == keys.index("notes") - 1
    assert extra.with_section(Section("First", key="x"), before="headline").sections[0].key == "x"


def test_html_headline_collapsed_notes_and_all_plots(doc):
    html = render_document(doc, "html").decode()
    assert html.index("id='grade'") < html.index("<h2>Guarantee")
    notes = html.index("<details id='section-notes'>")
    assert "tail truncation" not in html[:notes] or "tail truncation" in html[notes:]
    assert html.count("<figure") == len(doc.figures) >= 4 and html.count("<title>") >= len(doc.figures) + 1
    assert "G_μ" not in html.replace("G<sub>μ</sub>", "") and "G_mu" not in html
    assert html.count(">Inputs</h") == 1  # no duplicated heading
    assert html.count("What this grade means") == 1


def test_pdf_pages_text_and_layout(doc, tmp_path, pdftoppm):
    import pypdf

    path = write_atomic(tmp_path / "r.pdf", render_document(doc, "pdf"))
    reader = pypdf.PdfReader(str(path))
    pages = [p.extract_text() for p in reader.pages]
    text = "\n".join(pages)
    # tables first, then the plots two per page, technical notes on the last page
    first = next(i for i, p in enumerate(pages) if doc.figures[0].caption[:25] in p.replace("\n", " "))
    for k, f in enumerate(doc.figures):
        assert f.caption[:25] in pages[first + k // 2].replace("\n", " "), (k, f.caption)
    assert len(pages) == first + (len(doc.figures) + 1) // 2 + 1
    assert "Protection:" in pages[0] and "Headline" in pages[0]
    assert pages[0].index("Protection:") < pages[0].index("Guarantee")
    assert "Technical notes" in pages[-1] and "Technical notes" not in "\n".join(pages[:-1])
    assert "G_μ" not in text and "G_mu" not in text and "inner.inner" not in text
    assert len(re.findall(r"^Guarantee$", text, flags=re.M)) == 1  # no duplicated heading
    assert text.count("What this grade means") == 1  # the grade box, not its definition again
    assert "mu-GDP" not in pages[0] and ">=" not in pages[0]  # symbols, not ASCII names
    assert "fdpkit privacy report, page 1" in pages[0]
    subprocess.run([pdftoppm, "-png", "-r", str(PDF_DPI), str(path), str(tmp_path / "page")], check=True)
    pngs = sorted(tmp_path.glob("page*.png"))
    assert len(pngs) == len(pages) and all(p.stat().st_size > 1000 for p in pngs)
    # plots fill the page: the figure pages carry more ink than a blank one
    assert min(pngs[first].stat().st_size, pngs[first + 1].stat().st_size) > 5000


def test_notebook_repr(rep):
    assert len(repr(rep)) < 200 and "PrivacyReport(" in repr(rep)
    card = rep._repr_html_()
    assert "<svg" in card and "<title>" in card and rep.grade.label in card
    assert "<svg" in fp.GaussianCurve(1.0)._repr_html_() and "<svg" in fp.fit_gdp(fp.LaplaceCurve(1.0))._repr_html_()
    assert "GDPFit(mu=" in repr(fp.fit_gdp(fp.LaplaceCurve(1.0)))
    assert rep.to_html().startswith("<!DOCTYPE html>")


def test_tau_is_printed_up_wherever_the_report_quotes_it():
    # tau = 1.4948e-09 read "1.49e-09" in the fit's statement (to nearest: a TPR bound below
    # the true one); then (session 13) "1.5e-09" in the warning and the paper statement,
    # "1.495e-09" in the table and the CLI's next command: one τ, three values on one page
    from fdpkit.fit.mu import GDPFit

    fit = GDPFit(0.4292, 0.005, 1e-10, 1.4948486612068194e-09, "")
    assert fit.statement().endswith("+ 1.495e-09.")
    rep = fp.privacy_report(fp.dpsgd(noise_multiplier=1.1, batch_size=256, dataset_size=60000, epochs=30))
    assert rep.fit.tau == pytest.approx(1.4948e-09, rel=1e-3)
    assert rep.fit.statement().endswith("+ 1.495e-09.") and rep.warnings[0].endswith("+ 1.495e-09.")
    assert "holds up to τ = 1.495e-09;" in rep.statement()
    page = render_document(build_document(rep), "md").decode()
    assert "1.495e-09" in page and not re.search(r"1\.5e-09|1\.49e-09", page)


def test_cli_text_report_ends_with_the_next_commands():
    # the text report ended at its provenance table: the next step (risk, convert) needed μ re-typed
    from typer.testing import CliRunner

    from fdpkit._numerics import safe_text
    from fdpkit.cli import app

    mu = safe_text(fp.privacy_report(fp.Gaussian(2.0)).mu, up=True)
    out = CliRunner().invoke(app, ["report", "gaussian", "--sigma", "2"]).output
    last = " ".join(out.strip().splitlines()[-2:])
    assert f"Next: fdpkit risk --mu {mu}" in " ".join(out.split()) and "rounded up" in last
    assert f"fdpkit convert mu-to-eps --mu {mu}" in " ".join(out.split())
    # it said convert's ε "can be larger than the privacy profile above": at δ = 1e-9 μ = 1.567
    # alone gives 10.22 where the headline run's profile gives 10.2245 (printed 10.23)
    assert "for this run quote the privacy profile above" in " ".join(out.split())


def test_cli_report_next_risk_command_carries_the_range_of_mu():
    # `fdpkit risk --mu 1.567` alone read μ-GDP outside the report's range (FPR or FNR < 1e-10),
    # where the run is certified only up to τ: the next command carries the range and τ
    from typer.testing import CliRunner

    from fdpkit._numerics import safe_text
    from fdpkit.cli import app

    args = ["--noise-multiplier", "1.1", "--batch-size", "50", "--dataset-size", "1000", "--epochs", "2",
            "--discretization", "1e-2"]
    rep = fp.privacy_report(fp.dpsgd(noise_multiplier=1.1, batch_size=50, dataset_size=1000, epochs=2),
                            discretization=1e-2)
    out = " ".join(CliRunner().invoke(app, ["report", "dpsgd", *args]).output.split())
    mu, tau = safe_text(rep.mu, up=True), safe_text(rep.fit.tau, up=True)
    assert rep.fit.alpha_min == 1e-10 and f"Next: fdpkit risk --mu {mu} --mu-fpr-min 1e-10 --mu-tau {tau} (" in out


def test_pdf_heading_never_ends_a_page(tmp_path):
    # session 13: the 60-epoch run's PDF ended page 1 with the heading "Posterior after a positive
    # attack at FPR 0.001" and began page 2 with its table
    import pypdf

    rep = fp.privacy_report(fp.dpsgd(1.1, batch_size=256, dataset_size=60000, epochs=60))
    doc = build_document(rep)
    headings = {s.title for s in doc.sections} | {t.title for s in doc.sections for t in s.tables}
    path = write_atomic(tmp_path / "r.pdf", render_document(doc, "pdf"))
    for i, page in enumerate(pypdf.PdfReader(str(path)).pages):
        lines = [x for x in page.extract_text().splitlines() if x.strip() and "privacy report, page" not in x]
        assert lines and lines[-1].strip() not in headings, (i + 1, lines[-1])
