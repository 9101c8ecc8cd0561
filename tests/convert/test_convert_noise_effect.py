"""The calculator's before-and-after numbers (convert.classic.calculate, convert.noise_effect):
attack success before and after noise, 95% CI widths with and without noise, expected |noise|,
checked against closed forms and a Monte Carlo interval (moved from the web page tests)."""

import math

import pytest

from fdpkit._numerics import norm_isf, norm_sf
from fdpkit.convert.classic import calculate
from fdpkit.convert.noise_effect import ci_width, expected_abs_noise

Z = float(norm_isf(0.025))


def test_laplace_before_after():
    out = calculate("laplace", sensitivity=1.0, epsilon=0.5, fpr=1e-3, standard_error=0.3).outputs
    assert out["best attack TPR at FPR 0.001 without noise"] == 1.0
    assert out["best attack TPR at FPR 0.001 with noise"] == pytest.approx(math.exp(0.5) * 1e-3, rel=1e-9)
    assert out["expected |noise| (Laplace: b)"] == 2.0  # the page: "about b"
    assert out["95% CI width without noise (standard error 0.3)"] == pytest.approx(2 * Z * 0.3, rel=1e-12)
    w = out["95% CI width with noise"]
    assert 2 * 2.0 * math.log(20) < w < 2 * 2.0 * math.log(20) + 2 * Z * 0.3


def test_laplace_interval_covers_95_percent():
    """Cross-check: the central interval of N(0, se^2) + Laplace(b) by Monte Carlo."""
    import numpy as np

    rng = np.random.default_rng(1)
    x = rng.normal(0, 0.7, 400_000) + rng.laplace(0, 1.3, 400_000)
    w = ci_width("laplace", 1.3, 0.7)
    assert np.mean(np.abs(x) <= w / 2) == pytest.approx(0.95, abs=0.002)
    assert ci_width("laplace", 1.0) == pytest.approx(2 * math.log(20), rel=1e-12)
    assert expected_abs_noise("gaussian", 2.0) == pytest.approx(2.0 * math.sqrt(2 / math.pi))


def test_gaussian_before_after_closed_form():
    out = calculate("gaussian", sensitivity=1.0, sigma=2.0, delta=1e-5, fpr=1e-3, standard_error=0.5).outputs
    assert out["best attack TPR at FPR 0.001 with noise"] == pytest.approx(float(norm_sf(norm_isf(1e-3) - 0.5)),
                                                                            rel=1e-9)
    assert out["95% CI width with noise"] == pytest.approx(2 * Z * math.hypot(0.5, 2.0), rel=1e-12)
    assert out["expected |noise| (Gaussian: σ√(2/π))"] == pytest.approx(2.0 * math.sqrt(2 / math.pi))


def test_composition_attack_is_a_valid_bound():
    out = calculate("composition", releases="0.5, 0; 1, 0", fpr=1e-3).outputs
    tpr = out["best attack TPR at FPR 0.001 with noise (all releases; any mechanisms)"]
    assert tpr == pytest.approx(math.exp(1.5) * 1e-3, rel=1e-9)  # basic composition is tighter here
    with pytest.raises(ValueError, match="fpr"):
        calculate("laplace", epsilon=1.0, fpr=0.0)
    with pytest.raises(ValueError, match="standard_error"):
        calculate("laplace", epsilon=1.0, standard_error=-1.0)


def test_calculator_extreme_inputs_are_finite_or_refused_by_name():
    """delta = 1e-320 has finite classic and exact answers (1.25 / delta overflowed to an
    infinite classic epsilon); an epsilon or scale whose noise or interval width leaves the
    floats is refused naming it (the message named "scale", a field the Gaussian mode hides)."""
    from fdpkit import ParameterError

    r = calculate("gaussian", sensitivity=1.0, sigma=2.0, delta=1e-320)
    assert r.outputs["classic epsilon"] == pytest.approx(math.sqrt(2 * (math.log(1.25) - math.log(1e-320))) / 2,
                                                         rel=1e-12)
    assert all(math.isfinite(v) for v in r.outputs.values())
    r = calculate("gaussian", sensitivity=1.0, epsilon=1.0, delta=1e-320)
    assert all(math.isfinite(v) for v in r.outputs.values())
    for mode, kw, name in (("gaussian", {"epsilon": 1e-320, "delta": 1e-5}, "epsilon"),
                           ("laplace", {"epsilon": 1e-320}, "epsilon"),
                           ("laplace", {"scale": 1e308}, "scale"),
                           ("gaussian", {"sensitivity": 1e308, "epsilon": 0.5, "delta": 1e-5}, "epsilon")):
        with pytest.raises(ParameterError, match=f"^{name} .* out of range") as info:
            calculate(mode, **kw)
        assert info.value.parameter == name


def test_conversions_past_the_float_range_of_e_eps():
    """mu of pure epsilon-DP past epsilon ~ 709 (e^eps overflowed: mu read inf), the zCDP
    mu bound past rho ~ 24 (read inf where privacy_report states 13.02), sqrt(2 rho) at
    rho = 1e308, and mu = +0 at epsilon 0; the plausibility warning's e^eps past the floats."""
    import fdpkit as fp
    from fdpkit._inputs import plausibility_warnings
    from fdpkit.convert import gaussian_mu_from_rho, mu_bound_from_rho, mu_from_pure_epsilon

    mus = [float(mu_from_pure_epsilon(e)) for e in (699.0, 700.0, 700.5, 710.0, 1e4)]
    assert all(math.isfinite(m) for m in mus) and mus == sorted(mus)
    assert mus[1] == pytest.approx(mus[2], rel=1e-3)  # no jump where the log path takes over
    assert float(mu_from_pure_epsilon(1e308)) == pytest.approx(2 * math.sqrt(2.0) * math.sqrt(1e308), rel=1e-3)  # 2 sqrt(2 eps)
    assert math.copysign(1.0, float(mu_from_pure_epsilon(0.0))) == 1.0
    assert mu_bound_from_rho(24.0) == fp.privacy_report(fp.ZCDP(24.0)).mu
    assert float(gaussian_mu_from_rho(1e308)) == pytest.approx(math.sqrt(2.0) * 1e154, rel=1e-12)
    assert "e^ε ≈ 2.23e+308" in plausibility_warnings(epsilon=710.0)[0]


@pytest.mark.parametrize("given, holds", [({"epsilon": 8.0}, True), ({"epsilon": 20.0}, False),
                                          ({"sigma": 0.6}, True), ({"sigma": 0.3}, False)])
def test_classic_gaussian_beyond_its_proof_says_whether_it_still_holds(given, holds):
    # session 13: at epsilon 8 the calculator said both "the classic bound adds 1% more noise
    # than needed" (classic sigma 0.6057 >= exact 0.6003: private enough) and "its result is not
    # a valid guarantee here"; which one holds is read from the exact answer
    r = calculate("gaussian", sensitivity=1.0, delta=1e-5, **given)
    out = r.outputs
    classic_ok = (out["classic sigma"] >= out["exact sigma (Gaussian DP)"] if "epsilon" in given
                  else out["classic epsilon"] >= out["exact epsilon (Gaussian DP)"])
    assert classic_ok is holds
    (beyond,) = [w for w in r.warnings if "only proven for epsilon < 1" in w]
    assert ("not a valid guarantee" in beyond) is not holds
    assert ("still holds here" in beyond) is holds
