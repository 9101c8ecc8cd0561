"""Truncated Poisson: the report states how loose dp_accounting's analysis may be, from an
attainable instance (every other gradient zero: the Poisson subsampled Gaussian at the rate
q' at which the example is drawn and survives truncation; its optimistic PLD). The
instance must never exceed the stated epsilon (fdpkit is sound against it), and the ratio
is the most by which the stated epsilon can exceed the truth."""

import pytest

import fdpkit as fp
from fdpkit.accounting.truncated_instance import effective_rate, truncation_looseness
from fdpkit.report import build_document, render_document

DISC = 1e-3


def test_effective_rate_small_case_by_hand():
    # K ~ Bin(3, 1/2) others, B = 1: E[1 / (1 + K)] = (1 + 3/2 + 3/3 + 1/4) / 8
    assert effective_rate(0.5, 1, 3) == pytest.approx(0.5 * 3.75 / 8, rel=1e-8)
    assert effective_rate(0.5, 1, 3) <= 0.5 * 3.75 / 8  # rounded down (attainable side)
    assert effective_rate(0.01, 200, 100) == pytest.approx(0.01, rel=1e-8)  # never truncated


@pytest.mark.parametrize("relation", ["add-remove", "replace-one"])
def test_truncated_report_states_its_looseness(relation):
    m = fp.dpsgd(1.0, batch_size=10, dataset_size=500, steps=40, sampling="truncated-poisson",
                 max_batch_size=10, relation=relation)
    r = fp.privacy_report(m, discretization=DISC)
    prov = r.provenance
    looseness = truncation_looseness(m, DISC, [d for d, _ in r.epsilons])
    for (d, stated), (d2, lb) in zip(r.epsilons, looseness.epsilons):
        assert d2 == d and 0 < lb <= stated  # sound against the attainable instance
    d0, e0 = r.epsilons[0]
    assert prov["truncation_instance_delta"] == d0 and prov["truncation_instance_epsilon"] == looseness.epsilons[0][1]
    assert prov["truncation_epsilon_ratio"] == pytest.approx(e0 / looseness.epsilons[0][1])
    assert 1.0 < prov["truncation_epsilon_ratio"] < 10.0  # the audit's 3-10x, stated as a number
    q_eff = looseness.effective_rates[0]
    assert 0 < q_eff < 10 / 500 and prov["truncation_instance_rates"] == f"{q_eff:.6g}"
    if relation == "add-remove":  # the provenance table prints the scalars (md, as every format)
        assert b"truncation epsilon ratio" in render_document(build_document(r), "md")
    assert "may be up to" in r.statement() and any("may be loose" in w for w in r.warnings)


def test_other_schemes_state_no_truncation_looseness():
    assert "truncation_epsilon_ratio" not in fp.privacy_report(fp.dpsgd(1.0, 0.02, 40), discretization=DISC).provenance
    assert truncation_looseness(fp.Gaussian(1.0), DISC, [1e-5]) is None


def test_group_privacy_says_no_looseness_is_stated():
    m = fp.dpsgd(1.0, batch_size=10, dataset_size=500, steps=10, sampling="truncated-poisson",
                 max_batch_size=10, unit="user", examples_per_user=2)
    r = fp.privacy_report(m, discretization=1e-2)
    assert "not stated with group privacy" in r.provenance["truncation_instance"]
    assert any("no attainable instance is stated" in w for w in r.warnings)


def test_the_instance_is_counted_in_the_cost(monkeypatch):
    # the looseness statement's instance (dp_accounting's optimistic PLD of a Poisson run at
    # the rates q') is counted against a report's budget and the web's work limits
    from fdpkit.accounting import cost
    from fdpkit.accounting.cost import estimate_cost
    from fdpkit.accounting.truncated_instance import INSTANCE_WORK_FACTOR, instance_run

    m = fp.dpsgd(1.0, batch_size=10, dataset_size=500, steps=40, sampling="truncated-poisson",
                 max_batch_size=10)
    inst = instance_run(m)
    assert inst.sampling == "poisson" and inst.steps == 40
    assert inst.sample_rate == pytest.approx(effective_rate(0.02, 10, 500))
    total = estimate_cost(m, DISC).work
    with monkeypatch.context() as patch:
        patch.setattr(cost, "instance_run", lambda mechanism: None)
        without = estimate_cost(m, DISC).work
    # dp_accounting builds the instance's steps (a Python loop per point): counted at its rates
    instance = cost._estimate(inst, DISC, native=False).work
    assert total - without == pytest.approx(INSTANCE_WORK_FACTOR * instance, rel=1e-9)
    assert instance > 2 * estimate_cost(inst, DISC).work  # fdpkit's own steps cost less
    assert total - without > 0
    assert instance_run(fp.dpsgd(1.0, 0.02, 40)) is None
    assert instance_run(fp.dpsgd(1.0, batch_size=10, dataset_size=500, steps=4, sampling="truncated-poisson",
                                 max_batch_size=10, unit="user", examples_per_user=2)) is None
