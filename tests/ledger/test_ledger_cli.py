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
    r = run("ledger", "release", rid, "--user", "bob", "--yes", "--db", db)  # --db after the subcommand
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
    # lifting the hard limit (ε 8 by default) needs a second person; lowering it does not
    r = run("ledger", "--db", db, "threshold", "set", "census", "--level", "hard", "--epsilon", "20", "--user", "admin")
    assert r.exit_code == 2 and "four-eyes: lifting the hard limit" in r.stderr and "--approver" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    r = run("ledger", "--db", db, "threshold", "set", "census", "--level", "hard", "--remove", "--user", "admin")
    assert r.exit_code == 2 and "four-eyes" in r.stderr
    r = run("ledger", "--db", db, "threshold", "set", "census", "--level", "hard", "--epsilon", "9", "--user", "admin",
            "--approver", "bob", "--format", "json")
    assert r.exit_code == 0 and json.loads(r.stdout)["value"] == 9
    assert run("ledger", "--db", db, "threshold", "set", "census", "--level", "hard", "--epsilon", "8",
               "--user", "admin").exit_code == 0
    r = run("ledger", "--db", db, "propose", "census", "--noise-multiplier", "3", "--sample-rate", "0.02",
            "--steps", "20", "--title", "sgd", "--user", "ana")
    rid = int(r.stdout.strip())
    r = run("ledger", "--db", db, "check", "census", "--laplace", "2", "--format", "json")
    assert r.exit_code == 0 and json.loads(r.stdout)["after"]["count"] == 1
    assert run("ledger", "--db", db, "approve", rid, "--user", "bob", "--no-report").exit_code == 0
    r = run("ledger", "--db", db, "approve", rid, "--user", "bob", "--no-report")
    assert r.exit_code == 2 and "only a proposed" in r.stderr
    assert run("ledger", "--db", db, "release", rid, "--user", "bob", "--yes").exit_code == 0
    r = run("ledger", "--db", db, "propose", "census", "--spec", '{"kind": "gaussian", "sigma": 0.4}',
            "--title", "huge", "--user", "ana")
    big = int(r.stdout.strip())
    assert run("ledger", "--db", db, "approve", big, "--user", "bob", "--no-report").exit_code == 0
    r = run("ledger", "--db", db, "release", big, "--user", "bob", "--yes")
    assert r.exit_code == 2 and "hard limit" in r.stderr
    assert f"`fdpkit ledger release {big} --override REASON`" in r.stderr  # what to do next
    assert len(r.stderr.strip().splitlines()) == 1
    r = run("ledger", "--db", db, "release", big, "--user", "bob", "--yes", "--override", "signed off")
    assert r.exit_code == 0 and "override" in r.stdout
    r = run("ledger", "--db", db, "propose", "census", "--gaussian", "9", "--title", "no", "--user", "ana")
    rej = int(r.stdout.strip())
    assert run("ledger", "--db", db, "reject", rej, "--user", "bob", "--comment", "no").exit_code == 0
    r = run("ledger", "--db", db, "release", rej, "--user", "bob", "--yes")
    assert r.exit_code == 2 and "rejected" in r.stderr
    r = run("ledger", "--db", db, "status", "census")
    assert r.exit_code == 0 and "ε sum" in r.stdout
    # the PLD curve is a lower bound, the printed figures upper bounds: not "PLD (lower)"
    assert "PLD (pessimistic)" in r.stdout and "(lower)" not in r.stdout
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


# ---------------------------------------------------------------------- issue 24
def test_missing_db_file_is_an_error_but_for_init(tmp_path):
    typo = tmp_path / "typo" / "l.sqllite"
    for cmd in (["verify"], ["head"], ["dataset", "list"], ["history"], ["status", "census"]):
        r = run("ledger", "--db", typo, *cmd)
        assert r.exit_code == 2 and "no ledger at" in r.output, (cmd, r.output)
    assert not typo.exists() and not typo.parent.exists()  # nothing was created
    assert run("ledger", "--db", tmp_path / "new.sqlite", "init").exit_code == 0
    assert run("ledger", "--db", tmp_path / "new.sqlite", "verify").exit_code == 0


def test_head_and_verify_anchor(db):
    assert run("ledger", "--db", db, "dataset", "add", "census", "--unit", "one person").exit_code == 0
    r = run("ledger", "--db", db, "head")
    assert r.exit_code == 0, r.output
    anchor = r.stdout.strip()
    seq, h = anchor.split(":")
    assert int(seq) == 1 and len(h) == 64
    r = run("ledger", "--db", db, "verify", "--anchor", anchor)
    assert r.exit_code == 0 and "anchor 1 found" in r.stdout, r.output
    r = run("ledger", "--db", db, "verify", "--anchor", f"5:{h}", "--format", "json")
    assert r.exit_code == 1 and json.loads(r.stdout)["ok"] is False
    r = run("ledger", "--db", db, "verify", "--anchor", "junk")
    assert r.exit_code == 2 and "anchor" in r.output
    r = run("ledger", "--db", db, "head", "--format", "json")
    assert json.loads(r.stdout)["anchor"] == anchor


def test_user_management_commands(db):
    assert run("ledger", "--db", db, "user", "add", "root", "--role", "admin", "--password-stdin",
               input="root-password\n").exit_code == 0
    assert run("ledger", "--db", db, "user", "add", "ana", "--role", "analyst", "--password-stdin",
               input="ana-password\n").exit_code == 0
    r = run("ledger", "--db", db, "user", "deactivate", "ana", "--reason", "left", "--user", "root")
    assert r.exit_code == 0 and "deactivated" in r.stdout, r.output
    r = run("ledger", "--db", db, "user", "activate", "ana", "--format", "json")
    assert r.exit_code == 0 and json.loads(r.stdout)["active"] is True
    r = run("ledger", "--db", db, "user", "role", "ana", "--role", "approver")
    assert r.exit_code == 0 and "approver" in r.stdout
    r = run("ledger", "--db", db, "user", "reset-password", "ana", "--password-stdin", input="new-password\n")
    assert r.exit_code == 0
    r = run("ledger", "--db", db, "user", "deactivate", "root")
    assert r.exit_code == 2 and "last active admin" in r.output
    r = run("ledger", "--db", db, "user", "deactivate", "ghost")
    assert r.exit_code == 2 and "unknown" in r.output
    r = run("ledger", "--db", db, "user", "list", "--format", "json")
    assert [u["name"] for u in json.loads(r.stdout)] == ["ana", "root"]
    assert "password" not in r.stdout
    assert run("ledger", "--db", db, "verify").exit_code == 0


def test_outputs_are_safe_and_counts_checked(db, tmp_path):
    assert run("ledger", "--db", db, "dataset", "add", "census", "--unit", "one person").exit_code == 0
    out = tmp_path / "l.json"
    r = run("ledger", "--db", db, "export", "census", "--output", out)
    assert r.exit_code == 0 and "chain head" in r.output, r.output
    r = run("ledger", "--db", db, "export", "census", "--output", out)
    assert r.exit_code == 2 and "--force" in r.output
    assert run("--force", "ledger", "--db", db, "export", "census", "--output", out).exit_code == 0
    from fdpkit.cli._common import State

    State.force = False  # the CliRunner calls the app directly: fdpkit.cli.run resets it per run
    r = run("ledger", "--db", db, "export", "census", "--output", tmp_path / "no" / "such" / "l.json")
    assert r.exit_code == 2 and not (tmp_path / "no").exists()
    assert json.loads(out.read_text())["verify"]["head"].startswith("1:")
    plot = tmp_path / "t.svg"
    assert run("ledger", "--db", db, "timeline", "census", "--plot", plot).exit_code == 0
    r = run("ledger", "--db", db, "timeline", "census", "--plot", plot)
    assert r.exit_code == 2 and "--force" in r.output
    r = run("ledger", "--db", db, "timeline", "census", "--plot", tmp_path / "nodir" / "t.svg")
    assert r.exit_code == 2 and not (tmp_path / "nodir").exists()
    for bad in ("-1", "0"):
        r = run("ledger", "--db", db, "history", "--limit", bad)
        assert r.exit_code == 2 and "--limit" in r.output


def test_four_eyes_from_the_cli(db):
    assert run("ledger", "--db", db, "dataset", "add", "census", "--unit", "one person").exit_code == 0
    r = run("ledger", "--db", db, "propose", "census", "--gaussian", "3", "--title", "T", "--user", "ana")
    rid = r.stdout.strip().splitlines()[0]
    r = run("ledger", "--db", db, "approve", rid, "--user", "ana", "--no-report")
    assert r.exit_code == 2 and "four-eyes" in r.output
    r = run("ledger", "--db", db, "dataset", "four-eyes", "census", "--off")
    assert r.exit_code == 2 and "reason" in r.output
    r = run("ledger", "--db", db, "dataset", "four-eyes", "census", "--off", "--reason", "one-person team")
    assert r.exit_code == 0 and "off" in r.stdout
    assert run("ledger", "--db", db, "approve", rid, "--user", "ana", "--no-report").exit_code == 0
    assert run("ledger", "--db", db, "verify").exit_code == 0


def _approved(db, title="T"):
    run("ledger", "--db", db, "dataset", "add", "census", "--unit", "one person")
    r = run("ledger", "--db", db, "propose", "census", "--gaussian", "2", "--title", title, "--user", "ana")
    rid = int(r.stdout.strip().splitlines()[0])
    assert run("ledger", "--db", db, "approve", rid, "--user", "bob", "--no-report").exit_code == 0
    return rid


def test_release_without_a_terminal_does_not_ask(db):
    """Scripts (no terminal) release as they did before the y/N question existed."""
    rid = _approved(db)
    r = run("ledger", "--db", db, "release", rid, "--user", "bob")
    assert r.exit_code == 0 and "[y/N]" not in r.output, r.output
    assert json.loads(run("ledger", "--db", db, "status", "census", "--format", "json").stdout)["released_count"] == 1


def test_release_on_a_terminal_asks_y_n(db, monkeypatch):
    import fdpkit.cli.ledger as cli_ledger

    monkeypatch.setattr(cli_ledger, "_interactive", lambda: True)
    rid = _approved(db)
    r = run("ledger", "--db", db, "release", rid, "--user", "bob", input="\n")  # default: No
    assert r.exit_code == 1 and "not released" in r.stderr and "→" in r.stderr and "[y/N]" in r.stderr
    r = run("ledger", "--db", db, "release", rid, "--user", "bob", input="n\n")
    assert r.exit_code == 1
    assert json.loads(run("ledger", "--db", db, "status", "census", "--format", "json").stdout)["released_count"] == 0
    r = run("ledger", "--db", db, "release", rid, "--user", "bob", input="y\n")
    assert r.exit_code == 0 and "released" in r.stdout, r.output
    assert json.loads(run("ledger", "--db", db, "status", "census", "--format", "json").stdout)["released_count"] == 1


def test_propose_a_dpsgd_run_as_trained_under_the_datasets_relation(db):
    """``ledger propose`` and ``ledger check`` take the DP-SGD options of ``report dpsgd``
    (batch size, dataset size, epochs, sampling, relation, ...). Without --relation a run is
    accounted under the dataset's relation (zero-out for shuffled batches on an add-remove
    dataset); a relation the dataset does not declare is one line and exit 2."""
    from fdpkit.ledger import open_ledger
    from fdpkit.mechanisms import dpsgd

    run("ledger", "--db", db, "dataset", "add", "members", "--unit", "one person")
    run("ledger", "--db", db, "dataset", "add", "contents", "--unit", "one person", "--relation", "replace-one")
    trained = ["--noise-multiplier", "1.1", "--batch-size", "256", "--dataset-size", "6000", "--epochs", "2"]
    cases = [("members", [], dict(relation="add-remove")),
             ("members", ["--sampling", "shuffled"], dict(sampling="shuffled", relation="zero-out")),
             ("contents", [], dict(relation="replace-one")),
             ("contents", ["--sampling", "shuffled", "--drop-last"],
              dict(sampling="shuffled", relation="replace-one", drop_last=True))]
    with open_ledger(db) as led:
        for name, extra, want in cases:
            r = run("ledger", "--db", db, "check", name, *trained, *extra, "--format", "json")
            assert r.exit_code == 0, r.output
            r = run("ledger", "--db", db, "propose", name, *trained, *extra, "--title", "run", "--format", "json")
            assert r.exit_code == 0, r.output
            spec = json.loads(led.release_info(json.loads(r.stdout)["id"]).spec)
            assert spec == json.loads(json.dumps(dpsgd(1.1, batch_size=256, dataset_size=6000, epochs=2,
                                                       **want).to_dict()))
        n = len(led.releases())
    for args in (["members", *trained, "--sampling", "shuffled", "--relation", "replace-one"],
                 ["contents", *trained, "--relation", "add-remove"]):
        for cmd in (["propose", *args, "--title", "run"], ["check", *args]):
            r = run("ledger", "--db", db, *cmd)
            assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1, r.output
            assert r.stderr.startswith("error: relation ") and "does not fit dataset" in r.stderr
    r = run("ledger", "--db", db, "propose", "members", "--gaussian", "2", "--noise-multiplier", "1", "--title", "x")
    assert r.exit_code == 2 and "exactly one of" in r.stderr
    r = run("ledger", "--db", db, "propose", "members", "--noise-multiplier", "1.1", "--sample-rate", "0.01",
            "--title", "x")
    assert r.exit_code == 2 and "--steps or --epochs" in r.stderr  # the options as typed (was "steps or epochs")
    with open_ledger(db) as led:
        assert len(led.releases()) == n


def test_lift_requests_from_the_command_line(db):
    # the two-step lift (the web's way) from the CLI: request, refused self-approval, approval by another
    assert run("ledger", "--db", db, "dataset", "add", "census", "--unit", "one person").exit_code == 0
    r = run("ledger", "--db", db, "lift", "request", "census", "--epsilon", "20", "--reason", "renewed", "--user",
            "admin", "--format", "json")
    assert r.exit_code == 0, r.output
    lid = json.loads(r.stdout)["id"]
    assert json.loads(r.stdout)["state"] == "pending"
    r = run("ledger", "--db", db, "lift", "approve", lid, "--user", "admin")
    assert r.exit_code == 2 and "cannot approve it" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = run("ledger", "--db", db, "lift", "list", "census")
    assert r.exit_code == 0 and "renewed" in r.stdout and "pending" in r.stdout
    r = run("ledger", "--db", db, "lift", "approve", lid, "--user", "bob")
    assert r.exit_code == 0 and "approved" in r.stdout, r.output
    r = run("ledger", "--db", db, "status", "census", "--format", "json")
    hard = [t for t in json.loads(r.stdout)["thresholds"] if t["level"] == "hard"]
    assert hard[0]["value"] == 20
    r = run("ledger", "--db", db, "lift", "request", "census", "--remove", "--reason", "x", "--user", "admin")
    assert r.exit_code == 0, r.output
    r = run("ledger", "--db", db, "lift", "reject", "2", "--user", "bob")
    assert r.exit_code == 2 and "comment must be" in r.stderr
    assert run("ledger", "--db", db, "lift", "reject", "2", "--user", "bob", "--comment", "no").exit_code == 0
    r = run("ledger", "--db", db, "lift", "list", "--all", "--format", "json")
    assert [x["state"] for x in json.loads(r.stdout)] == ["approved", "rejected"]
    assert run("ledger", "--db", db, "lift", "request", "census", "--reason", "x").exit_code == 2
    assert run("ledger", "--db", db, "verify").exit_code == 0


def test_timeline_that_fails_writes_no_file(db, tmp_path):
    assert run("ledger", "--db", db, "dataset", "add", "census", "--unit", "one person").exit_code == 0
    out = tmp_path / "out"
    out.mkdir()
    (out / "old.csv").write_text("kept\n")
    before = sorted(p.name for p in out.iterdir())
    cases = [
        # the plot was written, then the existing --output refused
        (["--format", "csv", "--plot", out / "t.png", "--output", out / "old.csv"], "--output"),
        (["--format", "csv", "--plot", out / "same.svg", "--output", out / "same.svg"], "name the same file"),
        # --plot with another suffix said "format must be one of svg, png, pdf" (no option named)
        (["--plot", out / "t.csv"], "--plot must end in"),
        # --output with the text table was ignored without a word (exit 0, nothing written)
        (["--output", out / "t.txt"], "--output needs --format json or csv"),
    ]
    for args, match in cases:
        r = run("ledger", "--db", db, "timeline", "census", *args)
        assert r.exit_code == 2 and match in r.output and r.output.count("\n") == 1, (args, r.output)
        assert sorted(p.name for p in out.iterdir()) == before, args
    assert (out / "old.csv").read_text() == "kept\n"
