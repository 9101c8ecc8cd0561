"""Plots (matplotlib). Every function draws on the Axes it is given (``ax=``) and returns
it; nothing here opens a window (the Agg backend is selected on import of this module by
``fdpkit.report.figures``). Axis labels say FPR/TPR/FNR in words."""

from __future__ import annotations

import math
from typing import Callable, Mapping, Sequence

import numpy as np

from fdpkit.convert import epsilon_for_delta
from fdpkit.curves import GaussianCurve, LaplaceCurve, TradeOffCurve
from fdpkit.risk import posterior, relative_risk

FPR_LABEL = "False positive rate (FPR, α)"
FNR_LABEL = "False negative rate (FNR, β)"
TPR_LABEL = "True positive rate (TPR = 1 − β)"
_GRID = np.linspace(0.0, 1.0, 401)
_LOG_GRID = np.geomspace(1e-12, 1.0, 400)


def tradeoff(ax, curves: Mapping[str, TradeOffCurve], *, mu: float | None = None):
    """Several trade-off curves with the 1 − α diagonal (R fdp's ``fdp()`` view)."""
    for name, c in curves.items():
        ax.plot(_GRID, c.beta(_GRID), label=f"{name} ({c.bound})")
    if mu is not None and math.isfinite(mu):
        ax.plot(_GRID, GaussianCurve(mu).beta(_GRID), "--", label=f"G_μ, μ = {mu:.4g}")
    ax.plot([0, 1], [1, 0], ":", color="grey", label="1 − α (no privacy loss)")
    ax.set_xlabel(FPR_LABEL)
    ax.set_ylabel(FNR_LABEL)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_aspect("equal")
    ax.legend(fontsize="small")
    return ax


def roc_loglog(ax, curves: Mapping[str, TradeOffCurve], *, mu: float | None = None):
    """TPR against FPR on log-log axes: the membership-inference view of the tail."""
    for name, c in curves.items():
        ax.loglog(_LOG_GRID, np.maximum(c.tpr(_LOG_GRID), 1e-300), label=f"{name} ({c.bound})")
    if mu is not None and math.isfinite(mu):
        ax.loglog(_LOG_GRID, GaussianCurve(mu).tpr(_LOG_GRID), "--", label=f"G_μ, μ = {mu:.4g}")
    ax.loglog(_LOG_GRID, _LOG_GRID, ":", color="grey", label="TPR = FPR (random guess)")
    ax.set_xlabel(FPR_LABEL)
    ax.set_ylabel(TPR_LABEL)
    ax.set_ylim(1e-12, 1.5)
    ax.legend(fontsize="small")
    return ax


def curve_vs_gdp(ax, curve: TradeOffCurve, mu: float):
    """The curve against its fitted G_μ and the difference f − G_μ (Gomez et al. Fig. 7)."""
    g = GaussianCurve(mu)
    diff = curve.beta(_GRID) - g.beta(_GRID)
    ax.plot(_GRID, diff, label="f(α) − G_μ(α)")
    ax.axhline(0.0, color="grey", lw=0.8)
    ax.set_xlabel(FPR_LABEL)
    ax.set_ylabel("FNR difference (≥ 0 where μ holds)")
    ax.legend(fontsize="small")
    return ax


def privacy_profile(ax, curves: Mapping[str, TradeOffCurve] | None = None, *, mus: Sequence[float] = ()):
    """ε(δ) for curves (their implied profile) and for μ-GDP."""
    deltas = np.geomspace(1e-12, 1e-1, 60)
    for name, c in (curves or {}).items():
        ax.semilogx(deltas, [c.epsilon_for_delta(d) for d in deltas], label=name)
    for m in mus:
        ax.semilogx(deltas, epsilon_for_delta(m, deltas), "--", label=f"μ = {m:g}")
    ax.set_xlabel("δ")
    ax.set_ylabel("ε(δ)")
    ax.legend(fontsize="small")
    return ax


def posterior_vs_prior(ax, curve: TradeOffCurve, *, fprs: Sequence[float] = (1e-3, 1e-2, 1e-1)):
    """Posterior membership probability after a positive attack (de Fondeville Fig. 2)."""
    priors = np.linspace(0.0, 1.0, 201)
    for a in fprs:
        ax.plot(priors, posterior(curve, priors, a), label=f"FPR = {a:g}")
    ax.plot([0, 1], [0, 1], ":", color="grey", label="posterior = prior")
    ax.set_xlabel("Prior probability of membership")
    ax.set_ylabel("Posterior after a positive attack")
    ax.legend(fontsize="small")
    return ax


def relative_risk_vs_fpr(ax, curves: Mapping[str, TradeOffCurve]):
    """Relative disclosure risk ρ_α0 = TPR(α0)/α0 against α0 (de Fondeville Fig. 3)."""
    a = np.geomspace(1e-8, 1.0, 200)
    for name, c in curves.items():
        ax.loglog(a, [relative_risk(c, fpr_min=x) for x in a], label=name)
    ax.set_xlabel("Smallest FPR considered (α0)")
    ax.set_ylabel("Relative disclosure risk ρ")
    ax.legend(fontsize="small")
    return ax


def attack_power_vs_mu(ax, *, fprs: Sequence[float] = (1e-4, 1e-3, 1e-2), mu_max: float = 5.0,
                       laplace: bool = True):
    """Best attack TPR at fixed FPR as μ grows (de Fondeville Fig. 4)."""
    mus = np.linspace(0.0, mu_max, 101)
    for a in fprs:
        ax.plot(mus, [GaussianCurve(m).tpr(a) for m in mus], label=f"Gaussian, FPR = {a:g}")
        if laplace:
            ax.plot(mus, [LaplaceCurve(m).tpr(a) for m in mus], "--", label=f"Laplace (ε = μ), FPR = {a:g}")
    ax.set_xlabel("Privacy-loss parameter μ")
    ax.set_ylabel(TPR_LABEL)
    ax.legend(fontsize="small")
    return ax


def power_curve(ax, xs: Sequence[float], series: Mapping[str, Callable[[float], float]], *,
                xlabel: str = "μ"):
    """Test power against an input (effect size or μ) for several settings (de Fondeville
    Fig. 5). ``series`` maps a label to a function of the x value."""
    for name, fn in series.items():
        ax.plot(xs, [fn(x) for x in xs], label=name)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("Power of the test")
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize="small")
    return ax


def power_vs_mu(ax, power_at: Callable[[float], float], *, nonprivate: float | None = None,
                mu_range: tuple[float, float] = (0.02, 20.0), label: str = "power"):
    """Power of a planned analysis against mu on a log axis (de Fondeville Fig. 5)."""
    mus = np.geomspace(*mu_range, 80)
    ax.semilogx(mus, [power_at(m) for m in mus], label=label)
    if nonprivate is not None:
        ax.axhline(nonprivate, ls="--", color="grey", label="non-private power")
    ax.set_xlabel("μ (Gaussian DP)")
    ax.set_ylabel("Power of the test")
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize="small")
    return ax
