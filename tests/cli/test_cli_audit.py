"""``fdpkit audit`` and ``fdpkit audit simulate`` through typer's CliRunner."""

import json

import pytest
from typer.testing import CliRunner

from fdpkit.cli import app

runner = CliRunner()
GAUSS_1 = '{"kind": "gaussian", "sigma": 1.0}'
GAUSS_HALF = '{"kind": "gaussian", "sigma": 0.5}'


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def score_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("scores")
    r = run("--quiet", "audit", "simulate", "-m", GAUSS_HALF, "--trials", "3000", "--seed", "1",
            "--members-out", d / "m.csv", "--nonmembers-out", d / "n.csv", "-f", "json")
    assert r.exit_code == 0, r.output
    return d / "m.csv", d / "n.csv"


def test_help_lists_audit():
    r = run("--help")
    assert r.exit_code == 0 and "audit" in r.output
    r = run("audit", "--help")
    assert r.exit_code == 0 and "simulate" in r.output and "--members" in r.output


def test_audit_scores_json_and_violation(score_files):
    m, n = score_files
    r = run("audit", "--members", m, "--nonmembers", n, "--mechanism", GAUSS_1, "-f", "json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["violation"] is True and data["mu_lower"] > 1.0
    assert data["bounds"]["correction"] == "Bonferroni"
    r = run("audit", "--members", m, "--nonmembers", n, "--mechanism", GAUSS_1, "--fail-on-violation")
    assert r.exit_code == 1 and "VIOLATION" in r.stdout
    r = run("audit", "--members", m, "--nonmembers", n, "--mechanism", GAUSS_HALF)
    assert r.exit_code == 0 and "No violation" in r.stdout


def test_audit_against_a_json_privacy_report(tmp_path, score_files):
    report = tmp_path / "r.json"
    r = run("--quiet", "report", "gaussian", "--sigma", "1", "--format", "json", "--output", report)
    assert r.exit_code == 0, r.output
    m, n = score_files
    r = run("audit", "--members", m, "--nonmembers", n, "--mechanism", report, "-f", "json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["violation"] is True


def test_audit_spec_file_counts_and_formats(tmp_path, score_files):
    spec = tmp_path / "g.json"
    spec.write_text(GAUSS_1)
    counts = tmp_path / "c.csv"
    counts.write_text("true_positives,false_positives,members,nonmembers\n900,100,1000,1000\n500,10,1000,1000\n")
    r = run("audit", "--counts", counts, "--mechanism", spec, "-f", "json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["bounds"]["thresholds_used"] == 2
    m, n = score_files
    for fmt in ("md", "csv"):  # html and pdf: tests/report/test_report_audit.py
        out = tmp_path / f"a.{fmt}"
        r = run("--quiet", "audit", "--members", m, "--nonmembers", n, "-f", fmt, "-o", out)
        assert r.exit_code == 0, r.output
        assert out.stat().st_size > 200
    r = run("audit", "--members", m, "--nonmembers", n, "--plot", tmp_path / "p.svg")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "p.svg").read_text().lstrip().startswith("<?xml")
    # the output rules of `fdpkit plot -o`, before any work (the audit wrote over files and
    # into missing folders): an existing file needs --force, a missing folder and a bad
    # suffix are refused, naming the option
    for args, needle in ((("--plot", tmp_path / "p.svg"), "--plot"), (("-f", "md", "-o", tmp_path / "a.md"), "--output"),
                         (("--plot", tmp_path / "nope" / "p.svg"), "does not exist"),
                         (("--plot", tmp_path / "p.txt"), "--plot must end in .svg, .png or .pdf")):
        r = run("audit", "--members", m, "--nonmembers", n, *args)
        assert r.exit_code == 2 and needle in r.output, r.output
    assert not (tmp_path / "nope").exists() and not (tmp_path / "p.txt").exists()
    r = run("--force", "audit", "--members", m, "--nonmembers", n, "--plot", tmp_path / "p.svg")
    assert r.exit_code == 0, r.output


def test_simulate_text():
    r = run("audit", "simulate", "-m", '{"kind": "dpsgd", "noise_multiplier": 2, "sample_rate": 0.1, "steps": 10}',
            "--trials", "2000", "--seed", "3")
    assert r.exit_code == 0, r.output
    assert "No violation" in r.stdout and "without noise" in r.stdout


@pytest.mark.parametrize("args, needle", [
    (["audit"], "--members"),
    (["audit", "--members", "@m"], "--members"),
    (["audit", "--members", "@bad", "--nonmembers", "@n"], "not a number"),
    (["audit", "--members", "@empty", "--nonmembers", "@n"], "no scores"),
    (["audit", "--members", "@underscore", "--nonmembers", "@n"], "u.csv, line 3: '1_000' is not a plain decimal"),
    (["audit", "--members", "@hex", "--nonmembers", "@n"], "x.csv, line 1: '0x10' is not a plain decimal"),
    (["audit", "--members", "@m", "--nonmembers", "@n", "--confidence", "1.5"], "confidence"),
    (["audit", "--members", "@m", "--nonmembers", "@n", "--mechanism", "{oops"], "JSON"),
    (["audit", "--members", "@m", "--nonmembers", "@n", "--mechanism", "/nonexistent/spec.json"], "spec.json"),
    (["audit", "--members", "@m", "--nonmembers", "@n", "-f", "xml"], "--format"),
    (["audit", "--counts", "@badcounts"], "true_positives"),
    (["audit", "--counts", "@toomany"], "true_positives must be <= members"),
    (["audit", "simulate", "-m", '{"kind": "pure_dp", "epsilon": 1}'], "simulated"),
    (["audit", "simulate", "-m", GAUSS_1, "--trials", "0"], "trials"),
])
def test_bad_input_exits_2_with_one_line(args, needle, tmp_path, score_files):
    files = {"m": score_files[0], "n": score_files[1], "bad": tmp_path / "bad.csv", "empty": tmp_path / "e.csv",
             "badcounts": tmp_path / "bc.csv", "toomany": tmp_path / "tm.csv", "underscore": tmp_path / "u.csv",
             "hex": tmp_path / "x.csv"}
    files["underscore"].write_text("score\n1.0\n1_000\n")  # float() read 1000
    files["hex"].write_text("0x10\n1.0\n")  # skipped as a header
    files["bad"].write_text("score\n1.0\nabc\n")
    files["empty"].write_text("score\n\n")
    files["badcounts"].write_text("fp,members,nonmembers\n1,2,3\n")
    files["toomany"].write_text("tp,fp,members,nonmembers\n11,1,10,10\n")
    r = run(*[files.get(a[1:], a) if a.startswith("@") else a for a in args])
    assert r.exit_code == 2, r.output
    lines = [line for line in r.stderr.strip().splitlines() if line.strip()]
    assert len(lines) == 1 and needle in lines[0], r.stderr


@pytest.mark.parametrize("fmt_args", [["-o", "out.txt"], ["-f", "pdf"]])
def test_format_without_its_output_fails_before_writing_anything(tmp_path, score_files, fmt_args):
    # text with --output, or PDF without it, exited 2 after writing --plot (and --members-out)
    m, n = score_files
    fmt_args = [tmp_path / a if a.endswith(".txt") else a for a in fmt_args]
    r = run("audit", "--members", m, "--nonmembers", n, "--plot", tmp_path / "roc.svg", *fmt_args)
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1
    r = run("audit", "simulate", "-m", GAUSS_1, "--trials", "200", "--plot", tmp_path / "sim.svg",
            "--members-out", tmp_path / "m.csv", *fmt_args)
    assert r.exit_code == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_score_limits_are_set_in_one_place_and_stated(tmp_path, monkeypatch):
    """The limits on scores per class differed per surface (web 10^6, CLI 5*10^6, Python 10^7),
    set in three modules, and the errors stated only the surface's own number. Now all are
    set in fdpkit.audit.io (CLI = Python API = the array cap, web 10^6) and every error
    beyond one states them all."""
    from fdpkit._numerics import MAX_ARRAY_SIZE
    from fdpkit.audit import empirical
    from fdpkit.audit import io as audit_io
    from fdpkit.web.routers import audit as audit_router

    assert audit_io.MAX_SCORES == audit_io.MAX_ROWS == empirical.MAX_SCORES == MAX_ARRAY_SIZE == 10**7
    assert audit_router.MAX_SCORES == audit_io.MAX_SCORES_WEB == 10**6
    monkeypatch.setattr(audit_io, "MAX_SCORES", 3)  # the CLI reads at most MAX_SCORES per file
    (tmp_path / "m.csv").write_text("score\n1\n2\n3\n4\n")
    (tmp_path / "n.csv").write_text("score\n0\n1\n2\n")
    r = run("audit", "--members", tmp_path / "m.csv", "--nonmembers", tmp_path / "n.csv")
    assert r.exit_code == 2, r.output
    lines = [line for line in r.stderr.strip().splitlines() if line.strip()]
    assert len(lines) == 1, r.stderr
    assert "m.csv has more than 3 scores" in lines[0] and "1,000,000 on the web server" in lines[0], lines[0]


@pytest.mark.parametrize("extra, match", [
    # the member scores were written, then the non-member file (the same name) refused as existing
    (lambda d: ["--members-out", d / "s.csv", "--nonmembers-out", d / "s.csv"],
     "--members-out and --nonmembers-out name the same file"),
    (lambda d: ["-f", "pdf", "-o", d / "r.pdf", "--plot", d / "r.pdf"], "--output and --plot name the same file"),
    # a refused --confidence or --delta came after the score files were written
    (lambda d: ["--members-out", d / "m.csv", "--confidence", "1.5"], "confidence must be in"),
    (lambda d: ["--nonmembers-out", d / "n.csv", "--delta", "2"], "delta must be in"),
])
def test_simulate_that_fails_writes_no_file(extra, match, tmp_path):
    r = run("--quiet", "audit", "simulate", "-m", GAUSS_1, "--trials", "200", *extra(tmp_path))
    assert r.exit_code == 2 and match in r.output and r.output.count("\n") == 1, r.output
    assert list(tmp_path.iterdir()) == []


def test_score_files_that_never_end_are_refused_fast(tmp_path):
    # `--members /dev/zero` read 6 GB in 8 s (Path.read_bytes) before failing; a device is now
    # refused unread and a file is read in chunks, refused at its first NUL byte
    import time

    ok = tmp_path / "ok.csv"
    ok.write_text("score\n0.1\n0.2\n")
    for path, match in (("/dev/zero", "is a device, not a file"), ("/dev/urandom", "is a device, not a file")):
        start = time.perf_counter()
        r = run("audit", "--members", path, "--nonmembers", ok, "-m", GAUSS_1)
        assert r.exit_code == 2 and match in r.output and r.output.count("\n") == 1, r.output
        assert time.perf_counter() - start < 5.0
    late_nul = tmp_path / "late.csv"
    late_nul.write_bytes(b"score\n" + b"0.5\n" * 2_000_000 + b"\x00")
    r = run("audit", "--members", late_nul, "--nonmembers", ok, "-m", GAUSS_1)
    assert r.exit_code == 2 and "contains NUL bytes" in r.output
    r = run("report", "dpsgd", "--opacus-history", "/dev/zero")
    assert r.exit_code == 2 and "is a device, not a file" in r.output


def test_score_file_from_a_pipe_is_read(tmp_path):
    import os
    import threading

    fifo = tmp_path / "members"
    os.mkfifo(fifo)
    ok = tmp_path / "ok.csv"
    ok.write_text("score\n0.1\n0.2\n")
    writer = threading.Thread(target=lambda: fifo.write_text("score\n0.9\n0.8\n"))
    writer.start()
    r = run("audit", "--members", fifo, "--nonmembers", ok, "-m", GAUSS_1, "-f", "json")
    writer.join(10)
    assert r.exit_code == 0, r.output
