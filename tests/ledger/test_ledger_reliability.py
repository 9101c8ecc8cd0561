"""Reliability of the ledger on SQLite and on a real PostgreSQL server (the ``ledger_url``
fixture runs every test on both): concurrent writers from two OS processes, a writer killed
with SIGKILL in the middle of recording a release with its report, and tampering found by
``verify``."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text


WORKER = str(Path(__file__).with_name("_worker.py"))
#: Releases per writer process. Enough for the two writers to interleave many times (checked
#: below: a sequential run would pass the counts but not the interleaving check).
PER_PROCESS = 200


#: Noise of the first release of each writer in the concurrency test: with PER_PROCESS
#: releases each, the total (eps at the dataset's delta) crosses the notice alert's 2 once.
SIGMA0 = 30.0


def _spawn(url, n, tag, report=False, progress=None, sigma0=50.0, go=None):
    args = [sys.executable, WORKER, url, "census", str(n), tag, "1" if report else "0"]
    if progress:
        args.append(str(progress))
    env = dict(os.environ, LEDGER_WORKER_SIGMA0=repr(sigma0))
    if go is not None:
        env["LEDGER_WORKER_GO"] = str(go)
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _count(url, sql):
    eng = create_engine(url)
    try:
        with eng.connect() as c:
            return c.execute(text(sql)).scalar()
    finally:
        eng.dispose()


def test_two_processes_lose_nothing(ledger, ledger_url, tmp_path):
    ledger.add_dataset("census", unit="one person", user="admin")
    go = tmp_path / "go"
    procs = [_spawn(ledger_url, PER_PROCESS, tag, sigma0=SIGMA0, go=go) for tag in ("alpha", "beta")]
    for p in procs:  # both imported and connected: start them together
        assert p.stdout.readline().strip() == "ready", p.stderr.read()[-2000:]
    go.touch()
    for p in procs:
        _, errs = p.communicate(timeout=600)
        assert p.returncode == 0, errs[-2000:]
    assert _count(ledger_url, "SELECT COUNT(*) FROM releases WHERE state = 'released'") == 2 * PER_PROCESS
    for tag in ("alpha", "beta"):
        assert _count(ledger_url, f"SELECT COUNT(DISTINCT title) FROM releases WHERE analyst = '{tag}'") == PER_PROCESS
    # 1 dataset event + 3 per release + the notice alert (eps crosses 2 once), numbered
    # 1..N without gaps, chain intact
    assert _count(ledger_url, "SELECT COUNT(*) FROM events WHERE kind <> 'alert'") == 1 + 3 * 2 * PER_PROCESS
    assert _count(ledger_url, "SELECT COUNT(*) FROM events WHERE kind = 'alert'") == 1
    n_events = _count(ledger_url, "SELECT COUNT(*) FROM events")
    assert _count(ledger_url, "SELECT MAX(seq) FROM events") == n_events
    if "postgresql" in ledger_url:
        # the writers really ran concurrently: along the release ids the writer changes (on
        # PostgreSQL every release or so; SQLite's file lock may let one writer finish first,
        # so there only the counts above and the chain below are checked)
        eng = create_engine(ledger_url)
        try:
            with eng.connect() as c:
                order = [r[0] for r in c.execute(text("SELECT analyst FROM releases ORDER BY id"))]
        finally:
            eng.dispose()
        switches = sum(1 for x, y in zip(order, order[1:]) if x != y)
        assert switches >= 10, f"the two writers barely overlapped ({switches} switches)"
    res = ledger.verify()
    assert res.ok, res
    st = ledger.status("census")
    assert st.counts["released"] == 2 * PER_PROCESS
    expected_mu = sum((1 / (SIGMA0 + (i % 7))) ** 2 for i in range(PER_PROCESS)) * 2
    assert st.released.mu == pytest.approx(expected_mu ** 0.5, rel=1e-12)


RELEASE_WORKER = str(Path(__file__).with_name("_release_worker.py"))
#: Noise of each release of the hard-limit race: mu 0.25 each, so the default hard limit (epsilon 8
#: at delta 1e-5, mu about 2.2) holds about 80 of them; RACE_RELEASES are approved, far more.
RACE_SIGMA = 4.0
RACE_RELEASES = 120


def test_two_processes_releasing_at_once_never_pass_the_hard_limit(ledger, ledger_url, tmp_path):
    """Two processes release the same approved releases at once, against the dataset's hard
    limit: each total is checked inside the write that releases (the chain-head lock), so
    the released total ends within the limit, every release is released once, and every
    refusal beyond the limit says so."""
    ledger.add_dataset("census", unit="one person", user="admin")
    ids = []
    for i in range(RACE_RELEASES):
        r = ledger.propose("census", {"kind": "gaussian", "sigma": RACE_SIGMA}, title=f"r{i}", user="alice")
        ledger.approve(r.id, user="bob", report=False)
        ids.append(r.id)
    hard = next(t for t in ledger.status("census").thresholds if t.threshold.level == "hard").threshold
    go = tmp_path / "go"
    env = dict(os.environ, LEDGER_WORKER_GO=str(go))
    procs = [subprocess.Popen([sys.executable, RELEASE_WORKER, ledger_url, user, *map(str, order)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for user, order in (("bob", ids), ("carol", ids[::-1]))]
    for p in procs:
        assert p.stdout.readline().strip() == "ready", p.stderr.read()[-2000:]
    go.touch()
    outs = []
    for p in procs:
        out, errs = p.communicate(timeout=600)
        assert p.returncode == 0, errs[-2000:]
        outs.append(out)
    released = [int(line.split()[1]) for out in outs for line in out.splitlines() if line.startswith("released")]
    assert len(released) == len(set(released)), "a release was released twice"
    st = ledger.status("census")
    n = st.counts["released"]
    assert n == len(released) and 0 < n < RACE_RELEASES
    assert st.released.epsilon <= hard.value, (st.released.epsilon, hard.value)
    assert st.released.mu == pytest.approx((n / RACE_SIGMA**2) ** 0.5, rel=1e-12)
    assert any("hard limit" in line for out in outs for line in out.splitlines())
    assert ledger.verify().ok


def test_sigkill_leaves_whole_releases(ledger, ledger_url, tmp_path):
    ledger.add_dataset("census", unit="one person", user="admin")
    progress = tmp_path / "progress"
    p = _spawn(ledger_url, 50, "victim", report=True, progress=progress)
    deadline = time.time() + 300
    while time.time() < deadline and (not progress.exists() or len(progress.read_text().split()) < 1):
        if p.poll() is not None:
            pytest.fail(f"worker ended early: {p.stderr.read()[-2000:]}")
        time.sleep(0.05)
    time.sleep(0.3)  # most likely in the middle of the next report or transaction
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=30)
    res = ledger.verify()
    assert res.ok, res
    rels = ledger.releases("census")
    assert len(rels) >= 1
    for r in rels:  # each release is whole: released, with one approval holding both reports
        assert r.state == "released"
        (a,) = ledger.approvals(r.id)
        assert a.report_pdf.startswith(b"%PDF") and a.report_json.startswith(b"{")
    assert _count(ledger_url, "SELECT COUNT(*) FROM events") == 1 + 3 * len(rels)


def _tamper(url, *statements):
    eng = create_engine(url)
    with eng.begin() as c:
        for s in statements:
            c.execute(text(s))
    eng.dispose()


@pytest.fixture
def small_ledger(ledger):
    ledger.add_dataset("census", unit="one person", user="admin")
    for i in range(3):
        ledger.record("census", {"kind": "gaussian", "sigma": 4.0}, title=f"r{i}", user="ana", approver="bob", report=False)
    assert ledger.verify().ok
    return ledger


def _seq_of(ledger, kind, release_id):
    (ev,) = [e for e in ledger.history(release_id=release_id) if e.kind == kind]
    return ev.seq


def test_edited_row_is_found(small_ledger, ledger_url):
    seq = _seq_of(small_ledger, "release.released", 2)
    _tamper(ledger_url, "UPDATE releases SET title = 'something else' WHERE id = 2")
    res = small_ledger.verify()
    assert not res.ok and res.broken_seq == seq and "releases/2" in res.reason and "title" in res.reason


def test_edited_event_is_found(small_ledger, ledger_url):
    _tamper(ledger_url, "UPDATE events SET actor = 'mallory' WHERE seq = 5")
    res = small_ledger.verify()
    assert not res.ok and res.broken_seq == 5 and "modified" in res.reason


def test_deleted_event_is_found(small_ledger, ledger_url):
    _tamper(ledger_url, "DELETE FROM events WHERE seq = 4")
    res = small_ledger.verify()
    assert not res.ok and res.broken_seq == 4 and "missing" in res.reason


def test_deleted_last_event_is_found(small_ledger, ledger_url):
    last = small_ledger.history()[-1].seq
    _tamper(ledger_url, f"DELETE FROM events WHERE seq = {last}")
    res = small_ledger.verify()
    assert not res.ok and res.broken_seq == last


def test_deleted_row_is_found(small_ledger, ledger_url):
    _tamper(ledger_url, "DELETE FROM approvals WHERE release_id = 3")
    res = small_ledger.verify()
    assert not res.ok and "approvals" in res.reason


def test_edited_threshold_is_found(small_ledger, ledger_url):
    _tamper(ledger_url, "UPDATE thresholds SET value = 100 WHERE level = 'hard'")
    res = small_ledger.verify()
    assert not res.ok and res.broken_seq == 1 and "value" in res.reason
