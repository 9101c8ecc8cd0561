"""Training runs into the ledger: BudgetGuard stops an Opacus run before the hard limit and
records it; `fdpkit ledger propose DATASET --from-opacus FILE` reads accountant files."""

from __future__ import annotations

import json

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("opacus")
pytest.importorskip("sqlalchemy")

from opacus import PrivacyEngine  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

import fdpkit as fp  # noqa: E402
import fdpkit.opacus as fo  # noqa: E402
from fdpkit.cli import app  # noqa: E402
from fdpkit.ledger import open_ledger  # noqa: E402

from _training import private, train  # noqa: E402

HARD_EPSILON = 2.0


@pytest.fixture
def ledger(tmp_path):
    led = open_ledger(str(tmp_path / "ledger.sqlite"))
    led.add_dataset("toy", unit="one example", user="ana")
    # thresholds stay ordered (notice <= warning <= hard): lower the two below the hard one first
    led.set_threshold("toy", metric="epsilon", level="notice", value=HARD_EPSILON / 2, delta=1e-5, user="ana")
    led.set_threshold("toy", metric="epsilon", level="warning", value=HARD_EPSILON * 3 / 4, delta=1e-5, user="ana")
    led.set_threshold("toy", metric="epsilon", level="hard", value=HARD_EPSILON, delta=1e-5, user="ana")
    yield led
    led.close()


def test_budget_guard_stops_before_the_hard_limit_and_records(ledger):
    engine = PrivacyEngine(accountant="fdpkit")
    module, opt, loader = private(engine, batch_size=32, noise_multiplier=1.0)  # q = 1/8
    guard = fo.BudgetGuard(ledger, "toy", engine, noise_multiplier=1.0, sample_rate=1 / 8, max_steps=400,
                           title="toy run", user="ana", approver="bob", report=False)
    last = guard.last_allowed_step
    assert 0 < last < 400
    assert not ledger.check("toy", fp.dpsgd(1.0, 1 / 8, last).to_dict()).blocked
    assert ledger.check("toy", fp.dpsgd(1.0, 1 / 8, last + 1).to_dict()).blocked
    with guard:
        guard.attach(opt)
        train(module, opt, loader, epochs=100)  # would take 800 steps
    assert len(engine.accountant) == last
    assert guard.release is not None and guard.release.state == "released"
    status = ledger.status("toy")
    assert status.released.epsilon <= HARD_EPSILON


def test_cli_propose_from_opacus_files(tmp_path):
    db = str(tmp_path / "cli.sqlite")
    run = CliRunner().invoke
    assert run(app, ["ledger", "--db", db, "init"]).exit_code == 0  # --db must exist for other commands
    assert run(app, ["ledger", "--db", db, "dataset", "add", "toy", "--unit", "one example"]).exit_code == 0
    acc = fo.FdpkitAccountant()
    acc.history = [(1.1, 0.01, 300)]
    pt = tmp_path / "acc.pt"
    torch.save(acc.state_dict(), pt)
    js = tmp_path / "acc.json"
    js.write_text(json.dumps(acc.state_dict()))
    for f in (pt, js):
        r = run(app, ["ledger", "--db", db, "propose", "toy", "--from-opacus", str(f), "--title", "run",
                      "--format", "json"])
        assert r.exit_code == 0, r.output
        rel = json.loads(r.stdout)
        assert rel["state"] == "proposed"
        assert fp.mechanism_from_dict(rel["mechanism"]) == fp.dpsgd_from_opacus_history(acc.history)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"mechanism": "rdp"}))
    r = run(app, ["ledger", "--db", db, "propose", "toy", "--from-opacus", str(bad), "--title", "x"])
    assert r.exit_code == 2 and "history" in r.output


def test_budget_guard_refuses_a_shuffled_loader(ledger):
    # before: the guard's Poisson limit let a shuffled run train and recorded it as Poisson
    engine = PrivacyEngine(accountant="rdp")  # any accountant: make_private remembers the loader
    module, opt, loader = private(engine, batch_size=32, noise_multiplier=1.0, poisson=False)
    guard = fo.BudgetGuard(ledger, "toy", engine, noise_multiplier=1.0, sample_rate=1 / 8, max_steps=400,
                           title="toy run", user="ana", report=False)
    guard.attach(opt)
    with pytest.raises(fp.ParameterError, match="Poisson") as info:
        train(module, opt, loader, epochs=1)
    assert info.value.parameter == "poisson_sampling" and len(engine.accountant) == 0
    assert guard.record() is None  # nothing ran, nothing recorded


def test_cli_report_reads_opacus_files(tmp_path):
    # before: a state_dict JSON was "--history must be a list ...", a checkpoint a utf-8 decode error
    engine = PrivacyEngine(accountant="fdpkit")
    module, opt, loader = private(engine, batch_size=32)
    train(module, opt, loader, epochs=1)
    ckpt = tmp_path / "ckpt.pt"
    engine.save_checkpoint(path=ckpt, module=module, optimizer=opt)
    js = tmp_path / "sd.json"
    js.write_text(json.dumps(engine.accountant.state_dict()))
    run = CliRunner().invoke
    db = str(tmp_path / "cli.sqlite")
    assert run(app, ["ledger", "--db", db, "init"]).exit_code == 0
    assert run(app, ["ledger", "--db", db, "dataset", "add", "toy", "--unit", "one example"]).exit_code == 0
    for f in (ckpt, js):
        r = run(app, ["report", "dpsgd", "--opacus-history", str(f), "--format", "json"])
        assert r.exit_code == 0, r.output
        eps = {row["delta"]: row["epsilon"] for row in json.loads(r.stdout)["epsilon_at_delta"]}
        assert eps[1e-5] == engine.get_epsilon(1e-5)
    for content, expected in ((b"not json", "neither JSON nor"), (b'{"privacy_accountant_state_dict": null}',
                              "no accountant history"), (b'{"history": null}', "history must be a list")):
        bad = tmp_path / "bad.json"
        bad.write_bytes(content)
        for args in (["report", "dpsgd", "--opacus-history", str(bad)],
                     ["ledger", "--db", db, "propose", "toy", "--from-opacus", str(bad),
                      "--title", "x"]):
            r = run(app, args)
            assert r.exit_code == 2 and expected in r.output and "Error:" not in r.output, (args, r.output)


def _wide(ledger, name="wide", hard=5.0):
    """A dataset whose hard limit (epsilon 5 at 1e-5) allows 28 steps of sigma 1, q 1/8."""
    ledger.add_dataset(name, unit="one example", user="ana")
    for level, value in (("notice", hard / 2), ("warning", hard * 3 / 4), ("hard", hard)):
        ledger.set_threshold(name, metric="epsilon", level=level, value=value, delta=1e-5, user="ana")
    return name


def _guard(ledger, name, engine, **kw):
    return fo.BudgetGuard(ledger, name, engine, noise_multiplier=1.0, sample_rate=1 / 8, max_steps=400,
                          title="toy run", user="ana", report=False, **kw)


def _first_epoch(ledger, **kw):
    """A wide dataset and one epoch (8 steps) trained under a guard; (name, engine, module,
    optimizer, loader, the guard)."""
    name = _wide(ledger)
    engine = PrivacyEngine(accountant="fdpkit")
    module, opt, loader = private(engine, batch_size=32, noise_multiplier=1.0)
    with _guard(ledger, name, engine, **kw) as first:
        first.attach(opt)
        train(module, opt, loader, epochs=1)
    return name, engine, module, opt, loader, first


def _resume(path):
    engine = PrivacyEngine(accountant="fdpkit")
    module, opt, loader = private(engine, batch_size=32, noise_multiplier=1.0)
    engine.load_checkpoint(path=path, module=module, optimizer=opt)
    return engine, module, opt, loader


def test_a_resumed_run_is_accounted_once(ledger, tmp_path):
    # before: the second guard counted the first run's 16 released steps again (it stopped after
    # 0 of its 12 allowed steps) and recorded all 16 + 0 steps again, crossing the hard limit
    # (LedgerError at the end of the with block: epsilon 5.265 > 5)
    name = _wide(ledger)
    engine = PrivacyEngine(accountant="fdpkit")
    module, opt, loader = private(engine, batch_size=32, noise_multiplier=1.0)
    first = _guard(ledger, name, engine, approver="bob")
    with first:
        first.attach(opt)
        train(module, opt, loader, epochs=2)  # 16 steps, within the 28 allowed
    assert first.release.state == "released" and engine.accountant.history == [(1.0, 0.125, 16)]
    ckpt = tmp_path / "ckpt.pt"
    engine.save_checkpoint(path=ckpt, module=module, optimizer=opt)

    engine, module, opt, loader = _resume(ckpt)
    assert engine.accountant.history == [(1.0, 0.125, 16)]
    second = _guard(ledger, name, engine, approver="bob")
    assert second.steps_taken() == 0
    assert abs(second.last_allowed_step - (first.last_allowed_step - 16)) <= 1
    with second:
        second.attach(opt)
        train(module, opt, loader, epochs=100)
    total = 16 + second.last_allowed_step
    assert engine.accountant.history == [(1.0, 0.125, total)]
    assert fp.mechanism_from_json(second.release.spec) == fp.dpsgd(1.0, 1 / 8, second.last_allowed_step)
    whole = fp.privacy_report(fp.dpsgd_from_opacus_history(engine.accountant.history))
    assert engine.get_epsilon(1e-5) == whole.epsilon_for_delta(1e-5)  # the accountant: the whole run
    released = ledger.status(name).released
    assert released.count == 2 and whole.epsilon_for_delta(1e-5) <= released.epsilon <= 5.0
    assert released.epsilon == pytest.approx(whole.epsilon_for_delta(1e-5), rel=1e-3)  # once, not 16 twice

    # resumed again from the end: nothing left, nothing counted or recorded twice
    engine.save_checkpoint(path=ckpt, module=module, optimizer=opt)
    engine, module, opt, loader = _resume(ckpt)
    third = _guard(ledger, name, engine, approver="bob")
    assert third.steps_taken() == 0 and third.last_allowed_step == 0
    with third:
        third.attach(opt)
        train(module, opt, loader, epochs=1)
    assert third.release is None and len(engine.accountant) == total


def test_a_resumed_run_counts_steps_no_guard_released(ledger, tmp_path):
    # the first part never recorded (no guard), or only proposed: its steps count against the
    # limit and go into the resumed run's release (the proposal is withdrawn, not counted twice)
    name = _wide(ledger)
    for approver in (None, "first part unrecorded"):
        engine = PrivacyEngine(accountant="fdpkit")
        module, opt, loader = private(engine, batch_size=32, noise_multiplier=1.0)
        first = None
        if approver is None:
            first = _guard(ledger, name, engine)  # proposed only
            with first:
                first.attach(opt)
                train(module, opt, loader, epochs=1)
        else:
            train(module, opt, loader, epochs=1)
        ckpt = tmp_path / "ckpt.pt"
        engine.save_checkpoint(path=ckpt, module=module, optimizer=opt)
        engine, module, opt, loader = _resume(ckpt)
        second = _guard(ledger, name, engine)
        assert second.steps_taken() == 8
        with second:
            second.attach(opt)
            train(module, opt, loader, epochs=1)
        assert fp.mechanism_from_json(second.release.spec) == fp.dpsgd(1.0, 1 / 8, 16)
        if first is not None:
            assert ledger.release_info(first.release.id).state == "withdrawn"
            assert ledger.release_info(second.release.id).state == "proposed"
            ledger.withdraw(second.release.id, user="ana")
    assert ledger.status(name).released.count == 0


def test_a_proposal_another_user_cannot_withdraw_is_named(ledger, tmp_path):
    # the resumed run is recorded all the same; the earlier proposal is named in a warning
    name, engine, module, opt, loader, first = _first_epoch(ledger)  # proposed by ana
    second = fo.BudgetGuard(ledger, name, engine, noise_multiplier=1.0, sample_rate=1 / 8, max_steps=400,
                            title="resumed", user="cy", report=False)
    with pytest.warns(RuntimeWarning, match=f"release {first.release.id} holds steps"):
        with second:
            second.attach(opt)
            train(module, opt, loader, epochs=1)
    assert fp.mechanism_from_json(second.release.spec) == fp.dpsgd(1.0, 1 / 8, 16)
    assert ledger.release_info(first.release.id).state == "proposed"


def test_a_recorded_part_of_another_ledger_is_not_trusted(ledger, tmp_path):
    # the marker names release ids: in another ledger (or dataset) they do not hold the steps
    name, engine, module, opt, loader, first = _first_epoch(ledger, approver="bob")
    other = open_ledger(str(tmp_path / "other.sqlite"))
    try:
        _wide(other)
        other.record(name, fp.dpsgd(1.0, 1 / 8, 3).to_dict(), title="unrelated", user="ana", approver="bob",
                     report=False)  # release 1 there: not the 8 steps
        assert _guard(other, name, engine).steps_taken() == 8
        _wide(ledger, "another")
        assert _guard(ledger, "another", engine).steps_taken() == 8
        assert _guard(ledger, name, engine).steps_taken() == 0
    finally:
        other.close()


def test_cli_from_opacus_leaves_out_the_released_steps(ledger, tmp_path):
    # before: `fdpkit ledger propose/check --from-opacus` took the whole history of a resumed run,
    # counting the 8 steps a BudgetGuard had already released a second time
    name, engine, module, opt, loader, first = _first_epoch(ledger, approver="bob")
    done = tmp_path / "done.pt"
    engine.save_checkpoint(path=done, module=module, optimizer=opt)
    engine, module, opt, loader = _resume(done)
    train(module, opt, loader, epochs=1)  # 8 more steps, no guard
    ckpt = tmp_path / "ckpt.pt"
    engine.save_checkpoint(path=ckpt, module=module, optimizer=opt)
    db = str(tmp_path / "ledger.sqlite")
    run = CliRunner().invoke
    before = ledger.status(name).released.epsilon
    for command in ("check", "propose"):
        args = ["ledger", "--db", db, command, name, "--from-opacus", str(ckpt), "--format", "json"]
        r = run(app, args + (["--title", "resumed"] if command == "propose" else []))
        assert r.exit_code == 0, r.output
        assert "first 8 steps" in r.stderr and "only the 8 steps after them" in r.stderr
        # and in the JSON (it was on stderr only)
        assert [w for w in json.loads(r.stdout)["warnings"] if "first 8 steps" in w and w.startswith("the first")]
    rel = json.loads(r.stdout)
    assert fp.mechanism_from_dict(rel["mechanism"]) == fp.dpsgd(1.0, 1 / 8, 8)
    after = rel["check"]["after"]["epsilon"]
    whole = fp.privacy_report(fp.dpsgd(1.0, 1 / 8, 16)).epsilon_for_delta(1e-5)
    assert before < after == pytest.approx(whole, rel=1e-3)
    r = run(app, ["ledger", "--db", db, "propose", name, "--from-opacus", str(done), "--title", "again"])
    assert r.exit_code == 2 and "already released" in r.output


def test_a_state_dict_is_a_mechanism_spec_everywhere(tmp_path):
    # before: the web's "Any mechanism (JSON spec)" box, /api/report and `fdpkit report --mechanism` answered
    # "mechanism kind must be one of ..., got None" for the accountant's state_dict an engineer pastes
    from fastapi.testclient import TestClient

    from fdpkit.web.main import create_app

    engine = PrivacyEngine(accountant="fdpkit")
    module, opt, loader = private(engine, batch_size=32)
    train(module, opt, loader, epochs=1)
    state = json.loads(json.dumps(engine.accountant.state_dict()))
    assert fp.mechanism_from_dict(state) == fp.dpsgd_from_opacus_history(engine.accountant.history)
    acc = engine.accountant
    eps = engine.get_epsilon(1e-5)
    # the numbers of one run agree on every surface: accountant, loader report, CLI, web
    readings = (eps, acc.get_mu(), acc.get_tpr(0.01))

    def read(doc):
        return ({d["delta"]: d["epsilon"] for d in doc["epsilon_at_delta"]}[1e-5], doc["guarantee"]["mu"],
                {d["fpr"]: d["tpr"] for d in doc["tpr_at_fpr"]}[0.01])

    loader_report = fo.privacy_report(engine, loader)
    assert (loader_report.epsilon_for_delta(1e-5), loader_report.mu) == readings[:2]
    web = TestClient(create_app())
    r = web.post("/api/report", json={"mechanism": state})
    assert r.status_code == 200, r.text
    assert read(r.json()) == readings
    ckpt = tmp_path / "ckpt.pt"
    engine.save_checkpoint(path=ckpt, module=module, optimizer=opt)
    r = CliRunner().invoke(app, ["report", "dpsgd", "--opacus-history", str(ckpt), "--format", "json"])
    assert r.exit_code == 0, r.output
    assert read(json.loads(r.stdout)) == readings
    page = web.post("/report", data={"kind": "mechanism", "mechanism": json.dumps(state)})
    assert page.status_code == 200 and "ε = 3.175" in page.text
    f = tmp_path / "sd.json"
    f.write_text(json.dumps(state))
    r = CliRunner().invoke(app, ["report", "--mechanism", str(f), "--format", "json"])
    assert r.exit_code == 0, r.output
    assert {d["delta"]: d["epsilon"] for d in json.loads(r.stdout)["epsilon_at_delta"]}[1e-5] == eps
    # a shuffled run's state is refused, as by --opacus-history (never read as Poisson steps)
    shuffled = {**state, "fdpkit_sampling": "shuffled"}
    r = web.post("/api/report", json={"mechanism": shuffled})
    assert r.status_code == 422 and "not Poisson" in r.text
