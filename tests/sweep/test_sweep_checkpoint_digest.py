"""Checkpoint chunks carry the digest of their rows, as the finished table does: a chunk of an
interrupted sweep whose mu was edited came back on resume as if computed. Now a chunk that
does not match its digest is not reused: its settings are recomputed and a warning names it.
A chunk written before chunks carried a digest (a bare list of rows) is reused, unchecked, in a
folder an earlier fdpkit began; in one this fdpkit began (DIGESTS_FILE) it is recomputed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import fdpkit as fp
from fdpkit.sweep import run_sweep
from fdpkit.sweep.store import DIGEST_KEY, DIGESTS_FILE, Checkpoint, partial_dir

DISC = 1e-3
#: Two noise multipliers: two groups, two chunks; the sweep is interrupted after the first.
ARGS = dict(noise_multiplier=[1.0, 2.0], sample_rate=[0.01], steps=[10], discretization=DISC,
            executor="inprocess", metrics=["mu", "epsilon"])


class Interrupted(Exception):
    pass


def _interrupted_sweep(out: Path) -> Path:
    """Run the sweep to ``out`` and interrupt it (Ctrl-C from its progress callback) once its
    first chunk is saved; the chunk's path."""
    def progress(done: int, total: int) -> None:
        if done:
            raise Interrupted

    with pytest.raises(Interrupted):
        run_sweep(**ARGS, output=out, progress=progress)
    chunks = sorted(partial_dir(out).glob("part-*.json"))
    assert len(chunks) == 1 and not out.exists()
    return chunks[0]


def _resume(out: Path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = run_sweep(**ARGS, output=out)
    return r, [str(w.message) for w in caught if issubclass(w.category, UserWarning)]


def _edit_first_mu(chunk: Path) -> float:
    """The chunk's first mu set to 0.7 times its value, as a hand in a text editor would (the
    file's text changed, nothing else); the new value."""
    text = chunk.read_text()
    saved = json.loads(text)
    mu = (saved["rows"] if isinstance(saved, dict) else saved)[0]["mu"]
    edited = round(mu * 0.7, 4)  # a number like any other
    chunk.write_text(text.replace(repr(mu), repr(edited)))
    return edited


def _strip(rows):
    return [{k: v for k, v in r.items() if k != "seconds"} for r in rows]


def test_an_edited_chunk_is_recomputed_and_named(tmp_path):
    truth = run_sweep(**ARGS)
    out = tmp_path / "t.csv"
    chunk = _interrupted_sweep(out)
    edited = _edit_first_mu(chunk)
    r, told = _resume(out)
    # before: computed 1, reused 1, and the edited mu in the result and the table
    assert r.computed == 2 and r.reused == 0
    assert _strip(r.rows) == _strip(truth.rows) and edited not in [row["mu"] for row in r.rows]
    assert len(told) == 1 and str(chunk) in told[0] and "do not match the digest" in told[0]
    assert "recomputed" in told[0]
    assert not partial_dir(out).exists()
    assert run_sweep(**ARGS, output=out).reused == 2  # the finished table is the recomputed one


def test_a_chunk_without_its_digest_or_with_another_row_is_recomputed(tmp_path):
    # the digest key deleted, or a row of another chunk put in: neither is the chunk the sweep wrote
    out = tmp_path / "t.parquet"
    chunk = _interrupted_sweep(out)
    saved = json.loads(chunk.read_text())
    for bad in ({"rows": saved["rows"]},
                {**saved, "rows": saved["rows"] + [dict(saved["rows"][0], noise_multiplier=2.0)]},
                {**saved, "rows": [dict(saved["rows"][0], mu=[1])]},
                {**saved, DIGEST_KEY: 5}):
        chunk.write_text(json.dumps(bad))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            cp = Checkpoint(out)
            assert cp.rows() == [] and len(cp.skipped) == 1 and str(chunk) in cp.skipped[0]
        assert not caught
    r, told = _resume(out)
    assert r.computed == 2 and len(told) == 1 and str(chunk) in told[0]


def test_an_untouched_chunk_is_reused_without_a_warning(tmp_path):
    truth = run_sweep(**ARGS)
    out = tmp_path / "t.csv"
    _interrupted_sweep(out)
    r, told = _resume(out)
    assert r.computed == 1 and r.reused == 1 and not told
    assert _strip(r.rows) == _strip(truth.rows)


def test_non_finite_and_missing_values_match_their_digest(tmp_path):
    # a chunk's digest is of its rows as they read back: inf goes through the string "inf",
    # a missing value (a refused pair's row has no numbers) is left out
    rows = [{"noise_multiplier": 1.0, "sample_rate": 0.5, "steps": 10, "delta": 1e-5, "discretization": DISC,
             "mu": float("inf"), "epsilon": float("inf")},
            {"noise_multiplier": 1.0, "sample_rate": 0.5, "steps": 10, "sampling": "shuffled",
             "relation": "add-remove", "delta": 1e-5, "discretization": DISC, "note": "refused", "mu": None}]
    out = tmp_path / "t.csv"
    cp = Checkpoint(out)
    cp.save(rows)
    assert Checkpoint(out).rows() == rows and not Checkpoint(out).skipped


def test_a_chunk_written_before_chunks_had_a_digest_is_reused_unchecked(tmp_path):
    # an earlier fdpkit wrote a chunk as a bare list of rows, in a folder without DIGESTS_FILE:
    # it resumes as it did (unchecked)
    truth = run_sweep(**ARGS)
    out = tmp_path / "t.csv"
    chunk = _interrupted_sweep(out)
    chunk.write_text(json.dumps(json.loads(chunk.read_text())["rows"]))
    (partial_dir(out) / DIGESTS_FILE).unlink()
    r, told = _resume(out)
    assert r.computed == 1 and r.reused == 1 and not told
    assert _strip(r.rows) == _strip(truth.rows)


def test_a_chunk_turned_back_into_a_bare_list_is_recomputed(tmp_path):
    # before: a chunk of this sweep with its digest taken out (a bare list, as an earlier fdpkit
    # wrote) was reused unchecked, its edited mu 0.7x the truth in the table; its folder says that
    # every chunk in it has a digest
    truth = run_sweep(**ARGS)
    out = tmp_path / "t.csv"
    chunk = _interrupted_sweep(out)
    assert (partial_dir(out) / DIGESTS_FILE).is_file()
    edited = _edit_first_mu(chunk)
    chunk.write_text(json.dumps(json.loads(chunk.read_text())["rows"]))
    r, told = _resume(out)
    assert r.computed == 2 and r.reused == 0 and edited not in [row["mu"] for row in r.rows]
    assert _strip(r.rows) == _strip(truth.rows)
    assert len(told) == 1 and str(chunk) in told[0] and "bare list of rows" in told[0]


def test_an_old_folder_resumed_by_this_fdpkit_keeps_its_bare_chunks(tmp_path):
    # an earlier fdpkit's folder (bare chunks, no DIGESTS_FILE) resumed and interrupted again by
    # this one: its new chunks carry digests, the folder is not marked, the old chunks still resume
    out = tmp_path / "t.csv"
    args = {**ARGS, "noise_multiplier": [1.0, 2.0, 4.0]}
    cp = Checkpoint(out)
    cp.save(run_sweep(**{**args, "noise_multiplier": [1.0]}).rows)
    (partial_dir(out) / DIGESTS_FILE).unlink()
    (chunk,) = partial_dir(out).glob("part-*.json")
    chunk.write_text(json.dumps(json.loads(chunk.read_text())["rows"]))  # as an earlier fdpkit wrote it
    resumed = Checkpoint(out)
    assert len(resumed.rows()) == 1  # as a resumed sweep reads the folder before it saves
    resumed.save(run_sweep(**{**args, "noise_multiplier": [2.0]}).rows)
    assert not (partial_dir(out) / DIGESTS_FILE).exists()
    r = run_sweep(**args, output=out)
    assert r.reused == 2 and r.computed == 1


def test_a_crash_while_saving_a_chunk_leaves_no_chunk_and_no_warning(tmp_path):
    # the rows and their digest are one file, written to a temporary name and renamed: a sweep
    # killed while writing it leaves the temporary file (half-written), never a chunk without
    # its digest; the next run recomputes those settings without a warning and removes it
    truth = run_sweep(**ARGS)
    out = tmp_path / "t.csv"
    chunk = _interrupted_sweep(out)
    data = chunk.read_text()
    (chunk.parent / f".{chunk.name[:-len('000001.json')]}000002.json.x1y2z3").write_text(data[: len(data) // 2])
    r, told = _resume(out)
    assert r.computed == 1 and r.reused == 1 and not told
    assert _strip(r.rows) == _strip(truth.rows) and not partial_dir(out).exists()


def test_cli_prints_one_warning_line_per_edited_chunk(tmp_path):
    out = tmp_path / "t.csv"
    chunk = _interrupted_sweep(out)
    _edit_first_mu(chunk)
    env = {**os.environ, "PYTHONPATH": str(Path(fp.__file__).resolve().parents[1])}
    res = subprocess.run([sys.executable, "-m", "fdpkit.cli", "--quiet", "sweep", "--noise-multiplier", "1,2",
                          "--sample-rate", "0.01", "--steps", "10", "--discretization", str(DISC),
                          "--executor", "inprocess", "--metrics", "mu,epsilon", "--output", str(out)],
                         capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 0, res.stderr
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("warning: checkpoint chunk") and str(chunk) in lines[0], lines


def _fsynced(monkeypatch) -> list[tuple[int, int]]:
    """The (device, inode) of everything ``os.fsync`` is called on from now (the real call runs)."""
    synced: list[tuple[int, int]] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        st = os.fstat(fd)
        synced.append((st.st_dev, st.st_ino))
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    return synced


def _id(path: Path) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_dev, st.st_ino


def test_chunks_tables_and_cli_outputs_reach_the_disk_before_their_rename(tmp_path, monkeypatch):
    # write_atomic (chunks, tables, reports) and the CLI's --output renamed a temporary file that
    # was never fsynced: after a power cut the new name could hold an empty or half-written file
    from fdpkit.cli._common import write_output
    from fdpkit.report import write_atomic

    synced = _fsynced(monkeypatch)
    target = write_atomic(tmp_path / "a.json", b"{}")
    assert _id(target) in synced and _id(tmp_path) in synced  # the file, then the rename (its folder)
    synced.clear()
    out = tmp_path / "t.csv"
    Checkpoint(out).save(run_sweep(**{**ARGS, "noise_multiplier": [1.0]}).rows)
    (chunk,) = partial_dir(out).glob("part-*.json")
    assert _id(chunk) in synced and _id(partial_dir(out)) in synced
    synced.clear()
    target = write_output(tmp_path / "r.md", b"# report\n")
    assert _id(target) in synced and _id(tmp_path) in synced
