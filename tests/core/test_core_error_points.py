"""Issue 31: a curve from (type I, type II) error points in one step (R fdp's fdp() of a
data frame, lower convex hull) and its fit_gdp as R's est_gdp, cross-checked against the
closed form max_i isf(alpha_i) + isf(beta_i)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fdpkit as fp
from fdpkit._numerics import norm_isf
from fdpkit.curves.points import points_from_csv

MU_RTOL = 1e-9  # fit_gdp adds a relative safety margin of about 1e-12


def est_gdp(fpr, fnr):
    """R's est_gdp by its definition: the smallest mu with G_mu(alpha_i) <= beta_i."""
    a, b = np.asarray(fpr, float), np.asarray(fnr, float)
    return float(np.max(norm_isf(a) + norm_isf(b)))


def test_gaussian_grid_reproduces_mu():
    g = fp.GaussianCurve(1.0)
    a = np.linspace(0, 1, 101)  # R fdp's canonical grid, gdp(1)()
    c = fp.curve_from_points(a, g.beta(a))
    fit = fp.fit_gdp(c, alpha_min=0)
    assert fit.mu == pytest.approx(est_gdp(a[1:-1], g.beta(a[1:-1])), rel=MU_RTOL)
    assert fit.mu == pytest.approx(1.0, rel=1e-6) and fit.mu >= 1.0 - 1e-9
    assert c.bound == "lower"


def test_hull_drops_points_above_and_keeps_order_free():
    c = fp.curve_from_points([0.3, 0, 1, 0.2, 0.1], [0.2, 1, 0, 0.4, 0.5])
    assert list(c.alphas) == [0.0, 0.1, 0.3, 1.0]
    np.testing.assert_allclose(c.betas, [1.0, 0.5, 0.2, 0.0], atol=1e-15)
    assert fp.fit_gdp(c, alpha_min=0).mu == pytest.approx(est_gdp([0.1, 0.2, 0.3], [0.5, 0.4, 0.2]), rel=MU_RTOL)
    # (1, 0) is added when missing; ties in fpr keep the smaller fnr
    c = fp.curve_from_points([0, 0.5, 0.5], [1, 0.3, 0.2])
    assert c.alphas[-1] == 1.0 and c.beta(0.5) == pytest.approx(0.2)


@pytest.mark.parametrize("fpr, fnr, match", [
    ([0, 0.1, 0.2], [1, 0.4, 0.5], r"point 2 \(fpr=0.2, fnr=0.5\) has a larger fnr than point 1"),
    ([0, 1.5], [1, 0], r"fpr must be in \[0, 1\]: point 1 \(fpr=1.5"),
    ([0, 0.2], [1, -0.1], r"fnr must be in \[0, 1\]: point 1"),
    ([0, 0.5], [1, 0.7], r"point 1 \(fpr=0.5, fnr=0.7\) has fpr \+ fnr = 1.2"),
    ([0.1, 0.2], [0.5, 0.4], r"fpr must include 0"),
    ([0, float("nan")], [1, 0], r"point 1 \(fpr=nan"),
    ([0, 0.1], [1], r"same length"),
])
def test_bad_points_named(fpr, fnr, match):
    with pytest.raises(ValueError, match=match):
        fp.curve_from_points(fpr, fnr)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=1, max_size=30))
def test_fit_never_above_any_point(pairs):
    """Soundness: G_mu with the fitted mu lies below every point (est_gdp's promise)."""
    a = np.array([0.0] + [p for p, _ in pairs])
    b = np.array([1.0] + [min(q, 1 - p) for p, q in pairs])
    order = np.argsort(a, kind="stable")
    a, b = a[order], np.minimum.accumulate(b[order])
    c = fp.curve_from_points(a, b)
    fit = fp.fit_gdp(c, alpha_min=0)
    if np.isfinite(fit.mu):
        assert np.all(fp.GaussianCurve(fit.mu).beta(a) <= b + 1e-12)
        assert np.all(c.beta(a) <= b + 1e-12)  # the hull is below every point


def test_points_from_csv_headers():
    a, b = points_from_csv("alpha,beta\n0,1\n0.1,0.5\n1,0\n")
    assert list(a) == [0, 0.1, 1] and list(b) == [1, 0.5, 0]
    a, b = points_from_csv("# from my audit\nfpr,tpr\n0,0\n0.1,0.5\n")
    assert list(b) == [1, 0.5]
    a, b = points_from_csv("0,1\n0.2,0.3\n")
    assert list(a) == [0, 0.2]
    with pytest.raises(ValueError, match="row 2"):
        points_from_csv("fpr,fnr\n0,1\n0.1,x\n")
    with pytest.raises(ValueError, match="header"):
        points_from_csv("a,b\n0,1\n")
    # two columns for one rate: the first was read and the other ignored without a word
    for text in ("fpr,alpha,fnr\n0,0.5,1\n1,1,0\n", "fpr,fnr,tpr\n0,1,0.5\n1,0,1\n"):
        with pytest.raises(fp.ParameterError, match="columns for one rate"):
            points_from_csv(text)
    # decimal commas: "0,1,0,5" was read as the point (0, 1), its other fields ignored
    for text in ("fpr,fnr\n0,1\n0,1,0,5\n1,0\n", "0,1\n0,1,0,5\n1,0\n"):
        with pytest.raises(fp.ParameterError, match="row 2 has 4 fields, the first line 2"):
            points_from_csv(text)


def test_cli_and_web_accept_a_csv_of_points(tmp_path):
    import json

    from fastapi.testclient import TestClient
    from typer.testing import CliRunner

    from fdpkit.cli import app
    from fdpkit.web.main import create_app

    csv_text = "alpha,beta\n0,1\n0.1,0.5\n0.2,0.4\n0.3,0.2\n1,0\n"
    expected = est_gdp([0.1, 0.3], [0.5, 0.2])
    path = tmp_path / "points.csv"
    path.write_text(csv_text)
    r = CliRunner().invoke(app, ["report", "points", str(path), "--format", "json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["guarantee"]["mu"] == pytest.approx(expected, rel=1e-6)
    r = CliRunner().invoke(app, ["-q", "plot", "tradeoff", "--points", str(path), "-o", str(tmp_path / "t.svg")])
    assert r.exit_code == 0 and "points points.csv" in (tmp_path / "t.svg").read_text()
    bad = tmp_path / "bad.csv"
    bad.write_text("fpr,fnr\n0,1\n0.1,0.4\n0.2,0.5\n")
    r = CliRunner().invoke(app, ["report", "points", str(bad)])
    assert r.exit_code == 2 and "point 2 (fpr=0.2, fnr=0.5)" in r.output
    client = TestClient(create_app())
    r = client.post("/api/report/points", json={"points": csv_text})
    assert r.status_code == 200 and r.json()["guarantee"]["mu"] == pytest.approx(expected, rel=1e-6)
    r = client.post("/report", data={"kind": "points", "points": csv_text, "points_bound": "exact",
                                     "discretization": "1e-4"})
    assert r.status_code == 200 and "1.367" in r.text  # mu 1.36602, printed rounded up


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=60))
def test_points_csv_refuses_with_value_errors_only(text):
    try:
        fpr, fnr = points_from_csv(text)
        fp.curve_from_points(fpr, fnr)
    except ValueError:
        pass


def test_epsilon_beyond_the_float_range_of_e_eps_is_not_cut_at_709():
    """A vertex at a subnormal FPR has a slope above 1e308: delta(eps) must be read with
    e^eps alpha in logs. It read as inf, delta(710) = 0, and epsilon stopped at 709.8 where
    the curve needs ln(9e-5 / 1e-320) = 727.5 (an epsilon too small: unsound)."""
    import math

    import fdpkit as fp

    c = fp.curve_from_points([0, 1e-320, 1], [1, 0.9999, 0])
    eps = c.epsilon_for_delta(1e-5)
    assert eps >= math.log(9e-5) - math.log(1e-320) - 1e-9 and eps < 727.52
    assert float(c.delta_for_epsilon(eps)) <= 1e-5 < float(c.delta_for_epsilon(eps - 1e-6))
