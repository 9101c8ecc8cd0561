"""Privacy-first and utility-first guides (de Fondeville Sec. 5)."""

import json
import math

import pytest

import fdpkit as fp

SPEC = fp.ZTestSpec(effect=0.2, n=100, sd=0.25, alpha=0.01)


def test_privacy_first_families_table1():
    plan = fp.privacy_first(blatant_disclosure_ok=False, high_confidence_ok=False, max_relative_risk=5.0, analysis=SPEC)
    assert plan.admissible_families == ("bounded",)
    assert set(plan.excluded) == {"graceful", "catastrophic"}
    (lap,) = plan.options
    assert lap.mechanism == "Laplace" and lap.value == pytest.approx(math.log(5.0))
    assert lap.relative_risk <= 5.0 * (1 + 1e-9) and 0 < lap.power <= 1
    plan = fp.privacy_first(blatant_disclosure_ok=True, high_confidence_ok=True, max_attack_power=0.05, fpr=1e-3, analysis=SPEC)
    assert plan.admissible_families == ("graceful", "bounded", "catastrophic")
    gauss = plan.options[0]
    assert gauss.attack_power <= 0.05 + 1e-12 and gauss.attack_power == pytest.approx(0.05, rel=1e-6)
    assert plan.notes
    json.dumps(plan.to_dict())


def test_utility_first_reads_mu_as_risk(published):
    plan = fp.utility_first(analysis=SPEC, max_relative_loss=0.01, prior=0.01, fpr=1e-3)
    assert plan.mu_min == pytest.approx(published["ztest_power_mu_min"]["value"]["100"], rel=1e-4)
    assert plan.power >= 0.99 * plan.nonprivate_power - 1e-12
    g = fp.GaussianCurve(plan.mu_min)
    assert plan.posterior == pytest.approx(fp.posterior(g, 0.01, 1e-3))
    assert plan.epsilon_at_1e5 == pytest.approx(fp.epsilon_for_delta_from_mu(plan.mu_min, 1e-5))
    assert plan.reachable
    json.dumps(plan.to_dict())


def test_utility_first_unreachable():
    spec = fp.ZTestSpec(effect=0.2, n=2, sd=0.25, alpha=0.01)
    plan = fp.utility_first(analysis=spec, required_power=0.99)
    assert not plan.reachable and plan.mu_min == math.inf and "unreachable" in plan.reason
    assert json.loads(json.dumps(plan.to_dict()))["mu_min"] == "inf"


@pytest.mark.parametrize("call, match", [
    (lambda: fp.privacy_first(blatant_disclosure_ok=False, high_confidence_ok=True), r"exactly one limit"),
    (lambda: fp.privacy_first(blatant_disclosure_ok=False, high_confidence_ok=True, max_attack_power=1e-5, fpr=1e-3), r"max_power must be >= fpr"),
    (lambda: fp.utility_first(analysis=SPEC), r"exactly one criterion"),
    (lambda: fp.ZTestSpec(effect=0.2, n=100, sd=0.25, alternative="up"), r"alternative must be one of"),
    (lambda: fp.ZTestSpec(effect=0.2, n=0, sd=0.25), r"n must be a positive number"),
])
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_privacy_first_relative_risk_beyond_the_laplace_range_names_it():
    with pytest.raises(fp.ParameterError, match=r"^max_relative_risk must be in \(1, 1.01423e\+304\]") as e:
        fp.privacy_first(blatant_disclosure_ok=False, high_confidence_ok=True, max_relative_risk=1e308)
    assert e.value.parameter == "max_relative_risk"
    top = fp.privacy_first(blatant_disclosure_ok=False, high_confidence_ok=True, max_relative_risk=1.01423e304)
    assert top.options[-1].value <= 700
