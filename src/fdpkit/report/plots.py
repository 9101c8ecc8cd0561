"""Plots (matplotlib). Every function draws on the Axes it is given (``ax=``) and returns
it; nothing here opens a window (the Agg backend is selected on import of this module by
``fdpkit.report.figures``). Axis labels say FPR/TPR/FNR in words."""

from __future__ import annotations

import math
from typing import Callable, Mapping, Sequence

import numpy as np

from fdpkit._numerics import safe_g
from fdpkit.convert import epsilon_for_delta_from_mu, mu_for_epsilon_delta, mu_from_pure_epsilon
from fdpkit.curves import GaussianCurve, LaplaceCurve, TradeOffCurve
from fdpkit.risk import posterior, precision_at_recall, relative_risk
from fdpkit.risk._range_bound import RangeBound

#: What the risk plots draw: a trade-off curve, or a run's certified bound from a fitted mu with
#: its range (the Risk readings' ``certificate``: the same TPR bound as their numbers).
RiskCurve = TradeOffCurve | RangeBound

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
        ax.plot(_GRID, GaussianCurve(mu).beta(_GRID), "--", label=rf"$G_\mu$, μ = {safe_g(mu, up=True)}")
    ax.plot([0, 1], [1, 0], ":", color="grey", label="1 − α (no privacy loss)")
    ax.set_xlabel(FPR_LABEL)
    ax.set_ylabel(FNR_LABEL)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_aspect("equal")
    ax.legend(fontsize="small")
    return ax


def roc_loglog(ax, curves: Mapping[str, RiskCurve], *, mu: float | None = None):
    """TPR against FPR on log-log axes: the membership-inference view of the tail."""
    for name, c in curves.items():
        ax.loglog(_LOG_GRID, np.maximum(c.tpr(_LOG_GRID), 1e-300), label=f"{name} ({c.bound})")
    if mu is not None and math.isfinite(mu):
        ax.loglog(_LOG_GRID, GaussianCurve(mu).tpr(_LOG_GRID), "--", label=rf"$G_\mu$, μ = {safe_g(mu, up=True)}")
    ax.loglog(_LOG_GRID, _LOG_GRID, ":", color="grey", label="TPR = FPR (random guess)")
    ax.set_xlabel(FPR_LABEL)
    ax.set_ylabel(TPR_LABEL)
    ax.set_ylim(1e-12, 1.5)
    ax.legend(fontsize="small")
    return ax


def curve_vs_gdp(ax, curve: TradeOffCurve, mu: float):
    """The difference f(α) − G_μ(α) against α on a log axis (Gomez et al. Fig. 7): ≥ 0
    wherever the fitted μ holds; the small-α end, where attacks matter, is visible."""
    g = GaussianCurve(mu)
    a = _LOG_GRID[_LOG_GRID >= 1e-10]
    fb, gb = np.asarray(curve.beta(a), dtype=float), np.asarray(g.beta(a), dtype=float)
    diff = fb - gb
    # a difference within the subtraction's own round-off is drawn as 0 (mu = 0: both curves
    # are 1 - alpha, and +-1e-16 of noise was drawn as a jagged line dipping below 0)
    diff[np.abs(diff) <= 4.0 * np.finfo(float).eps * np.maximum(fb, gb)] = 0.0
    ax.semilogx(a, diff, label=r"$f(\alpha) - G_\mu(\alpha)$" + f", μ = {safe_g(mu, up=True)}")
    ax.axhline(0.0, color="grey", lw=0.8)
    ax.set_xlabel(FPR_LABEL + ", log scale")
    ax.set_ylabel("FNR difference (≥ 0 where μ holds)")
    ax.legend(fontsize="small")
    return ax


def privacy_profile(ax, curves: Mapping[str, TradeOffCurve] | None = None, *, mus: Sequence[float] = ()):
    """ε(δ) for curves (their implied profile) and for μ-GDP."""
    deltas = np.geomspace(1e-12, 1e-1, 60)
    for name, c in (curves or {}).items():
        ax.semilogx(deltas, [c.epsilon_for_delta(d) for d in deltas], label=name)
    for m in mus:
        ax.semilogx(deltas, epsilon_for_delta_from_mu(m, deltas), "--", label=f"μ = {m:g}")
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
                mu_range: tuple[float, float] = (0.02, 20.0), label: str = "power",
                marks: Mapping[float, str] | None = None):
    """Power of a planned analysis against mu on a log axis (de Fondeville Fig. 5). ``marks``
    draws a vertical line at each μ it maps to its legend text (a plan's own μ, as the plan
    prints it: ``{1.1415: "planned μ = 1.142"}``)."""
    mus = np.geomspace(*mu_range, 80)
    ax.semilogx(mus, [power_at(m) for m in mus], label=label)
    if nonprivate is not None:
        ax.axhline(nonprivate, ls="--", color="grey", label="non-private power")
    for i, (m, text) in enumerate((marks or {}).items()):
        if math.isfinite(m) and m > 0:
            ax.axvline(m, ls=":", color=f"C{i + 1}", label=text)
    ax.set_xlabel("μ (Gaussian DP)")
    ax.set_ylabel("Power of the test")
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize="small")
    return ax


# ------------------------------------------------------------------ figures of issue 15
def mu_vs_epsilon(ax, *, epsilons: Sequence[float] | None = None, fprs: Sequence[float] = (1e-2, 1e-3, 1e-5),
                  recalls: Sequence[float] = (1e-2, 1e-5), deltas: Sequence[float] = (), rules: bool = True):
    """μ against pure ε under each semantics (Kulynych & Honkela Figs. 1–3, panels b and c),
    one labelled series per level: any ε-DP mechanism (Gomez et al. Prop. 6.1), the same
    TPR/FPR at an FPR α (Prop. 3.1, Fig. 1b/c, legend ``same TPR/FPR at FPR 0.05``), the same
    precision at a recall (Prop. 3.2, Fig. 2b/c, ``same precision at recall 0.01``), the same
    δ at ε, i.e. μ with δ_μ(ε) = δ (K&H Eq. 11, Fig. 3b/c, ``same ε at δ = 1e-05``), and the
    rules of thumb ε/5 and ε/3."""
    eps = np.linspace(0.05, 8.0, 120) if epsilons is None else np.asarray(epsilons, dtype=float)
    ax.plot(eps, mu_from_pure_epsilon(eps), lw=2.2, label="any ε-DP mechanism (Gomez Prop. 6.1)")
    for a in fprs:
        ax.plot(eps, mu_from_pure_epsilon(eps, fpr=a), label=f"same TPR/FPR at FPR {a:g}")
    for b in recalls:
        ax.plot(eps, mu_from_pure_epsilon(eps, recall=b), "-.", label=f"same precision at recall {b:g}")
    for d in deltas:
        if not 0.0 < d < 1.0:  # delta 0 would draw mu = 0 and delta 1 mu = inf: no reading
            raise ValueError(f"delta must be in (0, 1) for the (ε, δ) reading, got {d!r}")
        ax.plot(eps, mu_for_epsilon_delta(eps, d), "--", label=f"same ε at δ = {d:g}")
    if rules:
        ax.plot(eps, eps / 5.0, ":", color="grey", label="rule of thumb ε/5")
        ax.plot(eps, eps / 3.0, "--", color="grey", label="rule of thumb ε/3")
    ax.set_xlabel("Pure-DP ε")
    ax.set_ylabel("Gaussian-DP μ")
    ax.legend(fontsize="small")
    return ax


def precision_vs_recall(ax, curves: Mapping[str, RiskCurve], *, recall_min: float = 1e-6):
    """Worst-case attack precision against recall on a balanced population (Kulynych &
    Honkela Figs. 2a, 5a): precision = TPR / (TPR + FPR) at TPR = recall."""
    r = np.geomspace(recall_min, 0.999, 200)
    for name, c in curves.items():
        ax.semilogx(r, c.precision_at_recall(r) if isinstance(c, RangeBound) else precision_at_recall(c, r),
                    label=f"{name} ({c.bound})")
    ax.axhline(0.5, ls=":", color="grey", label="random guess (0.5)")
    ax.set_xlabel("Recall (attack TPR), log scale")
    ax.set_ylabel("Worst-case precision")
    ax.set_ylim(0.45, 1.01)
    ax.legend(fontsize="small")
    return ax


def _n_label(ns: Sequence[float] | None, n: float, text: str) -> str:
    """``text``, prefixed with ``n = 15:`` when the plot compares sample sizes."""
    return text if ns is None else f"n = {n:g}: {text}"


def _value_text(labels: Mapping[float, str] | None, value: float) -> str:
    """How a legend names a μ or ε: the caller's text for it (a plan's value as the plan
    prints it, rounded on its side), else ``{value:g}``."""
    return (labels or {}).get(value, f"{value:g}")


def power_vs_effect(ax, spec, *, mus: Sequence[float] = (0.1, 0.5, 1.0), epsilons: Sequence[float] = (),
                    effect_max: float | None = None, ns: Sequence[float] | None = None,
                    labels: Mapping[float, str] | None = None):
    """Power of the planned Z-test against the true shift of the mean (de Fondeville Fig. 5,
    top), non-private and under Gaussian (μ) or Laplace (ε) noise. ``spec`` is a
    :class:`fdpkit.planning.ZTestSpec`; its effect is replaced by each x value. With ``ns``
    (several sample sizes, as in the paper's n = 15, 100, 500) one set of series per n, each
    legend label starting ``n = 15:``; one colour per n, one line style per release.
    ``labels`` names a μ or ε in the legend (``{1.14155: "1.142"}``: a plan's value as its
    page prints it); others read ``{:g}``."""
    from dataclasses import replace

    top = effect_max if effect_max is not None else 3.0 * abs(spec.effect) if spec.effect else 1.0
    xs = np.linspace(0.0, top, 80)
    styles = ("-", "--", "-.", ":", (0, (5, 1)), (0, (1, 1)))
    for i, n in enumerate(ns if ns is not None else (spec.n,)):
        s = replace(spec, n=n)
        colour = f"C{i}" if ns is not None else None
        ax.plot(xs, [replace(s, effect=x).power(mu=math.inf) for x in xs], "--", color=colour or "k",
                label=_n_label(ns, n, "non-private"))
        for j, m in enumerate(mus):
            ax.plot(xs, [replace(s, effect=x).power(mu=m) for x in xs], color=colour,
                    ls=styles[(j + 2) % len(styles)] if ns is not None else "-",
                    label=_n_label(ns, n, f"Gaussian, μ = {_value_text(labels, m)}"))
        for e in epsilons:
            ax.plot(xs, [replace(s, effect=x).laplace_power(epsilon=e) for x in xs], "-.", color=colour,
                    label=_n_label(ns, n, f"Laplace, ε = {_value_text(labels, e)}"))
    ax.axhline(spec.level, ls=":", color="grey", lw=0.8)
    ax.set_xlabel("True shift of the mean (alternative)")
    ax.set_ylabel("Power of the test")
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize="small")
    return ax


def ztest_roc(ax, spec, *, mus: Sequence[float] = (0.1, 0.5, 1.0), ns: Sequence[float] | None = None,
              epsilons: Sequence[float] = (), labels: Mapping[float, str] | None = None):
    """ROC of the planned Z-test under DP noise (de Fondeville Fig. 5, bottom): power against
    the test level α0 (the test's own FPR), non-private, for each μ (Gaussian noise) and each
    ε (Laplace noise, ``epsilons``); with ``ns`` one set of series per sample size, labelled
    ``n = 15: μ = 1``. ``labels`` names a μ or ε as in :func:`power_vs_effect`."""
    from dataclasses import replace

    levels = np.geomspace(1e-4, 0.999, 120)
    styles = ("-", "-.", ":", (0, (5, 1)), (0, (1, 1)))
    for i, n in enumerate(ns if ns is not None else (spec.n,)):
        one = replace(spec, tests=1, n=n)
        colour = f"C{i}" if ns is not None else None
        ax.semilogx(levels, [replace(one, alpha=float(a)).power(mu=math.inf) for a in levels], "--",
                    color=colour or "k", label=_n_label(ns, n, "non-private"))
        for j, m in enumerate(mus):
            ax.semilogx(levels, [replace(one, alpha=float(a)).power(mu=m) for a in levels], color=colour,
                        ls=styles[j % len(styles)] if ns is not None else "-",
                        label=_n_label(ns, n, f"μ = {_value_text(labels, m)}"))
        for e in epsilons:
            ax.semilogx(levels, [replace(one, alpha=float(a)).laplace_power(epsilon=e) for a in levels], "-.",
                        color=colour, label=_n_label(ns, n, f"Laplace, ε = {_value_text(labels, e)}"))
    ax.semilogx(levels, levels, ":", color="grey", label="power = level")
    ax.set_xlabel("Test level α0 (false-positive rate of the test), log scale")
    ax.set_ylabel("Power (true-positive rate of the test)")
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize="small")
    return ax


def posterior_vs_fpr(ax, curve: RiskCurve, *, priors: Sequence[float] = (0.01, 0.1, 0.5)):
    """Posterior membership probability after a positive attack against the attack's FPR α,
    for several priors (de Fondeville Fig. 2)."""
    a = np.geomspace(1e-8, 1.0, 120)
    for p in priors:
        ax.semilogx(a, curve.posterior(p, a) if isinstance(curve, RangeBound) else posterior(curve, p, a),
                    label=f"prior = {p:g}")
        ax.axhline(p, ls=":", lw=0.7, color="grey")
    ax.set_xlabel(FPR_LABEL + ", log scale")
    ax.set_ylabel("Posterior after a positive attack")
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize="small")
    return ax


def epsilon_vs_noise(ax, *, sensitivity: float = 1.0, delta: float = 1e-5, scale_range: tuple[float, float] = (0.2, 20.0)):
    """ε against the noise scale for one release: Laplace ε = Δ/b; Gaussian ε(δ) exact
    (μ = Δ/σ, Kulynych & Honkela Eq. 11) and the classic bound √(2 ln(1.25/δ)) Δ/σ."""
    x = np.geomspace(*scale_range, 100)
    ax.loglog(x, sensitivity / x, label="Laplace: ε = Δ/b")
    ax.loglog(x, [epsilon_for_delta_from_mu(sensitivity / v, delta) for v in x], label=f"Gaussian, exact ε at δ = {delta:g}")
    ax.loglog(x, math.sqrt(2.0 * math.log(1.25 / delta)) * sensitivity / x, "--",
              label=f"Gaussian, classic bound at δ = {delta:g}")
    ax.set_xlabel(f"Noise scale (b or σ), sensitivity Δ = {sensitivity:g}")
    ax.set_ylabel("ε")
    ax.legend(fontsize="small")
    return ax
