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
