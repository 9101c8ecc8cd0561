"""The seed papers' missing figures (issue 15): every new plot function draws, and the data
it draws matches the closed forms. Also the published-settings comparison."""

import math

import numpy as np
import pytest

import fdpkit as fp
from fdpkit._numerics import norm_isf, norm_sf
from fdpkit.report import plots
from fdpkit.report.figures import render, svg_inline
from fdpkit.report.published import PUBLISHED, place_among

CLOSED_FORM_RTOL = 1e-9
PUBLISHED_RTOL = 1e-6


from _plot_lines import line_data as _line  # noqa: E402
from _plot_lines import new_ax as _ax  # noqa: E402


def test_mu_vs_epsilon_matches_props():
    ax = plots.mu_vs_epsilon(_ax(), epsilons=[0.5, 1.0, 2.0, 4.0])
    x, y = _line(ax, "any ε-DP mechanism (Gomez Prop. 6.1)")
    np.testing.assert_allclose(y, 2 * norm_isf(1 / (1 + np.exp(x))), rtol=CLOSED_FORM_RTOL)
    x, y = _line(ax, "same TPR/FPR at FPR 1e-05")  # below the knee: Prop. 3.1 first branch
    np.testing.assert_allclose(y, norm_isf(1e-5) - norm_isf(np.exp(x) * 1e-5), rtol=CLOSED_FORM_RTOL)
    x, y = _line(ax, "same precision at recall 0.01")  # Prop. 3.2
    np.testing.assert_allclose(y, norm_isf(np.exp(-x) * 0.01) - norm_isf(0.01), rtol=CLOSED_FORM_RTOL)
    x, y = _line(ax, "rule of thumb ε/5")
    np.testing.assert_allclose(y, x / 5)


def test_precision_vs_recall_closed_forms():
    ax = plots.precision_vs_recall(_ax(), {"g": fp.GaussianCurve(1.0), "l": fp.LaplaceCurve(1.0)})
    b, p = _line(ax, "g (exact)")
    np.testing.assert_allclose(p, b / (b + norm_sf(norm_isf(b) + 1.0)), rtol=1e-7)  # K&H Eq. 9
    b, p = _line(ax, "l (exact)")
    small = b < 0.25  # below the knee the Laplace curve gives precision e^eps / (1 + e^eps)
    np.testing.assert_allclose(p[small], math.e / (1 + math.e), rtol=1e-7)


def test_power_vs_effect_and_ztest_roc():
    spec = fp.ZTestSpec(effect=0.2, n=15, sd=0.25, alpha=0.01)
    ax = plots.power_vs_effect(_ax(), spec, mus=(1.0,), epsilons=(1.0,))
    x, y = _line(ax, "Gaussian, μ = 1")
    s_n = math.hypot(0.25 / math.sqrt(15), (1 / 15) / 1.0)
    np.testing.assert_allclose(y, norm_sf(norm_isf(0.01) - x / s_n), rtol=CLOSED_FORM_RTOL)  # Eq. 9
    x, y = _line(ax, "Laplace, ε = 1")
    assert y[0] == pytest.approx(0.01, rel=1e-6) and np.all(np.diff(y) >= -1e-12)
    ax = plots.ztest_roc(_ax(), spec, mus=(0.5,))
    a, t = _line(ax, "μ = 0.5")
    s_n = math.hypot(0.25 / math.sqrt(15), (1 / 15) / 0.5)
    np.testing.assert_allclose(t, norm_sf(norm_isf(a) - 0.2 / s_n), rtol=CLOSED_FORM_RTOL)


def test_posterior_vs_fpr_closed_form():
    ax = plots.posterior_vs_fpr(_ax(), fp.GaussianCurve(1.0), priors=(0.01,))
    a, q = _line(ax, "prior = 0.01")
    tpr = norm_sf(norm_isf(a) - 1.0)
    np.testing.assert_allclose(q, 0.01 * tpr / (0.99 * a + 0.01 * tpr), rtol=1e-9)  # de Fondeville Eq. 4


def test_epsilon_vs_noise_closed_forms():
    ax = plots.epsilon_vs_noise(_ax(), sensitivity=2.0, delta=1e-5)
    x, y = _line(ax, "Laplace: ε = Δ/b")
    np.testing.assert_allclose(y, 2.0 / x)
    x, y = _line(ax, "Gaussian, classic bound at δ = 1e-05")
    np.testing.assert_allclose(y, math.sqrt(2 * math.log(1.25e5)) * 2.0 / x, rtol=CLOSED_FORM_RTOL)
    x, y = _line(ax, "Gaussian, exact ε at δ = 1e-05")
    for xi, yi in zip(x[::20], y[::20]):
        assert fp.delta_for_epsilon_from_mu(2.0 / xi, yi) == pytest.approx(1e-5, rel=1e-6)


def test_difference_plot_is_on_a_log_axis_and_nonnegative():
    fit = fp.fit_gdp(fp.LaplaceCurve(1.0))
    ax = plots.curve_vs_gdp(_ax(), fp.LaplaceCurve(1.0), fit.mu)
    assert ax.get_xscale() == "log"
    a, d = ax.get_lines()[0].get_xdata(), ax.get_lines()[0].get_ydata()
    assert a.min() <= 1e-9 and np.all(d >= -1e-12)  # mu holds: f >= G_mu everywhere


def test_tradeoff_with_eps_delta_curve_and_subscripts():
    ax = plots.tradeoff(_ax(), {"eps-delta": fp.EpsDeltaCurve(1.0, 1e-2), "lap": fp.LaplaceCurve(1.0)}, mu=1.0)
    x, y = _line(ax, "eps-delta (exact)")
    np.testing.assert_allclose(y, np.maximum.reduce([np.zeros_like(x), 1 - 1e-2 - math.e * x,
                                                     math.exp(-1) * (1 - 1e-2 - x)]), atol=1e-12)
    labels = [ln.get_label() for ln in ax.get_lines()]
    assert not any("G_μ" in lab for lab in labels) and any(r"$G_\mu$" in lab for lab in labels)


def test_every_new_plot_renders_with_an_accessible_title():
    svg = svg_inline(lambda ax: plots.mu_vs_epsilon(ax), title="μ against ε")
    assert svg.startswith("<svg") and "<title>μ against ε</title>" in svg and 'role="img"' in svg
    assert render(lambda ax: plots.ztest_roc(ax, fp.ZTestSpec(effect=0.2, n=15, sd=0.25)), "png")[:4] == b"\x89PNG"


def test_published_references_match_the_reference_file(published):
    by_steps = {(r["noise_multiplier"], r["steps"]): r for r in published["dpsgd"]["cifar10_from_scratch"]}
    dp = [r for r in PUBLISHED if "De et al." in r.name]
    assert len(dp) == 6
    for ref in dp:
        hit = [v for (nm, steps), v in by_steps.items() if f"noise {nm:g}, {steps} steps" in ref.name]
        assert len(hit) == 1, ref.name
        assert ref.mu == pytest.approx(hit[0]["value_mu"], rel=PUBLISHED_RTOL)
        assert ref.epsilon_at_1e5 == pytest.approx(hit[0]["epsilon_at_delta_1e-5"], rel=PUBLISHED_RTOL)
    rr = next(r for r in PUBLISHED if r.name.startswith("randomized response"))
    assert rr.mu == pytest.approx(published["randomized_response"]["rows"][1]["mu_star"], rel=PUBLISHED_RTOL)
    assert all(r.source for r in PUBLISHED)


def test_place_among():
    assert "between" in place_among(1.4) and "ε = 8" in place_among(1.4)
    assert place_among(0.05).startswith("μ = 0.05 is more private")
    assert place_among(5.0).startswith("μ = 5 is less private")
    assert "matches" in place_among(1.5669487)
