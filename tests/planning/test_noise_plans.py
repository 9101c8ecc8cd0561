"""Plans end in a noise scale; counts, proportions, two-sample, two-sided and multiple tests
(issue 15). Cross-checked against the independent two-sample power functions."""

import math
import re

import pytest

import fdpkit as fp
from fdpkit.planning import GUIDANCE

CLOSED_FORM_RTOL = 1e-9


def test_utility_first_sigma_is_sensitivity_over_mu():
    spec = fp.ZTestSpec(effect=0.2, n=100, sd=0.25, alpha=0.01)
    plan = fp.utility_first(analysis=spec, max_relative_loss=0.01)
    d = plan.to_dict()
    assert d["sigma"] == pytest.approx((1.0 / 100) / plan.mu_min, rel=CLOSED_FORM_RTOL)
    assert d["sensitivity"] == pytest.approx(0.01) and "σ =" in d["noise"][0]
    # the planned noise gives exactly the planned power (de Fondeville Eq. 9)
    s_n = math.hypot(0.25 / 10, d["sigma"])
    assert fp.ztest_power(effect=0.2, n=100, sd=0.25, mu=plan.mu_min, level=0.01) == pytest.approx(
        float(fp.ztest_power(effect=0.2, n=1, sd=s_n, mu=math.inf, level=0.01)), rel=1e-9)


def test_privacy_first_has_sigma_and_laplace_scale():
    spec = fp.ZTestSpec(effect=0.2, n=100, sd=0.25, alpha=0.01, statistic="count")
    plan = fp.privacy_first(blatant_disclosure_ok=False, high_confidence_ok=True, max_attack_power=0.05,
                            fpr=1e-3, analysis=spec)
    d = plan.to_dict()
    gauss, lap = d["options"]
    assert d["sigma"] == pytest.approx(1.0 / gauss["value"], rel=CLOSED_FORM_RTOL)
    assert d["laplace_scale"] == pytest.approx(1.0 / lap["value"], rel=CLOSED_FORM_RTOL)
    assert gauss["noise_parameter"] == "sigma" and lap["noise_parameter"] == "b"
    bounded = fp.privacy_first(blatant_disclosure_ok=False, high_confidence_ok=False, max_relative_risk=3.0,
                               analysis=spec).to_dict()
    assert bounded["sigma"] is None and bounded["laplace_scale"] == pytest.approx(1.0 / math.log(3.0), rel=1e-9)


def test_count_and_proportion_have_the_same_power_but_different_noise():
    p = fp.ZTestSpec(effect=0.05, n=400, sd=0.5, statistic="proportion")
    c = fp.ZTestSpec(effect=0.05, n=400, sd=0.5, statistic="count")
    assert p.power(mu=0.5) == pytest.approx(c.power(mu=0.5), rel=CLOSED_FORM_RTOL)
    assert c.sigma(0.5) == pytest.approx(400 * p.sigma(0.5), rel=CLOSED_FORM_RTOL)
    with pytest.raises(ValueError, match="data_range must be 1"):
        fp.ZTestSpec(effect=0.05, n=400, sd=0.5, statistic="count", data_range=2.0)


@pytest.mark.parametrize("alternative", ["larger", "two-sided"])
def test_two_sample_matches_the_independent_function(alternative):
    spec = fp.ZTestSpec(effect=0.1, n=200, sd=0.25, groups=2, alternative=alternative, data_range=1.0)
    for mu in (0.3, 1.0, math.inf):
        ref = fp.two_sample_power(effect=0.1, n1=200, n2=200, sd=0.25, mu=mu, alternative=alternative)
        assert spec.power(mu=mu) == pytest.approx(ref, rel=1e-12)
    ref = fp.two_sample_power_laplace(effect=0.1, n1=200, n2=200, sd=0.25, epsilon=1.0, alternative=alternative)
    assert spec.laplace_power(epsilon=1.0) == pytest.approx(ref, rel=1e-12)


def test_multiple_testing_level_and_composition_note():
    spec = fp.ZTestSpec(effect=0.2, n=100, sd=0.25, alpha=0.05, tests=5)
    assert spec.level == pytest.approx(0.01)
    bh = fp.ZTestSpec(effect=0.2, n=100, sd=0.25, alpha=0.05, tests=5, correction="bh")
    assert bh.level == pytest.approx(0.01) and "5 tests" in spec.describe()
    plan = fp.utility_first(analysis=spec, required_power=0.9)
    single = fp.utility_first(analysis=fp.ZTestSpec(effect=0.2, n=100, sd=0.25, alpha=0.01), required_power=0.9)
    assert plan.mu_min == pytest.approx(single.mu_min, rel=1e-9)
    assert any("√5" in s for s in plan.to_dict()["noise"])


def test_guidance_is_fdpkits_own_words():
    titles = [t for t, _ in GUIDANCE]
    assert titles[:2] == ["Who runs the analysis", "Observational or experimental"]
    text = " ".join(x for _, x in GUIDANCE)
    assert "central curator" in text and "eyes-off" in text


def test_privacy_first_leads_with_the_option_to_follow():
    """R = 10 at FPR 0.1 does not bind Gaussian noise (μ = ∞, σ = 0): the plan's grade and first
    sentence came from that option ("no meaningful protection"); they now come from the Laplace
    option the plan proposes, and the first line says what to change for a Gaussian plan."""
    spec = fp.ZTestSpec(effect=0.2, n=500, sd=0.5, alpha=0.05)
    plan = fp.privacy_first(blatant_disclosure_ok=False, high_confidence_ok=True, max_relative_risk=10.0, fpr=0.1,
                            analysis=spec)
    gauss, lap = plan.options
    assert math.isinf(gauss.value) and gauss.grade.label == "no meaningful protection"
    assert plan.recommended is lap and plan.mechanism["kind"] == "laplace"
    d = plan.to_dict()
    assert list(d)[:2] == ["headline", "recommended"] and d["recommended"] == 1
    assert d["grade"] == lap.grade.to_dict() and d["grade"]["label"] != "no meaningful protection"
    # ε of the printed noise b = 0.0008686 (2.30256, rounded up), as the ledger records it (session 13)
    assert d["headline"].startswith("Recommended: the Laplace option (ε = 2.303, noise scale b = 0.0008686")
    assert "lower the FPR floor below 1/R = 0.1" in d["headline"]
    assert d["noise"][0].startswith("Laplace mechanism: add noise") and d["noise"][1].startswith("Gaussian mechanism")
    # a binding limit: the Gaussian option, as before
    binding = fp.privacy_first(blatant_disclosure_ok=False, high_confidence_ok=True, max_attack_power=0.05,
                               analysis=spec).to_dict()
    assert binding["recommended"] == 0 and binding["headline"].startswith("Recommended: the Gaussian option")
    assert binding["grade"] == binding["options"][0]["grade"] and binding["noise"][0].startswith("Gaussian")


def test_cli_privacy_first_first_line_is_what_to_do():
    from typer.testing import CliRunner

    from fdpkit.cli import app

    r = CliRunner().invoke(app, ["plan", "privacy-first", "--effect", "0.2", "--n", "500", "--sd", "0.5",
                                 "--max-relative-risk", "10", "--fpr", "0.1"])
    assert r.exit_code == 0, r.output
    lines = [x for x in r.output.splitlines() if x.strip()]
    assert lines[1].startswith("Recommended: the Laplace option") and lines[2].startswith("Laplace mechanism")


def test_subnormal_noise_scale_is_printed_not_a_zero_division():
    # data_range 1e-320 gives a subnormal noise scale: round_safe divided by 10.0 ** -324 == 0
    import fdpkit as fp
    from fdpkit._numerics import round_safe

    spec = fp.ZTestSpec(effect=0.2, n=100, sd=0.25, alpha=0.01, data_range=1e-320)
    plan = fp.privacy_first(blatant_disclosure_ok=False, high_confidence_ok=True, max_attack_power=0.5, fpr=1e-3,
                            analysis=spec)
    assert plan.to_dict()["noise"]
    for x in (1e-320, 1.2345678e-310, 5e-324):
        assert round_safe(x, up=True) >= x >= round_safe(x, up=False) > 0
    assert round_safe(1.2345678e-310, up=True) == 1.235e-310


def test_plans_propose_the_noise_they_print():
    # the proposal (ledger form, /api/plan "mechanism") carried the exact σ 0.0668567 while the
    # plan printed σ = 0.06685 to add: the ledger accounted μ 0.029915 for noise of μ 0.029918
    # (its total on the optimistic side of what was added)
    import re

    from fdpkit.mechanisms import mechanism_from_dict

    spec = fp.ZTestSpec(effect=0.2, n=500, sd=1.0, alpha=0.05)
    plan = fp.utility_first(analysis=spec, required_power=0.8)
    sentence = plan.to_dict()["noise"][0]
    sigma, mu = re.search(r"σ = ([0-9.e-]+) .*μ = ([0-9.e-]+) Gaussian DP", sentence).groups()
    assert plan.mechanism == {"kind": "gaussian", "sigma": float(sigma), "sensitivity": 0.002}
    proposed = fp.privacy_report(mechanism_from_dict(plan.mechanism)).mu
    assert plan.mu_min <= proposed <= float(mu)
    first = fp.privacy_first(blatant_disclosure_ok=True, high_confidence_ok=True, max_attack_power=0.01, fpr=0.001,
                             analysis=spec)
    printed = [float(re.search(r"(?:σ|b) = ([0-9.e-]+) ", s).group(1)) for s in first.to_dict()["noise"]]
    assert [m["sigma" if m["kind"] == "gaussian" else "scale"] for m in first.mechanisms()] == printed
    assert all(p >= o.noise_scale for p, o in zip(printed, first.options))


def test_privacy_first_power_is_of_the_printed_noise():
    # the power column was read at the limit's μ (σ 0.048240, power 0.948851, printed 0.9489)
    # while the plan prints σ = 0.04825 to add (rounded up): that noise's power is 0.948848
    from typer.testing import CliRunner

    from fdpkit.cli import app
    from fdpkit._numerics import round_safe

    for tests, limit in ((1, {"max_attack_power": 0.02}), (3, {"max_attack_power": 0.02}),
                         (1, {"max_relative_risk": 20})):
        spec = fp.ZTestSpec(effect=0.75, n=20, sd=1, tests=tests)
        plan = fp.privacy_first(blatant_disclosure_ok=False, high_confidence_ok=True, fpr=1e-3, analysis=spec, **limit)
        for o in plan.options:
            printed = round_safe(o.noise_scale, up=True)
            value = spec.sensitivity / printed
            at_printed = spec.power(mu=value) if o.parameter == "mu" else spec.laplace_power(epsilon=value)
            at_limit = (spec.power(mu=o.value_per_test) if o.parameter == "mu"
                        else spec.laplace_power(epsilon=o.value_per_test))
            assert o.power == pytest.approx(at_printed, rel=CLOSED_FORM_RTOL) and o.power <= at_limit
            assert o.to_dict()["power"] == o.power
    spec = fp.ZTestSpec(effect=0.75, n=20, sd=1)
    gauss = fp.privacy_first(blatant_disclosure_ok=False, high_confidence_ok=True, max_attack_power=0.02, fpr=1e-3,
                             analysis=spec).options[0]
    assert f"{spec.power(mu=gauss.value):.4g}" == "0.9489" and f"{gauss.power:.6g}" == "0.948848"
    r = CliRunner().invoke(app, ["plan", "privacy-first", "--effect", "0.75", "--n", "20", "--sd", "1",
                                 "--max-attack-power", "0.02", "--fpr", "0.001"], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    assert re.search(r"Gaussian: power\s+│\s+0\.9488\s", r.output)  # rounded down, the printed noise's


def test_describe_says_per_group_only_for_two_groups():
    # session 13: `fdpkit plan` and the Plan page headed a one-sample test "n = 60 per group"
    one = fp.ZTestSpec(effect=0.1, n=60, sd=0.25, alpha=0.05)
    assert "n = 60, level 0.05" in one.describe() and "per group" not in one.describe()
    two = fp.ZTestSpec(effect=0.1, n=60, sd=0.25, alpha=0.05, groups=2)
    assert "two-sample" in two.describe() and "n = 60 per group" in two.describe()
