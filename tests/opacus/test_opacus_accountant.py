"""FdpkitAccountant inside real Opacus training (tiny model, synthetic data, CPU)."""

from __future__ import annotations

import math
import time

import pytest

torch = pytest.importorskip("torch")
opacus = pytest.importorskip("opacus")

import fdpkit as fp  # noqa: E402
import fdpkit.opacus as fo  # noqa: E402
from opacus import PrivacyEngine  # noqa: E402
from opacus.accountants import RDPAccountant, create_accountant  # noqa: E402

from _training import model, private, synthetic, train  # noqa: E402

DELTA = 1e-5
#: epsilon of dp_accounting's optimistic PLD may sit this far above fdpkit's (both rounded)
LOWER_SLACK = 1e-9


def _optimistic_epsilon(history, delta):
    """A rigorous lower bound: dp_accounting's optimistic PLD of the same Poisson history."""
    from dp_accounting.pld import privacy_loss_distribution as pld_mod

    pld = None
    for nm, q, t in history:
        step = pld_mod.from_gaussian_mechanism(nm, sampling_prob=q, pessimistic_estimate=False,
                                               value_discretization_interval=1e-4)
        part = step.self_compose(t)
        pld = part if pld is None else pld.compose(part)
    return pld.get_epsilon_for_delta(delta)


def test_registered_on_import():
    assert isinstance(create_accountant("fdpkit"), fo.FdpkitAccountant)
    assert PrivacyEngine(accountant="fdpkit").accountant.mechanism() == "fdpkit"


def test_poisson_training_certified_between_bounds():
    engine = PrivacyEngine(accountant="fdpkit")
    module, opt, loader = private(engine, batch_size=32, noise_multiplier=1.0)
    steps = train(module, opt, loader, epochs=2)
    acc = engine.accountant
    assert fo.sampling_of(loader) == "poisson"
    assert len(acc) == 16 and acc.history == [(1.0, 1 / 8, 16)]
    assert steps <= 16  # empty Poisson batches are skipped by this loop but still stepped
    eps = engine.get_epsilon(DELTA)
    assert eps == fp.privacy_report(fp.dpsgd_from_opacus_history(acc.history)).epsilon_for_delta(DELTA)
    rdp = RDPAccountant()
    rdp.history = list(acc.history)
    assert eps <= rdp.get_epsilon(DELTA)
    assert eps >= _optimistic_epsilon(acc.history, DELTA) - LOWER_SLACK
    report = acc.report()
    assert acc.get_mu() == report.mu > 0
    assert acc.get_tpr(1e-3) == pytest.approx(report.tpr(1e-3), rel=1e-12)
    # the loader-aware report agrees with the accountant for Poisson
    assert fo.privacy_report(engine, loader, epochs=2).epsilon_for_delta(DELTA) == eps


def test_get_epsilon_cached_per_history():
    acc = fo.FdpkitAccountant()
    for _ in range(40):
        acc.step(noise_multiplier=1.3, sample_rate=0.05)
    first = acc.get_epsilon(1e-5)
    t0 = time.perf_counter()
    for d in (1e-5, 1e-6, 1e-5):
        acc.get_epsilon(d)
    assert time.perf_counter() - t0 < 0.5  # no new composition
    assert acc.get_epsilon(1e-5) == first
    acc.step(noise_multiplier=1.3, sample_rate=0.05)
    assert acc.get_epsilon(1e-5) > first
    assert fo.FdpkitAccountant().get_epsilon(1e-5) == 0.0


def test_shuffled_loader_is_reported_as_shuffled():
    engine = PrivacyEngine(accountant="fdpkit")
    module, opt, loader = private(engine, n=250, batch_size=32, noise_multiplier=2.0, poisson=False)
    assert fo.sampling_of(loader) == "shuffled" and len(loader) == 8  # drop_last=False: ceil(250/32)
    train(module, opt, loader, epochs=3)
    assert engine.accountant.history == [(2.0, 1 / 8, 24)]
    rep = fo.privacy_report(engine, loader, epochs=3)
    assert rep.mechanism.sampling == "shuffled" and rep.mechanism.relation == "replace-one"
    # no amplification: P = 3 participations, mu = sqrt(3) * 2 / sigma
    assert rep.mu == pytest.approx(math.sqrt(3) * 2 / 2.0, rel=1e-9)
    assert any("assumes Poisson" in w for w in rep.warnings)
    with pytest.raises(ValueError, match="add-remove"):
        fo.privacy_report(engine, loader, relation="add-remove")
    with pytest.raises(ValueError, match="disagree"):
        fo.privacy_report(engine, loader, epochs=2)


def test_drop_last_counts_steps():
    engine = PrivacyEngine(accountant="fdpkit")
    module, opt, loader = private(engine, n=250, batch_size=32, poisson=False, drop_last=True)
    assert len(loader) == 7
    train(module, opt, loader, epochs=2)
    rep = fo.privacy_report(engine, loader, epochs=2)
    assert rep.mechanism.steps == 14 and rep.mechanism.phases[0].participations == 2


def test_loader_contradicting_history_is_an_error():
    engine = PrivacyEngine(accountant="fdpkit")
    module, opt, loader = private(engine, batch_size=32)
    train(module, opt, loader, epochs=1)
    other = PrivacyEngine(accountant="fdpkit")
    _, _, loader64 = private(other, batch_size=64)
    with pytest.raises(ValueError, match="disagree"):
        fo.privacy_report(engine, loader64)


def test_samplers_read_from_the_loader():
    from torch.utils.data import DataLoader, RandomSampler, SequentialSampler, WeightedRandomSampler

    data = synthetic(100)
    assert fo.sampling_of(DataLoader(data, batch_size=10, sampler=SequentialSampler(data))) == "fixed-order"
    weighted = DataLoader(data, batch_size=10, sampler=WeightedRandomSampler([1.0] * 100, 100))
    with pytest.raises(ValueError, match="WeightedRandomSampler"):
        fo.sampling_of(weighted)
    with pytest.raises(ValueError, match="replacement"):
        fo.sampling_of(DataLoader(data, batch_size=10, sampler=RandomSampler(data, replacement=True)))
    with pytest.raises(ValueError, match="num_samples"):
        fo.sampling_of(DataLoader(data, batch_size=10, sampler=RandomSampler(data, num_samples=50)))


def test_fixed_order_report_says_so():
    engine = PrivacyEngine(accountant="fdpkit")
    module, opt, loader = private(engine, n=128, batch_size=32, poisson=False, shuffle=False)
    assert fo.sampling_of(loader) == "fixed-order"
    train(module, opt, loader, epochs=2)
    rep = fo.privacy_report(engine, loader)
    assert any("fixed order" in w for w in rep.warnings)
    assert rep.mu == pytest.approx(math.sqrt(2) * 2 / 1.0, rel=1e-9)


def test_batch_memory_manager_counts_optimizer_steps():
    from opacus.utils.batch_memory_manager import BatchMemoryManager

    engine = PrivacyEngine(accountant="fdpkit")
    module, opt, loader = private(engine, n=256, batch_size=64)
    with BatchMemoryManager(data_loader=loader, max_physical_batch_size=16, optimizer=opt) as mem_loader:
        assert fo.sampling_of(mem_loader) == "poisson"
        train(module, opt, mem_loader, epochs=1)
    assert len(engine.accountant) == 4
    assert fo.privacy_report(engine, mem_loader, epochs=1).mechanism.steps == 4


def test_make_private_with_epsilon_is_certified():
    engine = PrivacyEngine(accountant="fdpkit")
    m = model()
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    from torch.utils.data import DataLoader

    loader = DataLoader(synthetic(256), batch_size=64)
    t0 = time.perf_counter()
    module, opt, loader = engine.make_private_with_epsilon(
        module=m, optimizer=opt, data_loader=loader, target_epsilon=3.0, target_delta=DELTA,
        epochs=2, max_grad_norm=1.0)
    elapsed = time.perf_counter() - t0
    train(module, opt, loader, epochs=2)
    eps = engine.get_epsilon(DELTA)
    assert eps <= 3.0 and eps > 2.99  # calibrate_dpsgd: the smallest noise that meets the target
    assert elapsed < 30


def test_get_noise_multiplier_routes_only_fdpkit():
    rdp = fo.get_noise_multiplier(target_epsilon=3.0, target_delta=DELTA, sample_rate=0.25, epochs=2,
                                  accountant="rdp")
    ours = fo.get_noise_multiplier(target_epsilon=3.0, target_delta=DELTA, sample_rate=0.25, epochs=2,
                                   accountant="fdpkit")
    assert ours < rdp  # the certified PLD is tighter than RDP
    with pytest.raises(ValueError, match="EITHER"):
        fo.get_noise_multiplier(target_epsilon=3.0, target_delta=DELTA, sample_rate=0.25, accountant="fdpkit")


def test_checkpoint_round_trip(tmp_path):
    engine = PrivacyEngine(accountant="fdpkit")
    module, opt, loader = private(engine, batch_size=32)
    train(module, opt, loader, epochs=1)
    path = tmp_path / "ckpt.pt"
    engine.save_checkpoint(path=path, module=module, optimizer=opt)
    fresh = PrivacyEngine(accountant="fdpkit")
    module2, opt2, _ = private(fresh, batch_size=32)
    fresh.load_checkpoint(path=path, module=module2, optimizer=opt2)
    assert fresh.accountant.history == engine.accountant.history
    assert fresh.get_epsilon(DELTA) == engine.get_epsilon(DELTA)
    # an RDP accountant's state dict means the same history
    acc = fo.FdpkitAccountant()
    rdp = RDPAccountant()
    rdp.history = [(1.0, 0.1, 5)]
    acc.load_state_dict(rdp.state_dict())
    assert acc.history == [(1.0, 0.1, 5)]
    with pytest.raises(ValueError, match="history"):
        acc.load_state_dict({"history": [(1.0, 2.0, 5)], "mechanism": "fdpkit"})
    assert acc.history == [(1.0, 0.1, 5)]  # unchanged after a bad load


def test_shuffled_accumulation_and_phases_from_the_history():
    from torch.utils.data import DataLoader

    loader = DataLoader(synthetic(256), batch_size=32, shuffle=True)  # 8 batches an epoch
    acc = fo.FdpkitAccountant()
    acc.history = [(1.0, 2 / 8, 8)]  # 2 batches accumulated per step: 4 steps an epoch, 2 epochs
    m = fo.mechanism_of(acc, loader, epochs=2)
    assert m.phases[0].batch_size == 64 and m.phases[0].participations == 2
    acc.history = [(1.0, 1 / 8, 4), (2.0, 1 / 8, 12)]  # the noise changes in the middle of epoch 1
    m = fo.mechanism_of(acc, loader)
    assert [p.participations for p in m.phases] == [1, 2]
    acc.history = [(1.0, 1 / 8, 3), (1.0, 2 / 8, 2)]  # a 2-batch step from batch 3 could straddle
    with pytest.raises(ValueError, match="straddle"):
        fo.mechanism_of(acc, loader)
    acc.history = [(1.0, 3 / 8, 2)]  # 3 does not divide 8
    with pytest.raises(ValueError, match="disagree"):
        fo.mechanism_of(acc, loader)


def test_shuffled_loader_refuses_the_poisson_figures():
    # before: engine.get_epsilon(1e-5) quoted the Poisson 2.47 for a shuffled run certified at 15.5
    engine = PrivacyEngine(accountant="fdpkit")
    module, opt, loader = private(engine, n=256, batch_size=32, poisson=False)
    train(module, opt, loader, epochs=1)
    assert engine.accountant.fdpkit_sampling == "shuffled"
    for query in (lambda: engine.get_epsilon(DELTA), engine.accountant.get_mu, engine.accountant.report,
                  lambda: engine.accountant.get_tpr(1e-3), engine.accountant.dp_event):
        with pytest.raises(fp.ParameterError, match="Poisson") as info:
            query()
        assert info.value.parameter == "poisson_sampling"
    assert fo.privacy_report(engine, loader, epochs=1).mechanism.sampling == "shuffled"  # the honest figure
    # a later Poisson loader does not make the shuffled steps Poisson
    module2, opt2, loader2 = private(engine, n=256, batch_size=32)
    assert fo.sampling_of(loader2) == "poisson" and engine.accountant.fdpkit_sampling == "shuffled"
    # Poisson runs are unaffected
    poisson = PrivacyEngine(accountant="fdpkit")
    module, opt, loader = private(poisson, n=256, batch_size=32)
    train(module, opt, loader, epochs=1)
    assert poisson.accountant.fdpkit_sampling == "poisson" and poisson.get_epsilon(DELTA) > 0
    # make_private_with_epsilon would calibrate for Poisson: refused before any training
    from torch.utils.data import DataLoader

    m = model()
    with pytest.raises(fp.ParameterError, match="poisson_sampling") as info:
        PrivacyEngine(accountant="fdpkit").make_private_with_epsilon(
            module=m, optimizer=torch.optim.SGD(m.parameters(), lr=0.1),
            data_loader=DataLoader(synthetic(256), batch_size=32), target_epsilon=3.0, target_delta=DELTA,
            epochs=1, max_grad_norm=1.0, poisson_sampling=False)
    assert info.value.parameter == "poisson_sampling"


@pytest.mark.parametrize("state", [
    {"history": None, "mechanism": "fdpkit"},   # before: TypeError 'NoneType' object is not iterable
    {"history": 5, "mechanism": "rdp"},         # before: TypeError 'int' object is not iterable
    {"history": "abc", "mechanism": "fdpkit"},
])
def test_load_state_dict_malformed_history_is_named(state):
    acc = fo.FdpkitAccountant()
    acc.history = [(1.0, 0.1, 5)]
    with pytest.raises(fp.ParameterError, match=r"state_dict\['history'\]") as info:
        acc.load_state_dict(state)
    assert info.value.parameter == "state_dict" and acc.history == [(1.0, 0.1, 5)]


def test_loaded_history_holds_the_validated_numbers():
    acc = fo.FdpkitAccountant()
    acc.load_state_dict({"history": [[1, 0.1, 5.0]], "mechanism": "rdp"})
    assert acc.history == [(1.0, 0.1, 5)] and isinstance(acc.history[0][2], int)
    with pytest.raises(ValueError, match="no accountant history"):  # before: TypeError
        fo.history_from_state({"privacy_accountant_state_dict": None})


@pytest.mark.parametrize("kwargs, parameter", [
    (dict(sample_rate=0.0, epochs=1), "sample_rate"),            # before: ZeroDivisionError
    (dict(sample_rate=math.nan, epochs=1), "sample_rate"),       # before: cannot convert float NaN
    (dict(sample_rate=0.05, epochs=math.inf), "epochs"),         # before: OverflowError
    (dict(sample_rate=0.05, epochs=math.nan), "epochs"),
    (dict(sample_rate=0.05, epochs=0), "epochs"),
    (dict(sample_rate=0.05, epochs=1, target_epsilon=0.0), "target_epsilon"),  # before: "epsilon must ..."
    (dict(sample_rate=0.05, epochs=1, target_delta=1.0), "target_delta"),
])
def test_get_noise_multiplier_names_opacus_arguments(kwargs, parameter):
    args = dict(target_epsilon=3.0, target_delta=DELTA, accountant="fdpkit") | kwargs
    with pytest.raises(fp.ParameterError) as info:
        fo.get_noise_multiplier(**args)
    assert info.value.parameter == parameter and str(info.value).startswith(parameter)


def test_get_noise_multiplier_returns_a_safe_unconverged_sigma():
    # before: ValueError "cannot be met ...: the target was met on the safe side but not to full precision"
    sigma = fo.get_noise_multiplier(target_epsilon=1e-6, target_delta=DELTA, sample_rate=0.05, steps=20,
                                    accountant="fdpkit")
    acc = fo.FdpkitAccountant()
    acc.history = [(sigma, 0.05, 20)]
    assert acc.get_epsilon(DELTA) <= 1e-6


def test_steps_store_plain_floats(tmp_path):
    # before: np.float64 / np.float32 / 0-d tensors were kept, so the state dict failed
    # torch.load(weights_only=True) (what `--from-opacus` uses) and json.dumps
    import json

    import numpy as np

    acc = fo.FdpkitAccountant()
    for nm in (np.float64(1.0), np.float32(1.0), torch.tensor(1.0), 1.0):
        acc.step(noise_multiplier=nm, sample_rate=np.float64(0.125))
    assert acc.history == [(1.0, 0.125, 4)]
    assert all(type(v) is float for v in acc.history[0][:2])
    torch.save(acc.state_dict(), tmp_path / "acc.pt")
    assert torch.load(tmp_path / "acc.pt", weights_only=True)["history"] == [(1.0, 0.125, 4)]
    assert json.loads(json.dumps(acc.state_dict()))["history"] == [[1.0, 0.125, 4]]


def test_noise_scheduler_phases_are_accounted():
    from opacus.schedulers import StepNoise

    engine = PrivacyEngine(accountant="fdpkit")
    module, opt, loader = private(engine, n=256, batch_size=32)
    scheduler = StepNoise(opt, step_size=1, gamma=2.0)
    for _ in range(2):
        train(module, opt, loader, epochs=1)
        scheduler.step()
    assert [(nm, t) for nm, _, t in engine.accountant.history] == [(1.0, 8), (2.0, 8)]
    ours = engine.get_epsilon(DELTA)
    rdp = RDPAccountant()
    rdp.history = list(engine.accountant.history)
    assert _optimistic_epsilon(engine.accountant.history, DELTA) <= ours + LOWER_SLACK and ours <= rdp.get_epsilon(DELTA)


@pytest.mark.parametrize("epochs", [math.nan, math.inf, True, 1.5, 0])
def test_privacy_report_epochs_are_named(epochs):
    # before: NaN "cannot convert float NaN to integer", inf OverflowError, True accepted as 1
    from torch.utils.data import DataLoader

    acc = fo.FdpkitAccountant()
    acc.history = [(1.0, 1 / 8, 8)]
    with pytest.raises(fp.ParameterError) as info:
        fo.privacy_report(acc, DataLoader(synthetic(256), batch_size=32, shuffle=True), epochs=epochs)
    assert info.value.parameter == "epochs"


def test_weighted_sampler_under_make_private_is_refused():
    from torch.utils.data import DataLoader, WeightedRandomSampler

    engine = PrivacyEngine(accountant="fdpkit")
    m = model()
    loader = DataLoader(synthetic(64), batch_size=16, sampler=WeightedRandomSampler([1.0] * 64, 64))
    module, opt, loader = engine.make_private(module=m, optimizer=torch.optim.SGD(m.parameters(), lr=0.1),
                                              data_loader=loader, noise_multiplier=1.0, max_grad_norm=1.0,
                                              poisson_sampling=False)
    train(module, opt, loader, epochs=1)
    with pytest.raises(fp.ParameterError, match="no sound accounting: .*WeightedRandomSampler") as info:
        engine.get_epsilon(DELTA)  # before: the Poisson figure, as if q = 16/64 had been sampled
    assert info.value.parameter == "poisson_sampling"


def test_a_shuffled_runs_saved_state_never_reads_as_poisson(tmp_path):
    """A shuffled run's accountant file held only its (sigma, q, steps) history, so
    ``ledger propose --from-opacus`` and ``report dpsgd --opacus-history`` accounted it as
    Poisson (epsilon 2.5 for a run certified at 15.5). The state dict now names the scheme,
    a reloaded accountant keeps refusing the Poisson figures, and the file readers refuse it."""
    import json

    from typer.testing import CliRunner

    from fdpkit.cli import app

    engine = PrivacyEngine(accountant="fdpkit")
    module, opt, loader = private(engine, n=256, batch_size=32, poisson=False)
    train(module, opt, loader, epochs=1)
    state = engine.accountant.state_dict()
    assert state["fdpkit_sampling"] == "shuffled" and state["mechanism"] == "fdpkit"
    again = fo.FdpkitAccountant()
    again.load_state_dict(state)
    with pytest.raises(fp.ParameterError, match="Poisson"):
        again.get_epsilon(DELTA)
    with pytest.raises(fp.ParameterError, match="sampled 'shuffled'"):
        fo.history_from_state({"privacy_accountant_state_dict": state})
    path = tmp_path / "acc.json"
    path.write_text(json.dumps({k: (list(map(list, v)) if k == "history" else v) for k, v in state.items()}))
    pt = tmp_path / "acc.pt"
    torch.save({"privacy_accountant_state_dict": state}, pt)
    db = tmp_path / "l.sqlite"
    runner = CliRunner()
    assert runner.invoke(app, ["ledger", "init", "--db", str(db)]).exit_code == 0
    assert runner.invoke(app, ["ledger", "--db", str(db), "dataset", "add", "d", "--unit", "one person"]).exit_code == 0
    for f in (path, pt):
        for args in (["report", "dpsgd", "--opacus-history", str(f)],
                     ["ledger", "--db", str(db), "propose", "d", "--from-opacus", str(f), "--title", "t"]):
            r = runner.invoke(app, args)
            assert r.exit_code == 2 and "sampled 'shuffled'" in r.stderr, (args, r.output)
            assert len(r.stderr.strip().splitlines()) == 1
    # a Poisson run's file is unchanged (Opacus's layout) and reads as before
    poisson = PrivacyEngine(accountant="fdpkit")
    module, opt, loader = private(poisson, n=256, batch_size=32)
    train(module, opt, loader, epochs=1)
    assert set(poisson.accountant.state_dict()) == {"history", "mechanism"}


def test_a_trained_run_exports_its_dp_event():
    # new: the run as dp_accounting's DpEvent, accounted back to the accountant's own figure
    engine = PrivacyEngine(accountant="fdpkit")
    module, opt, loader = private(engine, n=256, batch_size=32)
    train(module, opt, loader, epochs=2)
    ev = engine.accountant.dp_event()
    assert ev == fp.to_dp_event(fp.dpsgd(1.0, 0.125, 16))
    assert ev["class_name"] == "SelfComposedDpEvent" and ev["count"] == 16
    back = fp.privacy_report(fp.from_dp_event(ev)).epsilon_for_delta(DELTA)
    assert back == pytest.approx(engine.get_epsilon(DELTA), rel=1e-5)
