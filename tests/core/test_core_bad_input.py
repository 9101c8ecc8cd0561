"""Bad input raises ValueError naming the argument and the value."""

import math

import numpy as np
import pytest

import fdpkit as fp


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
