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
    # the risk of the noise the plan prints (σ rounded down: μ a little above μ_min)
    assert plan.mu_min <= plan.mu_of_noise <= plan.mu_min * (1 + 1e-3)
    g = fp.GaussianCurve(plan.mu_of_noise)
    assert plan.posterior == pytest.approx(fp.posterior(g, 0.01, 1e-3))
    assert plan.epsilon_at_1e5 == pytest.approx(fp.epsilon_for_delta_from_mu(plan.mu_of_noise, 1e-5))
    assert plan.reachable
    json.dumps(plan.to_dict())


def test_utility_first_unreachable():
    spec = fp.ZTestSpec(effect=0.2, n=2, sd=0.25, alpha=0.01)
    plan = fp.utility_first(analysis=spec, required_power=0.99)
    assert not plan.reachable and plan.mu_min == math.inf and "unreachable" in plan.reason
    assert json.loads(json.dumps(plan.to_dict()))["mu_min"] == "inf"


@pytest.mark.parametrize("call, match", [
    (lambda: fp.privacy_first(blatant_disclosure_ok=False, high_confidence_ok=True), r"exactly one limit"),
    (lambda: fp.privacy_first(blatant_disclosure_ok=False, high_confidence_ok=True, max_attack_power=1e-5, fpr=1e-3), r"^max_attack_power must be above fpr"),
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


FPRS = (1e-6, 1e-3, 0.01, 0.05, 0.1, 0.3, 0.5, 0.9)


@pytest.mark.parametrize("fpr", FPRS)
@pytest.mark.parametrize("limit", [1.01, 2.0, 10.0, 50.0, 1e6])
@pytest.mark.parametrize("high_confidence_ok", [True, False])
def test_privacy_first_relative_risk_plans_meet_the_limit(fpr, limit, high_confidence_ok):
    # at FPR >= 1/R the limit cannot bind: the Gaussian option was mu = inf with relative risk
    # inf reported as meeting R = 50 (at FPR 0.1 no attack exceeds TPR/FPR <= 1/FPR = 10)
    plan = fp.privacy_first(blatant_disclosure_ok=False, high_confidence_ok=high_confidence_ok,
                            max_relative_risk=limit, fpr=fpr, analysis=SPEC)
    for o in plan.options:
        assert math.isfinite(o.relative_risk) and 1.0 <= o.relative_risk <= limit
        assert 0 < o.attack_power <= 1 and not math.isnan(o.power) and o.noise_scale >= 0
        assert (o.noise_scale == 0) == (o.value == math.inf)
    gauss = [o for o in plan.options if o.parameter == "mu"]
    if gauss and 1 / fpr <= limit:
        (g,) = gauss
        assert g.value == math.inf and g.attack_power == 1.0 and g.relative_risk == pytest.approx(1 / fpr)
        assert any("does not bind" in n for n in plan.notes)
        assert any("no noise" in s for s in plan.to_dict()["noise"])
    elif gauss:
        assert math.isfinite(gauss[0].value) and gauss[0].value > 0
    assert "nan" not in json.dumps(plan.to_dict())


@pytest.mark.parametrize("fpr", FPRS)
@pytest.mark.parametrize("limit", [1e-7, 1e-4, 0.005, 0.05, 0.2, 0.5, 0.95, 1.0])
def test_privacy_first_attack_power_plans_or_refusals_name_the_limit(fpr, limit):
    # a limit at or below the FPR failed as "max_power must be >= fpr" (an internal name) or,
    # at equality, as "mu must be > 0, got 0.0"; a limit of 1 planned no noise at all
    if limit <= fpr or limit >= 1:
        with pytest.raises(fp.ParameterError, match=r"^max_attack_power must be (above fpr|below 1)") as e:
            fp.privacy_first(blatant_disclosure_ok=False, high_confidence_ok=True, max_attack_power=limit, fpr=fpr,
                             analysis=SPEC)
        assert e.value.parameter == "max_attack_power"
        return
    plan = fp.privacy_first(blatant_disclosure_ok=False, high_confidence_ok=True, max_attack_power=limit, fpr=fpr,
                            analysis=SPEC)
    for o in plan.options:
        assert 0 < o.value < math.inf and o.attack_power <= limit * (1 + 1e-12)
        assert math.isfinite(o.relative_risk) and o.noise_scale > 0


@pytest.mark.parametrize("kw", [dict(max_relative_risk=math.nextafter(1.0, 2.0), fpr=1e-6),
                                dict(max_attack_power=math.nextafter(1e-6, 1.0), fpr=1e-6)])
def test_privacy_first_limit_at_no_information_names_it(kw):
    # only mu = 0 meets these in floats: it failed as "mu must be > 0, got 0.0" (an internal name)
    name = next(k for k in kw if k != "fpr")
    with pytest.raises(fp.ParameterError, match=rf"^{name}=\S+ is too close to no attack advantage") as e:
        fp.privacy_first(blatant_disclosure_ok=False, high_confidence_ok=True, **kw)
    assert e.value.parameter == name
