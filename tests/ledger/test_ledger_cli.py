"""``fdpkit ledger`` through typer's CliRunner: the command names external checks use
(``--db`` before or after the subcommand, ``--format json``), exit codes 0/1/2."""

import json

import pytest
from typer.testing import CliRunner

from fdpkit.cli import app

runner = CliRunner()


def run(*args, input=None):
    return runner.invoke(app, [str(a) for a in args], input=input)


@pytest.fixture
def db(ledger_url):
    r = run("ledger", "--db", ledger_url, "init")
    assert r.exit_code == 0, r.output
    return ledger_url


def test_documented_flow(db, tmp_path):
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"kind": "gaussian", "sigma": 2.0}))
    assert run("ledger", "--db", db, "dataset", "add", "census", "--unit", "one person").exit_code == 0
    r = run("ledger", "--db", db, "propose", "census", "--mechanism", spec, "--title", "T", "--user", "ana")
    assert r.exit_code == 0, r.output
    rid = int(r.stdout.strip().splitlines()[0])
    r = run("ledger", "--db", db, "approve", rid, "--user", "bob")
    assert r.exit_code == 0, r.output
    r = run("ledger", "release", rid, "--user", "bob", "--db", db)  # --db after the subcommand
    assert r.exit_code == 0, r.output
    r = run("ledger", "--db", db, "status", "census", "--format", "json")
    assert r.exit_code == 0, r.output
    st = json.loads(r.stdout)
    assert st["mu"] == 0.5 and st["regret"] == 0.0 and st["released_count"] == 1
    assert st["epsilon"] == pytest.approx(1.9931, abs=1e-4)
    r = run("ledger", "--db", db, "verify")
    assert r.exit_code == 0 and "intact" in r.stdout
    r = run("ledger", "verify", "--db", db, "--format", "json")
    assert r.exit_code == 0 and json.loads(r.stdout)["ok"] is True
    r = run("ledger", "--db", db, "propose", "census", "--gaussian", "3", "--title", "T2", "--format", "json")
    assert r.exit_code == 0 and json.loads(r.stdout)["id"] == rid + 1
    r = run("ledger", "--db", db, "history", "census", "--format", "json")
    assert [e["kind"] for e in json.loads(r.stdout)][-1] == "release.proposed"


@pytest.mark.parametrize("backend", ["sqlite"])
def test_every_command_and_errors(tmp_path, backend):
    db = str(tmp_path / "l.sqlite")
    assert run("ledger", "init", "--db", db, "--format", "json").exit_code == 0
    assert run("ledger", "--db", db, "dataset", "add", "census", "--unit", "one person", "--user", "admin").exit_code == 0
    r = run("ledger", "--db", db, "dataset", "list", "--format", "json")
    assert json.loads(r.stdout)[0]["unit"] == "one person"
    r = run("ledger", "--db", db, "threshold", "set", "census", "--level", "warning", "--mu", "1.5", "--format", "json")
    assert r.exit_code == 0 and json.loads(r.stdout)["value"] == 1.5
    r = run("ledger", "--db", db, "threshold", "set", "census", "--level", "hard", "--epsilon", "3", "--delta", "1")
    assert r.exit_code == 2 and r.stderr.startswith("error: delta") and len(r.stderr.strip().splitlines()) == 1
    r = run("ledger", "--db", db, "propose", "census", "--noise-multiplier", "3", "--sample-rate", "0.02",
            "--steps", "20", "--title", "sgd", "--user", "ana")
    rid = int(r.stdout.strip())
    r = run("ledger", "--db", db, "check", "census", "--laplace", "2", "--format", "json")
    assert r.exit_code == 0 and json.loads(r.stdout)["after"]["count"] == 1
    assert run("ledger", "--db", db, "approve", rid, "--user", "bob", "--no-report").exit_code == 0
    r = run("ledger", "--db", db, "approve", rid, "--user", "bob", "--no-report")
    assert r.exit_code == 2 and "only a proposed" in r.stderr
    assert run("ledger", "--db", db, "release", rid, "--user", "bob").exit_code == 0
    r = run("ledger", "--db", db, "propose", "census", "--spec", '{"kind": "gaussian", "sigma": 0.4}',
            "--title", "huge", "--user", "ana")
    big = int(r.stdout.strip())
    assert run("ledger", "--db", db, "approve", big, "--user", "bob", "--no-report").exit_code == 0
    r = run("ledger", "--db", db, "release", big, "--user", "bob")
    assert r.exit_code == 2 and "hard limit" in r.stderr
    r = run("ledger", "--db", db, "release", big, "--user", "bob", "--override", "signed off")
    assert r.exit_code == 0 and "override" in r.stdout
    r = run("ledger", "--db", db, "propose", "census", "--gaussian", "9", "--title", "no", "--user", "ana")
    rej = int(r.stdout.strip())
    assert run("ledger", "--db", db, "reject", rej, "--user", "bob", "--comment", "no").exit_code == 0
    r = run("ledger", "--db", db, "release", rej, "--user", "bob")
    assert r.exit_code == 2 and "rejected" in r.stderr
    r = run("ledger", "--db", db, "status", "census")
    assert r.exit_code == 0 and "ε sum" in r.stdout
    r = run("ledger", "--db", db, "timeline", "census", "--format", "csv", "--plot", tmp_path / "t.png")
    assert r.exit_code == 0 and r.stdout.startswith("period start") and (tmp_path / "t.png").stat().st_size > 1000
    r = run("ledger", "--db", db, "timeline", "census")
    assert r.exit_code == 0
    for fmt in ("json", "csv", "pdf", "html"):
        out = tmp_path / f"ledger.{fmt}"
        r = run("ledger", "--db", db, "export", "census", "--format", fmt, "--output", out)
        assert r.exit_code == 0, r.output
        assert out.stat().st_size > 100
    assert json.loads((tmp_path / "ledger.json").read_text())["status"]["released_count"] == 2
    assert (tmp_path / "ledger.pdf").read_bytes().startswith(b"%PDF")
    r = run("ledger", "--db", db, "user", "add", "ana", "--role", "analyst", "--password-stdin",
            input="correct horse battery\n")
    assert r.exit_code == 0 and "correct horse" not in r.output
    r = run("ledger", "--db", db, "user", "add", "eve", "--role", "boss", "--password-stdin", input="longpassword\n")
    assert r.exit_code == 2 and "role" in r.stderr
    r = run("ledger", "--db", db, "status", "nope")
    assert r.exit_code == 2 and "unknown" in r.stderr
    r = run("ledger", "--db", db, "propose", "census", "--spec", "{bad", "--title", "x")
    assert r.exit_code == 2 and "JSON" in r.stderr
    r = run("ledger", "--db", "postgresql+psycopg://nobody@/nodb?host=/nonexistent", "status", "census")
    assert r.exit_code == 2 and r.stderr.startswith("error: database error")
    # tamper -> verify exit 1 naming the first broken event
    import sqlite3

    con = sqlite3.connect(db)
    con.execute("UPDATE releases SET title = 'forged' WHERE id = 1")
    con.commit()
    con.close()
    r = run("ledger", "--db", db, "verify")
    assert r.exit_code == 1 and "BROKEN at event" in r.stdout and "releases/1" in r.stdout
