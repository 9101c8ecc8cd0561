"""A fitted mu read with its range (a report's alpha_min and tau): every figure of the reading,
not only the TPR at the asked FPR, is the run's certified bound TPR <= 1 - G_mu(FPR) + tau beyond
the range (session 12: advantage, relative risk over all FPR, failure mode and plots were mu's)."""

import json
import math
import re
from html import unescape

import numpy as np
import pytest
from typer.testing import CliRunner

import fdpkit as fp
from fdpkit._numerics import safe_g
from fdpkit.cli import app
from fdpkit.risk._range_bound import RangeBound

GRID = np.unique(np.concatenate([np.geomspace(1e-14, 1.0, 20001), np.linspace(0.0, 1.0, 20001)[1:]]))


def _bound(mu, lo, tau, a=GRID):
    """The run's bound (1) of fdpkit.risk._range_bound, written out independently."""
    g = fp.GaussianCurve(mu)
    out = (a < lo) | (g.beta(a) < lo)
    return np.minimum(1.0, g.tpr(a) + np.where(out, tau, 0.0))


def test_advantage_is_the_runs_bound_where_the_range_misses_the_best_attack():
    # mu = 1 holds only for FPR and FNR >= 0.4; mu-GDP's best attack is at FPR Phi(-1/2) = 0.31, outside:
    # the reading said advantage 0.3829 (mu-GDP's), below the bound's max TPR - FPR 0.3839
    r = fp.read_guarantee("mu", mu=1.0, mu_fpr_min=0.4, mu_tau=1e-3)
    best = float(np.max(_bound(1.0, 0.4, 1e-3) - GRID))
    assert r.advantage >= best > fp.advantage(fp.GaussianCurve(1.0)) + 0.99e-3
    assert r.advantage <= fp.advantage(fp.GaussianCurve(1.0)) + 1e-3 + 1e-15


@pytest.mark.parametrize("seed", range(5))
def test_every_summary_bounds_the_run_from_above(seed):
    rng = np.random.default_rng(seed)
    for _ in range(40):
        mu, lo = float(rng.uniform(0.0, 4.0)), float(10 ** rng.uniform(-12, math.log10(0.49)))
        tau, a = float(10 ** rng.uniform(-9, -0.5)), float(10 ** rng.uniform(-10, -0.01))
        r = fp.read_guarantee("mu", mu=mu, fpr=a, mu_fpr_min=lo, mu_tau=tau)
        b = _bound(mu, lo, tau)
        gdp = fp.advantage(fp.GaussianCurve(mu))
        assert np.max(b - GRID) - 1e-12 <= r.advantage <= min(1.0, gdp + tau) + 1e-15
        above = GRID >= a
        assert r.relative_risk_at_fpr >= float(np.max(b[above] / GRID[above])) * (1 - 1e-12)
        assert r.relative_risk == math.inf  # B(0+) = tau > 0: unbounded, whatever mu
        assert r.failure_mode == "catastrophic" and f"τ = {safe_g(tau, 4, up=True)}" in r.plain_language[2]
        # the precision the plots draw: never below any FPR at which the bound reaches the recall
        recall = np.geomspace(1e-9, 0.999, 60)
        needed = RangeBound(mu, lo, tau).fpr_for_tpr(recall)
        for t, f in zip(recall, needed):
            assert GRID[b >= t].min() >= f * (1 - 1e-9)


def test_failure_mode_and_relative_risk_say_what_the_certificate_allows():
    # mu = 0 with tau: mu-GDP alone is "none" with relative risk 1, but the run's bound allows TPR tau at FPR 0
    r = fp.read_guarantee("mu", mu=0.0, mu_fpr_min=1e-6, mu_tau=1e-4)
    assert r.relative_risk == math.inf and r.failure_mode == "catastrophic"
    assert "probability up to τ = 0.0001" in r.plain_language[2] and "μ-GDP alone rules out" in r.plain_language[2]
    # no slack: mu's own reading
    same, plain = fp.read_guarantee("mu", mu=1.0, mu_fpr_min=1e-6, mu_tau=0.0), fp.read_guarantee("mu", mu=1.0)
    assert (same.failure_mode, same.relative_risk, same.advantage) == (plain.failure_mode, plain.relative_risk,
                                                                     plain.advantage)


def test_cli_api_page_and_python_print_one_reading():
    from fastapi.testclient import TestClient

    from fdpkit.web.main import create_app

    client = TestClient(create_app())
    kw = {"mu": 1.0, "mu_fpr_min": 0.4, "mu_tau": 1e-3, "fpr": 1e-3}
    python = fp.read_guarantee("mu", **kw)
    api = client.post("/api/risk", json={"guarantee": "mu", **kw}).json()
    args = ["risk", "--mu", "1", "--mu-fpr-min", "0.4", "--mu-tau", "1e-3", "--fpr", "1e-3"]
    cli = json.loads(CliRunner().invoke(app, [*args, "-f", "json"]).stdout)
    for key in ("advantage", "failure_mode", "relative_risk", "range"):
        assert api[key] == cli[key] == json.loads(json.dumps(python.to_dict()))[key]
    up = safe_g(python.advantage, 4, up=True)  # an upper bound, rounded up: 0.3839249 reads 0.384
    assert up == "0.384" and float(up) >= python.advantage
    text = CliRunner().invoke(app, args, env={"COLUMNS": "200"}).output
    assert re.search(rf"advantage \(max TPR - FPR\) \(the run's bound\)\s*│\s*{re.escape(up)}\s", text)
    assert "failure mode (the run's bound)" in text and "μ-GDP alone rules out" in text
    page = client.get("/risk", params={"guarantee": "mu", **{k: str(v) for k, v in kw.items()}}).text
    cell = re.sub(r"<[^>]+>", "", re.search(r'id="advantage">(.*?)</td>', page).group(1))
    assert cell == up and "advantage (max TPR − FPR) (the run&#39;s bound)" in page
    assert "blatant disclosure not ruled out (probability ≤ τ = 0.001): catastrophic by the bound; μ-GDP alone: graceful" in unescape(
        re.sub(r"<[^>]+>", "", re.search(r'id="failure-mode">(.*?)</td>', page).group(1)))


def test_risk_plots_draw_the_runs_bound():
    # the plots drew mu-GDP's curve beside numbers of the run's bound: at FPR 1e-8, outside a range
    # from 1e-6, the posterior line read mu-GDP's where the reading at that FPR gives the bound's
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from fdpkit.report import plots
    from fdpkit.web.routers.risk import reading

    rng = {"mu_fpr_min": 1e-6, "mu_tau": 1e-4}
    data, drawn = reading("mu", 1.567, None, None, 0.01, 1e-3, **rng)
    assert isinstance(drawn, RangeBound)
    fig, ax = plt.subplots()
    plots.posterior_vs_fpr(ax, drawn, priors=(0.01,))
    x, y = ax.lines[0].get_xdata(), ax.lines[0].get_ydata()
    assert x[0] < 1e-6  # outside the range: the bound's posterior, as the reading at that FPR says
    first = fp.read_guarantee("mu", mu=1.567, fpr=float(x[0]), **rng)
    assert y[0] == pytest.approx(first.posterior, rel=1e-12)
    assert y[0] > fp.posterior(fp.GaussianCurve(1.567), 0.01, x[0]) + 0.02  # 0.992 against 0.964
    ax.clear()
    plots.roc_loglog(ax, {"run": drawn}, mu=1.567)
    assert np.all(ax.lines[0].get_ydata() >= ax.lines[1].get_ydata())  # the bound above mu-GDP's dashed line
    plt.close(fig)
