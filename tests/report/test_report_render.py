"""Reports: JSON against its schema, PDF text and pages, HTML numbers, CSV escaping, plots."""

import csv
import math
import io
import json
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

import fdpkit as fp
from fdpkit.report import build_document, csv_cell, render_document, write_atomic

SCHEMA = Path(__file__).resolve().parents[2] / "src" / "fdpkit" / "report" / "report.schema.json"


@pytest.fixture(scope="module")
def doc():
    return build_document(fp.privacy_report(fp.dpsgd(2.0, 0.05, 100), discretization=1e-3))


def test_json_matches_schema(doc):
    import jsonschema_rs

    data = json.loads(render_document(doc, "json"))
    schema = json.loads(SCHEMA.read_text())
    jsonschema_rs.validate(schema, data)
    bad = dict(data)
    bad.pop("guarantee")
    with pytest.raises(Exception):
        jsonschema_rs.validate(schema, bad)


def test_pdf_text_has_greek_and_numbers(doc, tmp_path):
    import pypdf

    pdf = render_document(doc, "pdf")
    path = write_atomic(tmp_path / "r.pdf", pdf)
    reader = pypdf.PdfReader(str(path))
    text = "\n".join(p.extract_text() for p in reader.pages)
    assert "μ" in text and "δ" in text and "ε" in text
    assert f"{doc.data['guarantee']['mu']:.4g}" in text
    assert len(reader.pages) >= 3  # tables and the plots


def test_pdf_pages_render(doc, tmp_path, pdftoppm):
    path = write_atomic(tmp_path / "r.pdf", render_document(doc, "pdf"))
    subprocess.run([pdftoppm, "-png", "-r", "40", str(path), str(tmp_path / "page")], check=True)
    pages = sorted(tmp_path.glob("page*.png"))
    assert len(pages) >= 3 and all(p.stat().st_size > 1000 for p in pages)


class _Collect(HTMLParser):
    def __init__(self):
        super().__init__()
        self.text, self.tags = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def test_html_is_self_contained_and_has_numbers(doc):
    html = render_document(doc, "html").decode()
    p = _Collect()
    p.feed(html)
    text = " ".join(p.text)
    assert f"{doc.data['guarantee']['mu']:.4g}" in text
    assert html.count("<svg") >= 3
    for tag, attrs in p.tags:
        for key in ("src", "href"):
            assert not str(attrs.get(key, "")).startswith(("http:", "https:", "//")), (tag, attrs)


def test_csv_escapes_formula_cells():
    assert csv_cell("=HYPERLINK(1)") == "'=HYPERLINK(1)"
    assert csv_cell("+1") == "'+1" and csv_cell("-1") == "'-1" and csv_cell("@x") == "'@x"
    assert csv_cell("1e-05") == "1e-05"


def test_csv_sections_parse(doc):
    rows = list(csv.reader(io.StringIO(render_document(doc, "csv").decode())))
    titles = [r[0] for r in rows if r and r[0].startswith("# ")]
    assert any("Headline" in t for t in titles) and any("μ-GDP fit" in t for t in titles)
    assert any("ε at standard δ" in t for t in titles)


def test_markdown_tables(doc):
    md = render_document(doc, "md").decode()
    assert md.startswith("# Privacy report") and "| δ | ε |" in md


def test_unknown_format(doc):
    with pytest.raises(ValueError, match="format must be one of"):
        render_document(doc, "docx")


def test_write_atomic_cleans_up_on_failure(tmp_path):
    class Boom(bytes):
        pass

    with pytest.raises(TypeError):
        write_atomic(tmp_path / "x.txt", 12345)  # not bytes
    assert list(tmp_path.iterdir()) == []


def test_log_axes_label_decades_as_plain_text():
    """Decade ticks read 1, 10, 10⁻⁴ as text (no mathtext, which each figure parsed anew);
    a log axis within one decade keeps matplotlib's own (non-decade) labels."""
    from fdpkit.report.figures import render

    def wide(ax):
        ax.loglog([1e-6, 1.0], [1e-4, 10.0])

    svg = render(wide, "svg").decode()
    assert all(f">{t}<" in svg for t in ("10⁻⁶", "10⁻⁴", "10⁻²", "1", "10"))
    assert "mathdefault" not in svg

    def narrow(ax):
        ax.semilogx([0.2, 0.9], [0.0, 1.0])

    labels = [t.get_text() for t in _tick_labels(narrow)]
    assert any(labels), "a log axis within one decade still labels its ticks"


def _tick_labels(draw):
    import matplotlib

    from fdpkit.report.figures import _plain_decades

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure()
    ax = fig.add_subplot()
    draw(ax)
    _plain_decades(fig)
    fig.canvas.draw()
    return ax.xaxis.get_ticklabels(which="both")


def test_schedule_inputs_are_labelled_by_phase():
    """A DP-SGD schedule's inputs read "noise multiplier σ (phase 1)" (they read "... ()"
    under a blank "mechanism (part 1 of the dpsgd)" row, in every format)."""
    from fdpkit.report.model import human_inputs

    m = fp.dpsgd_schedule([(1.0, 0.01, 1000), (2.0, 0.02, 500)])
    rows = dict(human_inputs(m.to_dict()))
    assert rows["mechanism"] == "DP-SGD"
    assert rows["noise multiplier σ (phase 1)"] == "1" and rows["steps (phase 2)"] == "500"
    assert not any(k.endswith("()") or "part 1 of" in k for k in rows) and all(v != "" for v in rows.values())


def test_difference_figure_draws_round_off_as_zero():
    """Pure 0-DP: the numeric curve and G_0 are both 1 - alpha; their difference of +-1e-16
    was drawn as a jagged line below 0 in the "≥ 0 where mu holds" figure."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from fdpkit.report import plots

    r = fp.privacy_report(fp.PureDP(0.0))
    fig, ax = plt.subplots()
    plots.curve_vs_gdp(ax, r.curve, r.mu)
    assert np.all(ax.lines[0].get_ydata() == 0.0)
    plt.close(fig)


# -- every printed bound on its safe side ---------------------------------------------------
from hypothesis import example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from fdpkit._numerics import round_safe, safe_g, safe_percent  # noqa: E402
from fdpkit.report.model import fmt  # noqa: E402

#: finite positive floats across every magnitude a bound can take, 1e-300 to 1e300
_POSITIVE = st.floats(min_value=1e-300, max_value=1e300, allow_nan=False, allow_infinity=False)


@settings(max_examples=3000, deadline=None)
@given(x=_POSITIVE, digits=st.integers(1, 6))
@example(x=1.6362708712736287, digits=4).via("the DP-SGD run's epsilon, 1.636 to nearest")
@example(x=0.0037281429936741567, digits=4).via("its TPR at FPR 1e-3, 0.003728 to nearest")
@example(x=1.4948e-09, digits=3)
@example(x=9.99951, digits=4)
@example(x=0.99996, digits=4)
@example(x=1.7976931348623157e308, digits=4)
@example(x=1e-300, digits=6)
@example(x=0.1, digits=4)
def test_fmt_never_prints_a_bound_on_its_optimistic_side(x, digits):
    """fmt(up=True) never prints below its input, fmt(up=False) never above it (as the text
    reads back as a float); both keep the digits of nearest and move at most the last one."""
    nearest = f"{x:.{digits}g}"
    up, down = fmt(x, digits, up=True), fmt(x, digits, up=False)
    assert float(up) >= x and float(down) <= x, (x, up, down)
    assert up == safe_g(x, digits, up=True) and down == safe_g(x, digits, up=False)
    assert float(up) == round_safe(x, digits, up=True) and float(down) == round_safe(x, digits, up=False)
    for text in (up, down):
        mantissa = text.split("e")[0].replace(".", "").replace("-", "").lstrip("0")
        assert len(mantissa) <= digits, (x, text)  # same significant digits as to nearest
    # where nearest is already on the safe side it is printed as it was; else one unit beyond
    assert up == nearest if float(nearest) >= x else up != nearest
    assert down == nearest if float(nearest) <= x else down != nearest
    unit = 10.0 ** (math.floor(math.log10(x)) - digits + 1)
    # (above the largest float "1.798e+308" reads back as inf: still not below x)
    assert float(up) - x <= 1.0000001 * unit or math.isinf(float(up))
    assert x - float(down) <= 1.0000001 * unit


@settings(max_examples=1000, deadline=None)
@given(x=st.floats(min_value=0.0, max_value=1.0), decimals=st.integers(0, 3))
@example(x=0.0037281429936741567, decimals=2)
def test_safe_percent_never_prints_a_bound_on_its_optimistic_side(x, decimals):
    up, down = safe_percent(x, decimals, up=True), safe_percent(x, decimals, up=False)
    assert float(up[:-1]) / 100 >= x * (1 - 1e-15) and float(down[:-1]) / 100 <= x * (1 + 1e-15), (x, up, down)
    assert len(up) - len(f"{x:.{decimals}%}") in (0, 1)  # 99.99% may become 100.00%


def test_fmt_inputs_and_labels_keep_nearest():
    assert fmt(1.6363) == "1.636" and fmt(1.6363, up=True) == "1.637" and fmt(1.6363, up=False) == "1.636"
    assert fmt(7032, up=True) == "7032" and fmt(float("inf"), up=False) == "∞" and fmt(0.0, up=True) == "0"
    assert fmt("inf", up=True) == "∞" and fmt(None, up=True) == "-"


def test_published_settings_round_up_like_this_mechanism():
    # the published rows rounded to nearest: the headline run's own row read ε 7.425 and its
    # published row (the same run, ε 7.4243850) 7.424, one table, two figures for one run;
    # and randomized response's μ 1.23204 read 1.232, below the value
    from fdpkit.report.published import PUBLISHED

    doc = build_document(fp.privacy_report(fp.dpsgd(noise_multiplier=9.4, sample_rate=16384 / 50000, steps=2000)),
                         representations=False)
    table = next(t for s in doc.sections for t in s.tables if t.title.startswith("Published settings"))
    rows = {name: (mu, eps) for name, mu, eps, _ in table.rows}
    assert rows["▶ this mechanism"] == rows["De et al. headline CIFAR-10 run at ε = 8 (noise 9.4, 2000 steps)"] \
        == ("1.567", "7.425")
    for r in PUBLISHED:
        mu, eps = rows[r.name]
        assert float(mu) >= r.mu and (eps == "-" if r.epsilon_at_1e5 is None else float(eps) >= r.epsilon_at_1e5)
    assert rows["randomized response at ε = 1"][0] == "1.233"


def test_report_says_its_attack_risk_in_plain_words():
    # the report gave the non-expert a grade band ("between 0.3% and 2.0%") and a TPR of 0.007074 at
    # FPR 0.001, but not the run's own risk in words, as the Risk page gives a guarantee's
    from fdpkit._numerics import plain_percent

    rep = fp.privacy_report(fp.dpsgd(1.1, batch_size=256, dataset_size=50000, epochs=60))
    doc = build_document(rep)
    words = doc.section("headline").paragraphs[1]
    tpr = dict((r["fpr"], r["tpr"]) for r in rep.to_dict()["tpr_at_fpr"])[1e-3]
    post = dict(rep.posteriors)[0.01]
    assert words.startswith("In plain words: an attack that wrongly accuses 0.10% of the people who are not in the data")
    assert f"catches at most {plain_percent(tpr, 2, up=True)} of those who are" in words  # 0.71%
    assert f"can become at most {plain_percent(post, 1, up=True)} sure" in words and "6.7%" in words
    assert words in render_document(doc, "md").decode() and "catastrophic" not in words
    outright = build_document(fp.privacy_report(fp.UniformSampling(1.0, 100))).section("headline").paragraphs[1]
    assert "reveal a person in the data outright" in outright
    certain = build_document(fp.privacy_report(fp.dpsgd(0.5, 1.0, 1000))).section("headline").paragraphs[1]
    assert "can catch every one of those who are" in certain and "100.00%" not in certain
