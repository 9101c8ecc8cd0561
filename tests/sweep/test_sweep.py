"""Sweeps: executors agree, resume after a kill, studies match privacy_report, bad input."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import fdpkit as fp
from fdpkit.sweep import design_table, regret_map, rule_of_thumb
from fdpkit.sweep import run_sweep as sweep
from fdpkit.sweep.evaluate import same_numbers
from fdpkit.sweep.store import partial_dir, read_table

#: Coarse grid so the suite stays fast; the numbers are still certified (just looser).
DISC = 1e-3
GRID = dict(noise_multiplier=[1.0, 2.0], sample_rate=[0.01, 0.05], steps=[50, 200])
#: mu of a sweep row equals the standalone report's to the last digit (same computation).
EXACT = 0.0


def _strip(rows):
    return [{k: v for k, v in r.items() if k != "seconds"} for r in rows]


def test_row_equals_privacy_report():
    r = sweep([2.0], [0.1], [400], discretization=DISC, executor="inprocess", fprs=(1e-3, 1e-2))
    rep = fp.privacy_report(fp.dpsgd(2.0, 0.1, 400), deltas=(1e-5,), fprs=(1e-3, 1e-2), discretization=DISC)
    row = r[0]
    assert row["mu"] == rep.mu and row["regret"] == rep.regret
    assert row["epsilon"] == rep.epsilon_for_delta(1e-5)
    assert row["tpr_at_0.001"] == rep.tpr(1e-3) and row["tpr_at_0.01"] == rep.tpr(1e-2)
    assert row["advantage"] == rep.advantage
    assert set(["noise_multiplier", "sample_rate", "steps", "mu", "regret", "epsilon"]) <= set(row)


def test_executors_agree_to_the_last_digit():
    local = sweep(**GRID, discretization=DISC, executor="inprocess")
    procs = sweep(**GRID, discretization=DISC, executor="processes", workers=2)
    dask = sweep(**GRID, discretization=DISC, dask_local=2)
    assert dask.executor == "dask" and procs.executor == "processes"
    assert len(local) == 8
    for a, b, c in zip(local, procs, dask):
        assert same_numbers(a, b) and same_numbers(a, c)


def test_output_csv_and_parquet_round_trip(tmp_path):
    for name in ("t.csv", "t.parquet"):
        out = tmp_path / name
        r = sweep(**GRID, discretization=DISC, executor="inprocess", output=out)
        assert out.is_file() and not partial_dir(out).exists()
        back = read_table(out)
        assert _strip(back) == _strip(r.rows)
        again = sweep(**GRID, discretization=DISC, executor="inprocess", output=out)
        assert again.computed == 0 and again.reused == 8  # nothing recomputed
        assert _strip(again.rows) == _strip(r.rows)


def test_records_and_columns():
    r = sweep([1.0], [0.01], [10, 20], discretization=DISC, executor="inprocess", metrics=["mu", "epsilon"])
    rec = r.to_records()
    assert list(rec.dtype.names) == r.columns
    assert rec["steps"].tolist() == [10, 20]
    assert (r.column("mu") > 0).all()


def test_explicit_rows_and_training_inputs():
    rows = [{"noise_multiplier": 1.0, "sample_rate": 0.01, "steps": 100},
            {"noise_multiplier": 2.0, "sample_rate": 0.02, "steps": 50}]
    r = sweep(rows=rows, discretization=DISC, executor="inprocess", metrics=["mu"])
    assert [x["noise_multiplier"] for x in r] == [1.0, 2.0]


def _cli(*args, **kw):
    env = {**os.environ, "PYTHONPATH": str(Path(fp.__file__).resolve().parents[1])}
    return subprocess.run([sys.executable, "-m", "fdpkit.cli", *args], capture_output=True, text=True, env=env, **kw)


def _invoke(*args):
    from typer.testing import CliRunner

    from fdpkit.cli import app

    return CliRunner().invoke(app, list(args))


def test_cli_names_and_columns(tmp_path):
    out = tmp_path / "s.csv"
    res = _invoke("sweep", "--noise-multiplier", "1,2", "--sample-rate", "0.01,0.1", "--steps", "100,400",
               "--discretization", str(DISC), "--executor", "inprocess", "--output", str(out))
    assert res.exit_code == 0, res.output
    with out.open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 8
    for col in ("noise_multiplier", "sample_rate", "steps", "mu", "regret", "epsilon"):
        assert col in rows[0]


def test_resume_after_kill_equals_uninterrupted(tmp_path):
    out = tmp_path / "r.csv"
    args = ("sweep", "--noise-multiplier", "0.8,1,1.5,2,3,4", "--sample-rate", "0.02,0.05", "--steps", "100,300",
            "--discretization", str(DISC), "--executor", "inprocess", "--output", str(out), "--quiet")
    env = {**os.environ, "PYTHONPATH": str(Path(fp.__file__).resolve().parents[1])}
    proc = subprocess.Popen([sys.executable, "-m", "fdpkit.cli", "--quiet", *args[:-1]], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    part = partial_dir(out)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if part.is_dir() and len(list(part.glob("part-*.json"))) >= 2:
            break
        time.sleep(0.02)
    killed = proc.poll() is None
    if killed:
        proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    if killed:
        assert not out.exists() and part.is_dir()  # output never half-written
    res = _cli("--quiet", *args[:-1])
    assert res.returncode == 0, res.stderr
    assert not part.exists()
    full = sweep(noise_multiplier=[0.8, 1, 1.5, 2, 3, 4], sample_rate=[0.02, 0.05], steps=[100, 300],
                 discretization=DISC, executor="inprocess")
    assert _strip(read_table(out)) == _strip(full.rows)


def test_fig4_points_match_privacy_report():
    r = regret_map([2.0, 4.0], [400], [0.1], discretization=DISC, executor="inprocess")
    for row in r:
        rep = fp.privacy_report(fp.dpsgd(row["noise_multiplier"], 0.1, 400), discretization=DISC)
        assert row["regret"] == rep.regret and row["mu"] == rep.mu


def test_rule_of_thumb_counterexample():
    study = rule_of_thumb([2.0], [400], [0.1], discretization=DISC, executor="inprocess")
    assert not study.holds
    assert study.counterexamples[0]["sample_rate"] == 0.1
    assert study.counterexamples[0]["regret"] > 0.01
    assert "does not hold" in study.summary()


def test_design_table_meets_target_on_the_safe_side():
    rows = design_table(mu=1.0, batch_size=[256], epochs=[2, 4], dataset_size=60000, discretization=DISC,
                        executor="inprocess")
    assert [r["epochs"] for r in rows] == [2, 4]
    for r in rows:
        assert r["mu"] <= 1.0
        assert r["noise_multiplier"] > 0
    assert rows[1]["noise_multiplier"] > rows[0]["noise_multiplier"]  # more epochs need more noise


@pytest.mark.parametrize("kwargs, match", [
    (dict(noise_multiplier=[], sample_rate=[0.1], steps=[10]), "noise_multiplier must not be empty"),
    (dict(noise_multiplier=[float("nan")], sample_rate=[0.1], steps=[10]), "noise_multiplier"),
    (dict(noise_multiplier=[-1.0], sample_rate=[0.1], steps=[10]), "noise_multiplier"),
    (dict(noise_multiplier=[1.0], sample_rate=[1.5], steps=[10]), "sample_rate"),
    (dict(noise_multiplier=[1.0], sample_rate=[0.1], steps=[10.5]), "steps"),
    (dict(noise_multiplier=[1.0], sample_rate=[0.1], steps=[10], metrics=["bogus"]), "unknown metric"),
    (dict(noise_multiplier=[1.0], sample_rate=[0.1], steps=[10], delta=1.0), "delta"),
    (dict(noise_multiplier=[1.0], sample_rate=[0.1], steps=[10], executor="gpu"), "executor"),
    (dict(noise_multiplier=[1.0], sample_rate=[0.1], steps=[10], workers=0), "workers"),
])
def test_bad_input(kwargs, match, tmp_path):
    out = tmp_path / "x.csv"
    with pytest.raises((ValueError, TypeError), match=match):
        sweep(**kwargs, output=out)
    assert not out.exists() and not partial_dir(out).exists()


def test_fprs_close_together_get_their_own_columns_and_tpr_needs_one(tmp_path):
    # ":g" named both tpr_at_0.001: one column, holding the TPR at the smaller FPR (below the
    # certified TPR at 0.001), and a table of one resumed for the other
    r = sweep([1.0], [0.01], [10], fprs=[0.001, 0.0009999999], discretization=DISC, executor="inprocess",
              metrics=["tpr"])
    row = r.rows[0]
    assert row["tpr_at_0.001"] > row["tpr_at_0.0009999999"]
    assert row["tpr_at_0.001"] == fp.tradeoff_curve(fp.dpsgd(1.0, 0.01, 10), discretization=DISC).tpr(0.001)
    out = tmp_path / "t.csv"
    sweep([1.0], [0.01], [10], fprs=[0.0009999999], discretization=DISC, executor="inprocess", metrics=["tpr"],
          output=out)
    with pytest.raises(ValueError, match="other metrics or FPRs"):
        sweep([1.0], [0.01], [10], fprs=[0.001], discretization=DISC, executor="inprocess", metrics=["tpr"],
              output=out)
    with pytest.raises(ValueError, match="fprs must list at least one FPR"):
        sweep([1.0], [0.01], [10], fprs=[], executor="inprocess", metrics=["mu", "tpr"])


@pytest.mark.parametrize("kwargs, match", [
    (dict(client=object(), executor="inprocess"), "client must be a dask.distributed.Client|runs on Dask"),
    (dict(scheduler="tcp://127.0.0.1:9", executor="processes"), "scheduler runs on Dask"),
    (dict(dask_local=1, executor="inprocess"), "dask_local runs on Dask"),
    (dict(scheduler="tcp://127.0.0.1:9", client=object()), "not client and scheduler"),
    (dict(client="tcp://127.0.0.1:9"), "client must be a dask.distributed.Client"),
])
def test_executor_arguments_that_would_be_ignored_are_refused(kwargs, match, tmp_path):
    # a Dask client, scheduler or cluster size with another executor was silently ignored (the
    # sweep ran in process); a client that is not one failed with an AttributeError after the checks
    with pytest.raises(fp.ParameterError, match=match):
        sweep([1.0], [0.1], [10], discretization=DISC, **kwargs)


@pytest.mark.parametrize("kwargs", [dict(workers=0), dict(dask_local=0), dict(executor="gpu")])
def test_design_table_checks_its_executor_arguments(kwargs):
    # workers=0 and dask_local=0 fell back silently to a pool of all cores
    with pytest.raises(fp.ParameterError):
        design_table(mu=1.0, batch_size=[10], epochs=[1], dataset_size=100, **kwargs)


@pytest.mark.parametrize("kwargs, parameter", [
    (dict(noise_multiplier=["1"], sample_rate=[0.1], steps=[10]), "noise_multiplier"),
    (dict(noise_multiplier=[1.0], sample_rate=[0.1], steps=[10**400]), "steps"),
    (dict(noise_multiplier=[1.0], sample_rate=[0.1], steps=[10], metrics=5), "metrics"),
    (dict(noise_multiplier=[1.0], sample_rate=[0.1], steps=[10], metrics=[1]), "metrics"),
    (dict(noise_multiplier=[1.0], sample_rate=[0.1], steps=[10], sampling=[1]), "sampling"),
    (dict(rows=["x"]), "rows"),
    (dict(rows=[]), "rows"),
    # session 13: a bare KeyError ('noise_multiplier'), "'int' object is not iterable", a TypeError
    # in str.join, a TypeError from Path(5), a plain ValueError
    (dict(rows=[{}]), "rows"),
    (dict(rows=[{"sample_rate": 0.1, "steps": 10}]), "rows"),
    (dict(sample_rate=[0.1], steps=[10]), "noise_multiplier"),
    (dict(rows=5), "rows"),
    (dict(rows={"noise_multiplier": 1.0, "sample_rate": 0.1, "steps": 10}), "rows"),
    (dict(rows=[{1: 2}]), "rows"),
    (dict(noise_multiplier=[1.0], sample_rate=[0.1], steps=[10], output=5), "output"),
    (dict(), "noise_multiplier"),
])
def test_bad_grid_values_name_their_argument(kwargs, parameter):
    # TypeError, OverflowError ("int too large to convert to float") and "'int' object is not
    # iterable" named no argument
    with pytest.raises(fp.ParameterError) as info:
        sweep(**kwargs, executor="inprocess")
    assert info.value.parameter == parameter and isinstance(info.value, ValueError)


def test_unreachable_scheduler_is_a_clear_error(tmp_path, monkeypatch):
    from fdpkit.sweep import executors

    monkeypatch.setattr(executors, "DASK_CONNECT_TIMEOUT", 1.0)
    out = tmp_path / "x.csv"
    with pytest.raises(fp.ParameterError, match="could not reach the Dask scheduler .* within 1 s") as info:
        sweep([1.0], [0.1], [10], scheduler="tcp://127.0.0.1:9", output=out)
    assert info.value.parameter == "scheduler" and not out.exists()


@pytest.mark.parametrize("address", ["foo", "", "http://127.0.0.1:1", "tcp://127.0.0.1:99999"])
def test_malformed_scheduler_is_refused_before_a_client_exists(address, tmp_path):
    # Client("foo") failed inside its constructor, and the half-built client timed out again
    # at interpreter exit ("Exception ignored in Client.__del__ ... TimeoutError") after the error
    out = tmp_path / "x.csv"
    with pytest.raises(fp.ParameterError, match="is not a Dask scheduler address") as info:
        sweep([1.0], [0.1], [10], scheduler=address, output=out)
    assert info.value.parameter == "scheduler" and not out.exists()
    res = _cli("sweep", "--noise-multiplier", "1", "--sample-rate", "0.1", "--steps", "10", "--scheduler", address,
               timeout=60)
    assert res.returncode == 2 and res.stderr.startswith("error: --scheduler")
    assert res.stderr.count("\n") == 1 and "Traceback" not in res.stderr, res.stderr


def test_scheduler_help_states_the_connect_timeout():
    from fdpkit.sweep import executors
    from fdpkit.vocabulary import DASK_CONNECT_TIMEOUT

    assert executors.DASK_CONNECT_TIMEOUT == DASK_CONNECT_TIMEOUT  # the one the client waits
    res = _invoke("sweep", "--help")
    assert f"gives up after {DASK_CONNECT_TIMEOUT:g} s" in " ".join(res.output.split())


def test_scheduler_help_reads_the_timeout_from_the_constant():
    # the help said "10 s" in its own words: a changed timeout left it stale
    script = ("import fdpkit.vocabulary as v\nv.DASK_CONNECT_TIMEOUT = 7.5\n"
              "from fdpkit.cli.sweep import SchedOpt\nprint(SchedOpt.help)")
    env = {**os.environ, "PYTHONPATH": str(Path(fp.__file__).resolve().parent.parent)}
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 0, res.stderr
    assert "gives up after 7.5 s without an answer" in res.stdout


def test_cli_bad_input_exit_2(tmp_path):
    for args in (["sweep", "--noise-multiplier", "1,x", "--sample-rate", "0.1", "--steps", "10"],
                 ["sweep", "--noise-multiplier", "1", "--sample-rate", "0.1", "--steps", "10", "--output",
                  str(tmp_path / "a.txt")],
                 ["sweep", "--noise-multiplier", "1", "--sample-rate", "2", "--steps", "10"]):
        res = _invoke(*args)
        assert res.exit_code == 2, (args, res.output)
        assert res.output.startswith("error: ") and res.output.count("\n") == 1


def test_shared_single_step_gives_the_standalone_numbers():
    r = sweep([1.0], [0.05], [50, 200, 400], discretization=DISC, executor="inprocess")
    for row in r:
        rep = fp.privacy_report(fp.dpsgd(1.0, 0.05, row["steps"]), discretization=DISC)
        assert row["mu"] == rep.mu and row["epsilon"] == rep.epsilon_for_delta(1e-5)


def test_default_discretization_is_the_library_rule(tmp_path):
    # no discretization: each row's is what privacy_report(discretization=None) chooses for
    # its setting (finer at a tiny sample rate, issue 29), stated in the output's metadata
    from fdpkit.sweep.store import read_metadata

    out = tmp_path / "rule.csv"
    r = sweep([4.0], [1e-3, 0.1], [10], executor="inprocess", metrics=["mu", "epsilon"], output=out)
    for row in r:
        rep = fp.privacy_report(fp.dpsgd(4.0, row["sample_rate"], 10))
        assert row["discretization"] == rep.provenance["discretization"]
        assert row["mu"] == rep.mu and row["epsilon"] == rep.epsilon_for_delta(1e-5)
    assert r[0]["discretization"] < 1e-4 == r[1]["discretization"]
    assert r.metadata["discretization"] is None and "library default" in r.metadata["discretization_rule"]
    assert read_metadata(out) == r.metadata
    given = sweep([4.0], [0.1], [10], discretization=DISC, executor="inprocess", metrics=["mu"],
                  output=tmp_path / "given.parquet")
    assert given.metadata == {"discretization": DISC, "discretization_rule": "given"}
    assert read_metadata(tmp_path / "given.parquet") == given.metadata


#: Existing files a sweep may not resume: it must refuse them, not replace them (issue: a
#: CSV of numbers, a notes file, an empty file and ragged rows were overwritten; a file that
#: is not UTF-8 failed with a codec message).
NOT_A_TABLE = {
    "numbers": (b"x,y\n1,2\n3,4\n", "without the columns noise_multiplier, delta, discretization"),
    "notes": (b"remember to buy milk\n", "without the columns"),
    "empty": (b"", "it is empty"),
    "ragged": (b"noise_multiplier,sample_rate,steps,delta,discretization\n1.0,0.01\n", "line 2 has 2 fields"),
    "not utf-8": (b"\xff\xfe\x00x", "not UTF-8 text"),
    "names": (b"name,age\nalice,30\n", "without the columns"),
}


@pytest.mark.parametrize("case", sorted(NOT_A_TABLE))
def test_existing_file_that_is_not_a_sweep_table_is_refused(case, tmp_path):
    data, why = NOT_A_TABLE[case]
    out = tmp_path / "t.csv"
    out.write_bytes(data)
    with pytest.raises(fp.ParameterError, match=f"^output .* is not a sweep table this sweep can resume .*{why}") as e:
        sweep([1.0], [0.01], [10], discretization=DISC, executor="inprocess", metrics=["mu"], output=out)
    assert e.value.parameter == "output"
    assert out.read_bytes() == data and sorted(p.name for p in tmp_path.iterdir()) == ["t.csv"]
    r = sweep([1.0], [0.01], [10], discretization=DISC, executor="inprocess", metrics=["mu"], output=out,
              overwrite=True)
    assert _strip(read_table(out)) == _strip(r.rows)


@pytest.mark.parametrize("change, why", [
    (dict(steps=[10, 20]), "settings this sweep does not ask for"),
    (dict(delta=1e-6), "settings this sweep does not ask for"),
    (dict(discretization=2e-3), "settings this sweep does not ask for"),
    (dict(metrics=["epsilon"]), "other metrics or FPRs"),
    (dict(fprs=(1e-2,), metrics=["tpr"]), "other metrics or FPRs"),
])
def test_table_of_another_sweep_is_refused_not_replaced(change, why, tmp_path):
    out = tmp_path / "t.csv"
    base = dict(noise_multiplier=[1.0], sample_rate=[0.01], steps=[10, 20, 40], discretization=DISC,
                executor="inprocess", metrics=["mu", "tpr"], fprs=(1e-3,))
    sweep(**base, output=out)
    before = out.read_bytes()
    with pytest.raises(fp.ParameterError, match=why):
        sweep(**{**base, **change}, output=out)
    assert out.read_bytes() == before
    again = sweep(**base, output=out)  # the same sweep still resumes its table
    assert again.computed == 0 and again.reused == 3


def test_cli_existing_non_table_needs_force(tmp_path):
    out = tmp_path / "num.csv"
    out.write_text("x,y\n1,2\n3,4\n")
    args = ("sweep", "--noise-multiplier", "1", "--sample-rate", "0.01", "--steps", "100", "--discretization",
            str(DISC), "--executor", "inprocess", "--metrics", "mu", "--output", str(out))
    res = _cli("--quiet", *args)
    lines = res.stderr.splitlines()
    assert res.returncode == 2 and len(lines) == 1 and lines[0].startswith(f"error: --output '{out}'"), res.stderr
    assert "--force" in lines[0] and "Traceback" not in res.stderr
    assert out.read_text() == "x,y\n1,2\n3,4\n"
    res = _cli("--quiet", "--force", *args)
    assert res.returncode == 0, res.stderr
    assert [r["steps"] for r in read_table(out)] == [100]


def test_table_resaved_with_a_bom_resumes(tmp_path):
    # a table re-saved by a spreadsheet starts with a UTF-8 BOM: its first column was read as
    # "\ufeffnoise_multiplier" and the table refused "without the column noise_multiplier"
    out = tmp_path / "t.csv"
    first = sweep([1.0], [0.01], [10], discretization=DISC, executor="inprocess", metrics=["mu"], output=out)
    out.write_bytes(b"\xef\xbb\xbf" + out.read_bytes())
    again = sweep([1.0], [0.01], [10], discretization=DISC, executor="inprocess", metrics=["mu"], output=out)
    assert again.computed == 0 and again.reused == 1 and again.rows[0]["mu"] == first.rows[0]["mu"]


#: Edits of a saved table that a resumed sweep once reused as results (the NaN, the negative
#: epsilon) or failed on with a bare OverflowError (the infinite step count).
EDITED = {
    "mu nan": ("mu", "nan", "line 2 has a value that is not a number"),
    "epsilon negative": ("epsilon", "-3", "epsilon -3.0 is out of range"),
    "tpr above 1": ("tpr_at_0.001", "1.5", "tpr_at_0.001 1.5 is out of range"),
    "steps inf": ("steps", "inf", "line 2 has a value that is not a number"),
    "steps 1e400": ("steps", "1e400", "line 2 has a value that is not a number"),
    "steps fraction": ("steps", "10.5", "line 2 has a value that is not a number"),
}


@pytest.mark.parametrize("case", sorted(EDITED))
def test_edited_table_is_refused_not_resumed(case, tmp_path):
    col, text, why = EDITED[case]
    out = tmp_path / "t.csv"
    sweep([1.0], [0.01], [10], discretization=DISC, executor="inprocess", metrics=["mu", "epsilon", "tpr"],
          output=out)
    lines = out.read_text().splitlines()
    header = lines[0].split(",")
    cells = lines[1].split(",")
    cells[header.index(col)] = text
    out.write_text("\n".join([lines[0], ",".join(cells)]) + "\n")
    edited = out.read_bytes()
    with pytest.raises(fp.ParameterError, match=f"is not a sweep table this sweep can resume .*{why}") as e:
        sweep([1.0], [0.01, 0.02], [10], discretization=DISC, executor="inprocess",
              metrics=["mu", "epsilon", "tpr"], output=out)
    assert e.value.parameter == "output" and out.read_bytes() == edited


def test_checkpoint_rows_out_of_range_or_malformed_are_recomputed(tmp_path):
    # a checkpoint chunk holding NaN was reused as a result; one holding an object (not a list
    # of rows) failed with AttributeError
    out = tmp_path / "t.csv"
    first = sweep([1.0], [0.01], [10], discretization=DISC, executor="inprocess", metrics=["mu"])
    row = dict(first.rows[0], mu="nan")
    part = partial_dir(out)
    part.mkdir()
    (part / "part-1-000001.json").write_text(json.dumps([row]))
    (part / "part-1-000002.json").write_text(json.dumps({"mu": 1}))
    (part / "part-1-000003.json").write_text(json.dumps([dict(first.rows[0], mu=-1.0)]))
    with pytest.warns(UserWarning, match="part-1-000002.json' is not reused, it is not a list of rows"):
        r = sweep([1.0], [0.01], [10], discretization=DISC, executor="inprocess", metrics=["mu"], output=out)
    assert r.computed == 1 and r.reused == 0 and r.rows[0]["mu"] == first.rows[0]["mu"]


def test_empty_metric_name_is_refused(tmp_path):
    # "mu,,tpr" was read as "mu,tpr"
    with pytest.raises(fp.ParameterError, match="empty") as info:
        sweep([1.0], [0.01], [10], executor="inprocess", metrics="mu,,tpr")
    assert info.value.parameter == "metrics"
    res = _invoke("sweep", "--noise-multiplier", "1", "--sample-rate", "0.1", "--steps", "10",
                  "--metrics", "mu,,tpr")
    assert res.exit_code == 2 and res.output.startswith("error: --metrics") and res.output.count("\n") == 1


@pytest.mark.slow  # two spawned workers that each import fdpkit: several seconds
def test_an_unguarded_script_on_the_process_pool_is_told_why(tmp_path):
    """A script that sweeps at module level on the default process pool (the sweeps guide's
    block pasted into a file) broke the pool with a bare BrokenProcessPool: every spawned
    worker imports the script and starts a sweep of its own. The error now says what to do."""
    script = tmp_path / "unguarded.py"
    script.write_text("import fdpkit as fp\n\n"
                      "fp.run_sweep(noise_multiplier=[1, 2], sample_rate=[0.01], steps=[10], discretization=1e-2,\n"
                      "             workers=2)\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(Path(fp.__file__).parents[1])}  # this fdpkit, whatever the cwd
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("RuntimeError: a sweep worker process ended before returning its rows")
    assert 'if __name__ == "__main__":' in last and 'executor="inprocess"' in last


def _edit_mu(out, new):
    """The table's first mu set to ``new`` (a valid-looking number), as a hand or a spreadsheet would."""
    if out.suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        t = pq.read_table(out)
        mu = t.column("mu").to_pylist()
        mu[0] = new
        pq.write_table(t.set_column(t.column_names.index("mu"), "mu", pa.array(mu)), out)  # keeps the metadata
        return
    lines = out.read_text().splitlines()
    header, cells = lines[0].split(","), lines[1].split(",")
    cells[header.index("mu")] = repr(new)
    out.write_text("\n".join([lines[0], ",".join(cells), *lines[2:]]) + "\n")


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_table_with_an_edited_valid_looking_number_is_refused(suffix, tmp_path):
    # a table whose first mu was edited to 0.7 times its value (a number like any other) was resumed and
    # the edited mu returned as if computed: the digest of its rows written with it now refuses it
    out = tmp_path / f"t.{suffix}"
    args = dict(noise_multiplier=[1.0], sample_rate=[0.01], steps=[10, 20], discretization=DISC,
                executor="inprocess", metrics=["mu", "epsilon"])
    first = sweep(**args, output=out)
    _edit_mu(out, round(first.rows[0]["mu"] * 0.7, 4))
    edited = out.read_bytes()
    with pytest.raises(fp.ParameterError, match="is not a sweep table this sweep can resume .*do not match the "
                                                "digest") as e:
        sweep(**args, output=out)
    assert e.value.parameter == "output" and out.read_bytes() == edited
    if suffix == "csv":
        res = _cli("--quiet", "sweep", "--noise-multiplier", "1", "--sample-rate", "0.01", "--steps", "10,20",
                   "--discretization", str(DISC), "--executor", "inprocess", "--metrics", "mu,epsilon",
                   "--output", str(out))
        lines = res.stderr.splitlines()
        assert res.returncode == 2 and len(lines) == 1 and "do not match the digest" in lines[0], res.stderr
        assert out.read_bytes() == edited
    again = sweep(**args, output=out, overwrite=True)  # recomputed, not reused
    assert again.computed == 2 and _strip(again.rows) == _strip(first.rows)
    assert _strip(read_table(out)) == _strip(first.rows)


def test_table_without_a_digest_or_reordered_still_resumes(tmp_path):
    # a table written before sweeps wrote digests (no rows_sha256 in its metadata) resumes as
    # it did, and gets one when rewritten; rows and columns reordered (a spreadsheet's sort)
    # keep their digest
    from fdpkit.sweep.store import DIGEST_KEY, metadata_path

    out = tmp_path / "t.csv"
    args = dict(noise_multiplier=[1.0], sample_rate=[0.01], steps=[10, 20], discretization=DISC,
                executor="inprocess", metrics=["mu"])
    first = sweep(**args, output=out)
    meta = json.loads(metadata_path(out).read_text())
    assert len(meta.pop(DIGEST_KEY)) == 64
    metadata_path(out).write_text(json.dumps(meta))
    lines = out.read_text().splitlines()
    cols = [c.split(",") for c in lines]
    flipped = [list(reversed(line)) for line in cols]  # columns reversed
    out.write_text("\n".join(",".join(line) for line in [flipped[0], *reversed(flipped[1:])]) + "\n")
    with pytest.warns(UserWarning, match="carries no digest of its rows"):  # and is told so
        again = sweep(**args, output=out)
    assert again.computed == 0 and again.reused == 2 and _strip(again.rows) == _strip(first.rows)
    assert DIGEST_KEY in json.loads(metadata_path(out).read_text())
    out.write_text("\n".join(",".join(line) for line in [flipped[0], *reversed(flipped[1:])]) + "\n")
    assert sweep(**args, output=out).reused == 2  # reordered under a digest
