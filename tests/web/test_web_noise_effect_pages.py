"""Issue 31 on the web and in the calculator: attack success before and after noise, 95% CI
widths with and without noise, expected |noise|, the page's guidance wording, the mode in the
CSV; the mu-vs-epsilon levels and Gomez Table 2 on the convert page."""

import csv
import io
import math

import pytest

from fdpkit._numerics import norm_isf, norm_sf
from fdpkit.convert.classic import calculate
from fdpkit.convert.noise_effect import ci_width, expected_abs_noise

CALC = {"mode": "laplace", "sensitivity": "1", "epsilon": "0.5", "delta": "", "scale": "", "sigma": "", "k": "1",
        "delta_prime": "1e-5", "releases": "", "fpr": "0.001", "standard_error": ""}
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


def test_calculator_page_csv_and_guidance(client):
    r = client.post("/calculator", data=CALC)
    assert r.status_code == 200
    assert "best attack TPR at FPR 0.001 with noise" in r.text and "95% CI width with noise" in r.text
    assert "expected |noise| (Laplace: b)" in r.text
    assert "between 0.1 and 8" in r.text and "0.1 to 10" not in r.text
    rows = list(csv.reader(io.StringIO(client.post("/calculator/export?format=csv", data=CALC).text)))
    assert rows[1] == ["input", "mode", "laplace"]
    r = client.post("/api/calculator", json={"mode": "gaussian", "epsilon": 1, "delta": 1e-5, "fpr": 0.01})
    assert "best attack TPR at FPR 0.01 with noise (exact σ)" in r.json()["outputs"]


def test_convert_page_levels_and_table2(client):
    r = client.post("/convert", data={"fpr_levels": "0.05, 0.1%", "recall_levels": "", "delta_levels": "1e-5"})
    assert r.status_code == 200
    assert "same TPR/FPR at FPR 0.05" in r.text and "same TPR/FPR at FPR 0.001" in r.text
    assert "same ε at δ = 1e-05" in r.text and "FPR 1e-05" not in r.text
    r = client.post("/convert", data={"delta_levels": "2"})
    assert "between 0 and 1" in r.text
    page = client.get("/convert").text
    assert "0.21 (recomputed 0.25)" in page and "1.31" in page and "16384/60000" in page


def test_plan_page_compares_sample_sizes(client):
    data = {"guide": "utility_first", "effect": "0.2", "n": "100", "sd": "0.25", "alpha": "0.01", "data_range": "1",
            "max_relative_loss": "0.01", "prior": "0.01", "fpr": "0.001", "high_confidence_ok": "on",
            "statistic": "mean", "alternative": "larger", "groups": "1", "tests": "1", "correction": "bonferroni",
            "compare_n": "15, 500"}
    r = client.post("/plan", data=data)
    assert r.status_code == 200
    for n in (15, 100, 500):
        assert f"n = {n}: non-private" in r.text
    assert "one-sided Z-test at level 0.01" in r.text and "7.9, 0.28, 0.048" in r.text
    r = client.post("/plan", data=dict(data, compare_n="abc"))
    assert "compare n must list positive sample sizes" in r.text
