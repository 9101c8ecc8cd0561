"""Bad input raises ValueError naming the argument and the value."""

import math

import numpy as np
import pytest

import fdpkit as fp
from fdpkit.curves.points import points_from_csv


@pytest.mark.parametrize("call, match", [
    (lambda: fp.GaussianCurve(1.0).beta(-0.1), r"alpha must be in \[0, 1\], got -0.1"),
    (lambda: fp.GaussianCurve(1.0).beta(1.5), r"alpha .*1.5"),
    (lambda: fp.GaussianCurve(1.0).tpr(math.nan), r"fpr must not be NaN"),
    (lambda: fp.GaussianCurve(1.0).beta([0.1, 2.0]), r"alpha .*2.0 \(at index 1\)"),
    (lambda: fp.GaussianCurve(-1.0), r"mu must be >= 0, got -1.0"),
    (lambda: fp.GaussianCurve(math.inf), r"mu must be finite"),
    (lambda: fp.GaussianCurve(math.nan), r"mu must not be NaN"),
    (lambda: fp.EpsDeltaCurve(-0.5), r"epsilon must be >= 0"),
    (lambda: fp.EpsDeltaCurve(1.0, 1.5), r"delta must be in \[0, 1\], got 1.5"),
    (lambda: fp.LaplaceCurve("x"), r"epsilon must be a number"),
    (lambda: fp.UniformSamplingCurve(1.0, 2.5), r"n must be a positive integer, got 2.5"),
    (lambda: fp.UniformSamplingCurve(0.0, 2), r"mu must be > 0"),
    (lambda: fp.PiecewiseLinearCurve([0, 1], [1, 0, 0]), r"alpha and beta must have the same length, got 2 and 3"),
    (lambda: fp.PiecewiseLinearCurve([0, 0.2, 0.4, 1], [1, 0.75, 0.3, 0]), r"beta must be convex"),
    (lambda: fp.PiecewiseLinearCurve([0, 0.5, 1], [1, 0.2, 0.3]), r"beta must be non-increasing"),
    (lambda: fp.PiecewiseLinearCurve([0, 0.5, 1], [1, 0.6, 0]), r"beta must be <= 1 - alpha"),
    (lambda: fp.PiecewiseLinearCurve([0.1, 1], [0.9, 0]), r"alpha must start at 0 and end at 1"),
    (lambda: fp.PiecewiseLinearCurve([0, 0.6, 0.5, 1], [1, 0.3, 0.3, 0]), r"alpha must be non-decreasing"),
    (lambda: fp.PiecewiseLinearCurve([0, 1], [1, np.nan]), r"beta must not be NaN"),
    (lambda: fp.PiecewiseLinearCurve([0, 1], [1, 0], bound="maybe"), r"bound must be one of"),
    (lambda: fp.fit_gdp(fp.GaussianCurve(1.0), alpha_min=0.7), r"alpha_min must be in \[0, 0.5\), got 0.7"),
    (lambda: fp.fit_gdp("curve"), r"curve must be a TradeOffCurve, got str"),
    (lambda: fp.fit_gdp(fp.PiecewiseLinearCurve([0, 1], [1, 0], bound="upper")), r"curve.bound is 'upper'"),
    (lambda: fp.bayes_risk(fp.GaussianCurve(1.0), 1.2), r"prior must be in \[0, 1\], got 1.2"),
    (lambda: fp.envelope(), r"at least one curve"),
    (lambda: fp.GaussianCurve(1.0).grid(0.3), r"step must divide 1 evenly"),
])
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_given_vertices_are_capped_but_fdpkits_own_curves_are_not(monkeypatch):
    """The public constructors took 10**7 vertices (4.5 s, 1.6 GiB) while curve_from_points
    takes 200,000 points: given vertices are capped at MAX_VERTICES (200,001, a CurveMechanism's
    cap), refused before any pass over them; curves fdpkit builds itself are not capped."""
    from fdpkit.curves.piecewise import MAX_VERTICES
    from fdpkit.mechanisms.curve import MAX_VERTICES as MECHANISM_MAX

    assert MAX_VERTICES == MECHANISM_MAX == 200_001
    n = MAX_VERTICES + 1
    a = np.linspace(0.0, 1.0, n)
    t = np.sqrt(a)  # concave: a valid curve
    builds = {"alpha": [lambda: fp.PiecewiseLinearCurve(a, 1.0 - t), lambda: fp.PiecewiseLinearCurve(a, tpr=t),
                        lambda: fp.PiecewiseLinearCurve.from_tpr(a, t)]}
    for build in builds["alpha"]:
        with pytest.raises(fp.ParameterError, match="alpha must have at most 200,001 vertices") as info:
            build()
        assert info.value.parameter == "alpha"
    # a hull of many points (a finely sampled reference) takes more: MAX_HULL_POINTS
    from fdpkit.curves import piecewise

    assert len(fp.PiecewiseLinearCurve.lower_convex_hull(np.linspace(0.0, 1.0, 400_002), np.sqrt(
        np.linspace(0.0, 1.0, 400_002)))) > 2
    monkeypatch.setattr(piecewise, "MAX_HULL_POINTS", n - 1)
    with pytest.raises(fp.ParameterError, match=f"alpha must have at most {n - 1:,} vertices"):
        fp.PiecewiseLinearCurve.lower_convex_hull(a, t)
    at_cap = np.linspace(0.0, 1.0, MAX_VERTICES)
    assert len(fp.PiecewiseLinearCurve.from_tpr(at_cap, np.sqrt(at_cap))) > 2  # 200,001 vertices: fine
    # fdpkit's own large curves are built whole: the worst case and the envelope of two curves of
    # 150,001 and 150,000 vertices (about 300,000 distinct alphas into one hull or grid)
    b1, b2 = np.linspace(0.0, 1.0, 150_001), np.linspace(0.0, 1.0, 150_000)
    c1 = fp.PiecewiseLinearCurve.from_tpr(b1, np.sqrt(b1))
    c2 = fp.PiecewiseLinearCurve.from_tpr(b2, np.minimum(1.0, 1.2 * b2 ** 0.6))  # crosses c1 at 0.16
    for combined in (fp.worst_case(c1, c2), fp.envelope(c1, c2)):
        assert isinstance(combined, fp.PiecewiseLinearCurve) and len(combined) > 2


@pytest.mark.parametrize("call, parameter", [
    (lambda: fp.curve_from_points([0, 0.5], [1, 0.2, 0]), "fpr"),
    (lambda: fp.curve_from_points(np.zeros(200_001), np.ones(200_001)), "fpr"),
    (lambda: fp.curve_from_points([0, 0.5], [1, 0.7]), "fnr"),
    (lambda: fp.curve_from_points([0.1, 0.5], [0.8, 0.2]), "fpr"),
    (lambda: fp.curve_from_points([0, 0.1, 0.2], [1, 0.4, 0.5]), "fnr"),
    (lambda: fp.curve_from_points([0, 1.5], [1, 0]), "fpr"),
    (lambda: points_from_csv(b"0,1"), "text"),
    (lambda: points_from_csv("fpr,x\n0,1"), "text"),
    (lambda: points_from_csv("0,1\n0.5,y"), "text"),
    (lambda: fp.mu_for_epsilon_delta_table(epsilons=list(range(1, 1002))), "epsilons"),
])
def test_points_and_tables_name_their_argument(call, parameter):
    # these were plain ValueErrors naming the argument only in their text (the web and CLI
    # read the field from ParameterError.parameter)
    with pytest.raises(fp.ParameterError) as info:
        call()
    assert info.value.parameter == parameter
