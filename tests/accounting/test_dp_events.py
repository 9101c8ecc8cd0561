"""fp.from_dp_event: dp_accounting's DpEvents as fdpkit mechanisms, epsilon at delta against
dp_accounting's own PLD accountant on the same event."""

from __future__ import annotations

import json
import math

from dp_accounting import dp_event as dpa
from dp_accounting import NeighboringRelation
import pytest
from dp_accounting.pld import pld_privacy_accountant as pld_acc

import fdpkit as fp
from fdpkit.accounting import account
from fdpkit.mechanisms import dp_event_to_dict

DELTA = 1e-6
#: fdpkit uses the same pessimistic PLD; epsilon may exceed dp_accounting's by this much
#: (a bound that is looser, never lower): relative, plus an absolute allowance
REL_TOL = 0.02
ABS_TOL = 2e-3
#: below dp_accounting's pessimistic epsilon by at most the discretization (1e-4)
LOW_SLACK = 2e-4

EVENTS_ADD_REMOVE = [
    dpa.GaussianDpEvent(1.3),
    dpa.LaplaceDpEvent(2.0),
    dpa.DiscreteLaplaceDpEvent(0.5, 1),
    dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1.0)), 200),
    dpa.PoissonSampledDpEvent(0.1, dpa.LaplaceDpEvent(1.0)),
    dpa.ComposedDpEvent([dpa.GaussianDpEvent(3.0), dpa.SelfComposedDpEvent(dpa.LaplaceDpEvent(10.0), 3),
                         dpa.NoOpDpEvent()]),
    pytest.param(dpa.TruncatedSubsampledGaussianDpEvent(dataset_size=200, sampling_probability=0.05,
                                                        truncated_batch_size=15, noise_multiplier=1.0),
                 marks=pytest.mark.slow),  # both sides take ~5 s (dp_accounting's truncated PLD)
]


def _dp_accounting_epsilon(event, relation=NeighboringRelation.ADD_OR_REMOVE_ONE):
    acc = pld_acc.PLDAccountant(neighboring_relation=relation)
    acc.compose(event)
    return acc.get_epsilon(DELTA)


@pytest.mark.parametrize("event", EVENTS_ADD_REMOVE, ids=lambda e: type(e).__name__)
def test_epsilon_agrees_with_dp_accounting_pld(event):
    mech = fp.from_dp_event(event)
    ours = account(mech).epsilon_for_delta(DELTA)
    theirs = _dp_accounting_epsilon(event)
    assert ours >= theirs - LOW_SLACK  # never below dp_accounting's own estimate
    assert ours <= theirs * (1 + REL_TOL) + ABS_TOL


def test_mixture_of_gaussians_is_the_subsampled_gaussian():
    # dp_accounting's own mixture PLD takes ~30 s here; its Poisson form is the same mechanism
    event = dpa.MixtureOfGaussiansDpEvent(1.0, [0.0, 1.0], [0.9, 0.1])
    mech = fp.from_dp_event(event)
    assert mech == fp.from_dp_event(dpa.PoissonSampledDpEvent(0.1, dpa.GaussianDpEvent(1.0)))
    theirs = _dp_accounting_epsilon(dpa.PoissonSampledDpEvent(0.1, dpa.GaussianDpEvent(1.0)))
    assert theirs - LOW_SLACK <= account(mech).epsilon_for_delta(DELTA) <= theirs * (1 + REL_TOL) + ABS_TOL


def test_randomized_response_under_replace_one():
    event = dpa.RandomizedResponseDpEvent(noise_parameter=0.5, num_buckets=2)
    ours = account(fp.from_dp_event(event)).epsilon_for_delta(DELTA)
    theirs = _dp_accounting_epsilon(event, NeighboringRelation.REPLACE_ONE)
    assert theirs - LOW_SLACK <= ours <= theirs + ABS_TOL
    # k > 2: binary RR at the same pure epsilon, a bound
    event = dpa.RandomizedResponseDpEvent(noise_parameter=0.3, num_buckets=10)
    ours = account(fp.from_dp_event(event)).epsilon_for_delta(DELTA)
    assert ours >= _dp_accounting_epsilon(event, NeighboringRelation.REPLACE_ONE) - LOW_SLACK
    assert ours <= math.log1p(10 * 0.7 / 0.3)


def test_json_and_named_tuple_forms():
    event = EVENTS_ADD_REMOVE[3]
    d = json.loads(json.dumps(dp_event_to_dict(event)))
    assert fp.from_dp_event(d) == fp.from_dp_event(event) == fp.from_dp_event(event.to_named_tuple())


def test_degenerate_events():
    assert fp.privacy_report(fp.from_dp_event(dpa.NoOpDpEvent())).mu == 0.0
    for e in (dpa.NonPrivateDpEvent(), dpa.GaussianDpEvent(0.0)):
        r = fp.privacy_report(fp.from_dp_event(e))
        assert math.isinf(r.mu) and r.failure_mode == "catastrophic"
        assert any("certainty" in w for w in r.warnings)
    assert fp.from_dp_event(dpa.ZCDpEvent(0.5)) == fp.ZCDP(0.5)
    assert fp.from_dp_event(dpa.ComposedDpEvent([])) == fp.from_dp_event(dpa.NoOpDpEvent())


def test_zcdp_with_xi_is_rdp():
    m = fp.from_dp_event(dpa.ZCDpEvent(0.1, 0.05))
    assert isinstance(m, fp.RDP) and m.epsilons[0] == pytest.approx(0.05 + 0.1 * 1.25)


@pytest.mark.parametrize("event, match", [
    (dpa.SampledWithoutReplacementDpEvent(100, 10, dpa.GaussianDpEvent(1.0)), "replace-one"),
    (dpa.SampledWithReplacementDpEvent(100, 10, dpa.GaussianDpEvent(1.0)), "SampledWithReplacementDpEvent"),
    (dpa.SingleEpochTreeAggregationDpEvent(1.0, 4), "SingleEpochTreeAggregationDpEvent"),
    (dpa.RepeatAndSelectDpEvent(dpa.GaussianDpEvent(1.0), 2.0, 1.0), "RepeatAndSelectDpEvent"),
    (dpa.UnsupportedDpEvent(), "UnsupportedDpEvent"),
    (dpa.MixtureOfGaussiansDpEvent(1.0, [0.0, 1.0, 2.0], [0.8, 0.1, 0.1]), "several nonzero"),
    (dpa.ComposedDpEvent([dpa.GaussianDpEvent(-1.0)]), r"events\[0\].noise_multiplier"),
])
def test_refusals_name_the_event(event, match):
    with pytest.raises(ValueError, match=match):
        fp.from_dp_event(event)


def test_cli_and_web_accept_the_event_json(tmp_path):
    from fastapi.testclient import TestClient
    from typer.testing import CliRunner

    from fdpkit.cli import app
    from fdpkit.web.main import create_app

    event = dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.05, dpa.GaussianDpEvent(1.5)), 20)
    d = dp_event_to_dict(event)
    expected = fp.privacy_report(fp.from_dp_event(event), discretization=1e-3).mu
    path = tmp_path / "event.json"
    path.write_text(json.dumps(d))
    r = CliRunner().invoke(app, ["report", "--mechanism", str(path), "--discretization", "1e-3", "--format", "json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["guarantee"]["mu"] == pytest.approx(expected, rel=1e-12)
    r = TestClient(create_app()).post("/api/report", json={"mechanism": d, "discretization": 1e-3})
    assert r.status_code == 200, r.text
    assert r.json()["guarantee"]["mu"] == pytest.approx(expected, rel=1e-12)
    nested = {"class_name": "ComposedDpEvent", "events": [d] * 2}
    for _ in range(40):
        nested = {"class_name": "SelfComposedDpEvent", "count": 2, "event": nested}
    with pytest.raises(ValueError, match="nested"):
        fp.mechanism_from_dict(nested)


def test_huge_self_composition_names_the_event_count():
    # before: "times must be <= 1e+07, got 1e12" (Repeated's argument, not the event's field)
    ev = dpa.ComposedDpEvent([dpa.GaussianDpEvent(1.0),
                              dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1.0)), 10**12)])
    with pytest.raises(ValueError, match=r"^event\.events\[1\]\.count must be <= 1e\+07"):
        fp.from_dp_event(ev)


def _rebuild(d):
    """dp_accounting's event from its JSON dict, class by class (as fp.to_dp_event's docs say)."""
    if isinstance(d, list):
        return [_rebuild(x) for x in d]
    if not isinstance(d, dict):
        return d
    fields = {k: _rebuild(v) for k, v in d.items() if k not in ("module_name", "class_name")}
    return getattr(dpa, d["class_name"])(**fields)


@pytest.mark.parametrize("mech", [
    fp.Gaussian(1.3), fp.Gaussian(0.3, 0.1), fp.Laplace(2.0, 0.5), fp.ZCDP(0.1), fp.PureDP(0.0),
    fp.Repeated(fp.Subsampled(fp.Gaussian(1.0), 0.01), 200),
    fp.Composed((fp.Gaussian(3.0), fp.Repeated(fp.Laplace(10.0), 3))),
    fp.dpsgd(1.0, 0.125, 24),
    fp.dpsgd_from_opacus_history([(1.0, 0.125, 16), (1.5, 0.25, 8)]),
], ids=repr)
def test_to_dp_event_round_trips_and_dp_accounting_agrees(mech):
    # new: the export (before there was none: a DP-SGD run had to be rewritten as an event by hand)
    ev = fp.to_dp_event(mech)
    json.dumps(ev)
    real = _rebuild(ev)
    assert dp_event_to_dict(real) == ev
    ours = fp.privacy_report(mech).epsilon_for_delta(DELTA) if not isinstance(mech, fp.PureDP) else 0.0
    back = fp.from_dp_event(ev)
    assert account(back).curve.tpr(0.01) == pytest.approx(account(mech).curve.tpr(0.01), rel=1e-3, abs=1e-9)
    if not isinstance(mech, (fp.ZCDP, fp.PureDP)):
        theirs = _dp_accounting_epsilon(real)
        assert ours >= theirs - LOW_SLACK
        assert ours <= theirs * (1 + REL_TOL) + ABS_TOL


def test_to_dp_event_never_reads_as_more_private():
    # sigma / sensitivity rounds down: 0.3 / 0.1 is 2.9999999999999996 in floats, kept (not rounded up)
    assert fp.to_dp_event(fp.Gaussian(0.3, 0.1))["noise_multiplier"] <= 3.0
    from fractions import Fraction
    for s, c in ((0.7, 0.3), (1.1, 0.7), (5.0, 3.0)):
        r = fp.to_dp_event(fp.Gaussian(s, c))["noise_multiplier"]
        assert Fraction(r) <= Fraction(s) / Fraction(c)
    for mech in (fp.PureDP(1.0), fp.ApproxDP(1.0, 1e-5), fp.RandomizedResponse(1.0),
                 fp.dpsgd(1.0, 0.1, 10, relation="replace-one"),
                 fp.dpsgd(1.0, batch_size=10, dataset_size=100, epochs=1, sampling="shuffled", relation="replace-one"),
                 fp.Repeated(fp.PureDP(0.5), 2)):
        with pytest.raises(fp.ParameterError, match="no DpEvent") as info:
            fp.to_dp_event(mech)
        assert info.value.parameter == "mechanism"
    with pytest.raises(fp.ParameterError, match="fdpkit mechanism"):
        fp.to_dp_event({"class_name": "GaussianDpEvent"})
