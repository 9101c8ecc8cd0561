"""How the ledger reads to people: totals in plain grammar ("Released so far: 3 releases",
never "3 released releases") in the export and on the dataset page, and `fdpkit ledger
timeline` whole at 80 columns (no cell cut to "…")."""

import pytest
from typer.testing import CliRunner

from fdpkit.cli import _common, app
from fdpkit.ledger.timeline import ledger_document, timeline


@pytest.fixture
def census(ledger):
    ledger.add_dataset("census", unit="one person", user="admin")
    return ledger


def _release(led, spec, n=1):
    for i in range(n):
        led.record("census", spec, title=f"t{i}", user="ana", approver="bob", report=False)


def test_export_summary_grammar(census):
    assert "Nothing released yet." in ledger_document(census, "census").summary
    _release(census, {"kind": "gaussian", "sigma": 3.0})
    one = ledger_document(census, "census").summary
    assert "Released so far: 1 release, composing to μ" in one
    _release(census, {"kind": "laplace", "scale": 0.5}, 2)
    three = ledger_document(census, "census").summary
    assert "Released so far: 3 releases, composing to μ" in three and "released release" not in three


def test_timeline_is_whole_at_80_columns(census, monkeypatch):
    # the nine columns were cut to "relea…", "2026-…", "0.002…" at 80 columns
    _release(census, {"kind": "laplace", "scale": 0.5}, 3)
    _release(census, {"kind": "gaussian", "sigma": 3.0})
    monkeypatch.setattr(_common.out, "_width", 80)
    r = CliRunner().invoke(app, ["ledger", "--db", census.url, "timeline", "census"])
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert max(len(x) for x in lines) <= 80 and "…" not in r.stdout
    for row in timeline(census, "census"):
        line = next(x for x in lines if row.start.isoformat() in x)
        for cell in row.texts()[1:]:
            assert f" {cell} " in f" {line} ", (cell, line)
    legend = " ".join(" ".join(lines).split())
    for said in ("total: released so far", "ε sum at δ sum: basic composition", "at FPR 0.001", "at δ = 1e-05"):
        assert said in legend


def test_timeline_plot_has_one_dot_per_bucket(census):
    # session 13: one week of releases drew two dots, the second at the start of the next
    # week (not yet begun: a total nobody computed) beside a table with one row
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from fdpkit.ledger.timeline import draw_timeline

    _release(census, {"kind": "gaussian", "sigma": 3.0}, 2)
    rows = timeline(census, "census")
    fig, ax = plt.subplots()
    try:
        draw_timeline(rows)(ax)
        dots = [line for line in ax.get_lines() if line.get_marker() not in (None, "None", "", " ")]
        assert sum(len(line.get_xdata()) for line in dots) == len(rows) == 1
    finally:
        plt.close(fig)


def test_ledger_spells_delta_one_way_in_its_messages_rows_and_pages(census, tmp_path):
    # the dataset page read "notice threshold exceeded: ε 0.7256 > 0.5 at δ = 1e-05" and the
    # threshold "ε 3 at δ = 1e-06 (hard)" beside "composing to ε = 0.7256 at δ = 1e-5, ε = 0.8342 at
    # δ = 1e-6", and `fdpkit ledger status` "ε at δ = 1e-5" beside its alerts' "1e-05"
    import re
    from html import unescape

    from fastapi.testclient import TestClient

    from fdpkit.ledger.users import add_user
    from fdpkit.web.main import create_app

    short = re.compile(r"δ = \d(?:\.\d+)?e-[1-9]\b")  # 1e-5, 1e-6: not the formatter's 1e-05
    _release(census, {"kind": "gaussian", "sigma": 5.0})
    census.set_threshold("census", metric="epsilon", level="notice", value=0.5, user="admin")
    census.set_threshold("census", metric="epsilon", level="hard", value=3, delta=1e-6, user="admin")
    census.propose("census", {"kind": "gaussian", "sigma": 3.0}, title="more", user="ana")
    add_user(census, "val", role="approver", password="s3cret-Passw0rd!", actor="admin")
    runner = CliRunner()
    said = []
    for args in (["status", "census"], ["check", "census", "--gaussian", "4"],
                 ["propose", "census", "--gaussian", "4", "--title", "t", "--user", "ana"]):
        r = runner.invoke(app, ["ledger", "--db", census.url, *args], env={"COLUMNS": "200"})
        assert r.exit_code == 0, r.output
        said.append(r.output)
    c = TestClient(create_app(ledger_url=census.url))
    assert c.post("/api/ledger/login", json={"username": "val", "password": "s3cret-Passw0rd!"}).status_code == 200
    for path in ("/ledger", "/ledger/d/census", "/ledger/queue", "/ledger/r/2"):
        page = c.get(path)
        assert page.status_code == 200, path
        said.append(" ".join(unescape(re.sub(r"<[^>]+>", " ", page.text)).split()))
    for text in said:
        assert not short.search(text), short.search(text).group(0)
    assert "notice threshold exceeded: ε 0.7256 > 0.5 at δ = 1e-05" in said[0] + said[4]
    assert "at δ = 1e-05, ε = " in said[4] and "at δ = 1e-06" in said[4]
    assert "ε at δ = 1e-05" in said[0] and "ε at δ = 1e-06" in said[0]


def test_the_reference_delta_is_spelled_as_the_formatter_spells_it():
    # a literal in the CLI (its --help imports no maths), equal to what the formatter writes
    from fdpkit.cli.ledger import REF_DELTA
    from fdpkit.cli._common import fmt_num

    assert REF_DELTA == fmt_num(1e-5)
