"""Issue 31 plots: chosen levels on mu-vs-epsilon (Kulynych & Honkela Figs. 1-3 b/c), several
sample sizes on de Fondeville Fig. 5, and SVG legends kept as text. Checked by legend label
and by the data drawn against the closed forms."""

import math
import re

import numpy as np
from typer.testing import CliRunner

import fdpkit as fp
from fdpkit._numerics import norm_isf, norm_sf
from fdpkit.cli import app
from fdpkit.report import plots
from fdpkit.report.figures import render

CLOSED_FORM_RTOL = 1e-9
runner = CliRunner()


from _plot_lines import line_data as _line  # noqa: E402
from _plot_lines import new_ax as _ax  # noqa: E402


def _labels(ax):
    return [t.get_text() for t in ax.get_legend().get_texts()]


def test_mu_vs_epsilon_chosen_levels_one_series_each():
    ax = plots.mu_vs_epsilon(_ax(), epsilons=[0.5, 1.0, 2.0, 4.0], fprs=(0.05,), recalls=(1e-3,),
                             deltas=(1e-5, 1e-9))
    labels = _labels(ax)
    assert "same TPR/FPR at FPR 0.05" in labels and "same precision at recall 0.001" in labels
    assert "same ε at δ = 1e-05" in labels and "same ε at δ = 1e-09" in labels
    assert not any("FPR 0.01" in t or "recall 1e-05" in t for t in labels)  # only the levels asked for
    x, y = _line(ax, "same ε at δ = 1e-05")  # K&H Fig. 3b/c: delta_mu(eps) = delta
    np.testing.assert_allclose(fp.delta_for_epsilon_from_mu(y, x), 1e-5, rtol=1e-6)
    # Gomez Table 3 (published.json): eps = 1, 2, 4 at delta 1e-5 give 0.268, 0.502, 0.925
    np.testing.assert_allclose(y[1:], [0.2680511232112942, 0.5015516891696566, 0.9249308976669364], rtol=1e-6)
    x, y = _line(ax, "same TPR/FPR at FPR 0.05")
    small = np.exp(x) * 0.05 < 0.5  # Prop. 3.1 below the knee
    np.testing.assert_allclose(y[small], norm_isf(0.05) - norm_isf(np.exp(x[small]) * 0.05), rtol=CLOSED_FORM_RTOL)


def test_svg_keeps_legend_text():
    svg = render(lambda ax: plots.mu_vs_epsilon(ax, fprs=(0.05,), recalls=(), deltas=(1e-5,)), "svg").decode()
    assert "same TPR/FPR at FPR 0.05" in svg and "same ε at δ = 1e-05" in svg
    assert "<text" in svg


def test_power_effect_and_roc_several_n():
    spec = fp.ZTestSpec(effect=0.2, n=15, sd=0.25, alpha=0.01)
    ax = plots.power_vs_effect(_ax(), spec, mus=(1.0,), ns=(15, 100, 500))
    labels = _labels(ax)
    for n in (15, 100, 500):
        assert f"n = {n}: non-private" in labels and f"n = {n}: Gaussian, μ = 1" in labels
        x, y = _line(ax, f"n = {n}: Gaussian, μ = 1")
        s_n = math.hypot(0.25 / math.sqrt(n), (1 / n) / 1.0)  # de Fondeville Eq. 9
        np.testing.assert_allclose(y, norm_sf(norm_isf(0.01) - x / s_n), rtol=CLOSED_FORM_RTOL)
    ax = plots.ztest_roc(_ax(), spec, mus=(0.5,), ns=(15, 100))
    x, y = _line(ax, "n = 100: μ = 0.5")
    s_n = math.hypot(0.25 / 10, (1 / 100) / 0.5)
    np.testing.assert_allclose(y, norm_sf(norm_isf(x) - 0.2 / s_n), rtol=CLOSED_FORM_RTOL)


def test_cli_plot_levels_and_several_n(tmp_path):
    out = tmp_path / "m.svg"
    r = runner.invoke(app, ["-q", "plot", "mu-vs-epsilon", "--fpr", "0.05", "--fpr", "0.1%", "--recall", "0.01",
                            "--delta", "1e-5", "--delta", "1e-6", "--output", str(out)])
    assert r.exit_code == 0, r.output
    svg = out.read_text()
    for label in ("FPR 0.05", "FPR 0.001", "recall 0.01", "δ = 1e-05", "δ = 1e-06"):
        assert label in svg
    assert "FPR 1e-05" not in svg  # the defaults are replaced by the levels given
    out = tmp_path / "p.svg"
    r = runner.invoke(app, ["-q", "plot", "power-effect", "--n", "15", "--n", "100", "--n", "500", "--sd", "0.25",
                            "--mu", "1", "--output", str(out)])
    assert r.exit_code == 0, r.output
    found = set(re.findall(r"n = (\d+):", out.read_text()))
    assert found == {"15", "100", "500"}
    r = runner.invoke(app, ["-q", "plot", "ztest-roc", "--n", "15", "--n", "100", "-o", str(tmp_path / "r.svg")])
    assert r.exit_code == 0 and "n = 100: μ = 0.5" in (tmp_path / "r.svg").read_text()
    r = runner.invoke(app, ["plot", "epsilon-noise", "--delta", "1e-5", "--delta", "1e-6", "-o", str(tmp_path / "e.svg")])
    assert r.exit_code == 2
    for args in (["roc", "--mu", "1", "--delta", "1e-5"], ["tradeoff", "--mu", "1", "--n", "15"],
                 ["power-effect", "--fpr", "0.05"]):  # an option the kind does not use is refused, not ignored
        r = runner.invoke(app, ["plot", *args, "-o", str(tmp_path / "x.svg")])
        assert r.exit_code == 2 and "only" in r.output


def test_cli_epsilon_range_of_mu_vs_epsilon(tmp_path):
    """K&H Figs. 1-3 b and c differ in the epsilon range shown: --epsilon-max sets it."""
    out = tmp_path / "m.svg"
    r = runner.invoke(app, ["-q", "plot", "mu-vs-epsilon", "--epsilon-max", "2", "--fpr", "0.05", "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert "FPR 0.05" in out.read_text()
    for args, word in ((["mu-vs-epsilon", "--epsilon-max", "0"], "between"),
                       (["mu-vs-epsilon", "--epsilon-max", "nan"], "between"),
                       (["roc", "--mu", "1", "--epsilon-max", "2"], "only")):
        r = runner.invoke(app, ["plot", *args, "-o", str(tmp_path / "x.svg")])
        assert r.exit_code == 2 and word in r.output, (args, r.output)


def test_delta_levels_in_the_open_interval():
    import pytest

    for d in (0.0, 1.0):
        with pytest.raises(ValueError, match="delta must be in"):
            plots.mu_vs_epsilon(_ax(), deltas=(d,))
