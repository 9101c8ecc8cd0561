"""The calculator, convert and plan pages: the before-and-after outputs and guidance wording on
the calculator page, the mode in its CSV; the mu-vs-epsilon levels and Gomez Table 2 on the
convert page; several sample sizes on the plan page."""

import csv
import io

CALC = {"mode": "laplace", "sensitivity": "1", "epsilon": "0.5", "delta": "", "scale": "", "sigma": "", "k": "1",
        "delta_prime": "1e-5", "releases": "", "fpr": "0.001", "standard_error": ""}


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
