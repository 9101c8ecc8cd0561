"""Several guarantees on one trade-off plot (issue 15, R fdp's fdp() view): each curve checked
against its closed form, bad input named by entry and field, the plot smoke-tested."""

import math

import numpy as np
import pytest
from scipy import stats

from fdpkit.report.compare import MAX_CURVES, compare_guarantees
from fdpkit.report.figures import svg_inline

CLOSED_FORM_ATOL = 1e-12
ALPHA = np.linspace(0.0, 1.0, 11)


def _eps_delta(a, eps, delta):
    return np.maximum.reduce([np.zeros_like(a), 1 - delta - math.exp(eps) * a, math.exp(-eps) * (1 - delta - a)])


def _gdp(a, mu):
    return stats.norm.cdf(stats.norm.isf(a) - mu)


def test_each_kind_matches_its_closed_form():
    cmp = compare_guarantees([
        {"kind": "mu", "mu": 1.0},
        {"kind": "epsilon_delta", "epsilon": 1.0, "delta": 1e-5},
        {"kind": "epsilon", "epsilon": 0.5},
        {"kind": "laplace", "scale": 2.0, "sensitivity": 1.0},
        {"kind": "gaussian", "sigma": 4.0, "sensitivity": 2.0},
    ])
    d = cmp.to_dict(points=11)
    beta = {c["kind"]: np.array(c["beta"]) for c in d["curves"]}
    assert np.allclose(beta["mu"], _gdp(ALPHA, 1.0), atol=CLOSED_FORM_ATOL)
    assert np.allclose(beta["epsilon_delta"], _eps_delta(ALPHA, 1.0, 1e-5), atol=CLOSED_FORM_ATOL)
    assert np.allclose(beta["epsilon"], _eps_delta(ALPHA, 0.5, 0.0), atol=CLOSED_FORM_ATOL)
    assert np.allclose(beta["gaussian"], _gdp(ALPHA, 0.5), atol=CLOSED_FORM_ATOL)  # mu = 2 / 4
    # Laplace at eps = 1/2 (Dong et al. Sec. 2.4): Phi-free closed form, 1 - e^eps a for a < e^-eps / 2
    eps, a = 0.5, 0.1
    assert np.interp(a, ALPHA, beta["laplace"]) == pytest.approx(1 - math.exp(eps) * a, abs=1e-12)
    assert all(c["bound"] == "exact" for c in d["curves"]) and len(d["summary"]) == 5
    s = d["summary"][0]["tpr_at_fpr"]
    assert s["0.001"] == pytest.approx(stats.norm.sf(stats.norm.isf(1e-3) - 1.0), rel=1e-9)
    # the worst case over (eps, delta) mechanisms lies below the Laplace mechanism's own curve
    lap = compare_guarantees([{"kind": "laplace", "epsilon": 0.5}, {"kind": "epsilon", "epsilon": 0.5}]).to_dict(201)
    assert np.all(np.array(lap["curves"][0]["beta"]) >= np.array(lap["curves"][1]["beta"]) - 1e-12)


@pytest.mark.parametrize("entries,match", [
    ([{"kind": "mu", "epsilon": 1}], r"curves\[0\]\.epsilon does not apply"),
    ([{"kind": "mu", "mu": 1}, {"kind": "epsilon_delta", "epsilon": 1, "delta": 2}], r"curves\[1\]\.delta"),
    ([{"kind": "gaussian", "sigma": 0}], r"curves\[0\]\.sigma must be > 0"),
    ([{"kind": "laplace", "epsilon": 1, "scale": 1}], r"curves\[0\]\.epsilon or curves\[0\]\.scale"),
    ([{"kind": "laplace"}], r"curves\[0\]\.epsilon or"),
    ([{"kind": "wat"}], r"curves\[0\]\.kind"),
    ([{"kind": "mu", "mu": float("nan")}], r"curves\[0\]\.mu must be a finite"),
    ([{"kind": "mu", "mu": True}], r"curves\[0\]\.mu must be a number"),
    ([{"kind": "mu", "mu": 1}] * 2, "same guarantee twice"),
    ([], "1 to 8"),
    ([{"kind": "mu", "mu": m} for m in range(MAX_CURVES + 1)], "1 to 8"),
    ("mu=1", "must be a list"),
])
def test_bad_input_names_entry_and_field(entries, match):
    with pytest.raises(ValueError, match=match):
        compare_guarantees(entries)


def test_points_bounds_and_plot_has_legend_and_title():
    cmp = compare_guarantees([{"kind": "mu", "mu": 0.5}, {"kind": "epsilon_delta", "epsilon": 2, "delta": 1e-6}])
    for bad in (1, 5000, 2.5, True):
        with pytest.raises(ValueError, match="points"):
            cmp.to_dict(points=bad)
    svg = svg_inline(cmp.draw, title=cmp.title)
    assert svg.startswith("<svg") and "<title>Trade-off curves: μ = 0.5 GDP; (ε, δ) = (2, 1e-06)</title>" in svg
    assert 'role="img"' in svg and "legend" in svg
