"""``fdpkit plot``: one plot to SVG, PNG or PDF."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer

import fdpkit as fp
from fdpkit._inputs import parse_decimal
from fdpkit.cli._common import (AlphaOpt, DiscOpt, State, check_output, cli_budget, err, fail, fraction_option, guarded,
                                level_option, load_points, load_spec, mechanism_from_dict, working, write_output)

PLOTS = ("tradeoff", "roc", "difference", "profile", "posterior", "relative-risk", "attack-power",
         "mu-vs-epsilon", "precision-recall", "power-effect", "ztest-roc", "posterior-fpr", "epsilon-noise")
#: kinds that need no guarantee (they draw a family or a planned test)
_NO_CURVE = ("attack-power", "mu-vs-epsilon", "power-effect", "ztest-roc", "epsilon-noise")


def _eps_delta(text: str) -> tuple[float, float]:
    try:
        e, d = (x.strip(" \t") for x in text.split(","))
        return parse_decimal(e, "--eps-delta"), fraction_option(d, "delta")  # not "1_000" or other scripts' digits
    except ValueError:
        raise ValueError(f"--eps-delta must be EPSILON,DELTA, plain decimal numbers such as 1,1e-5, got {text!r}") from None


@guarded(names={"alpha": "level"})  # the planned test's alpha is --level
def plot(kind: str = typer.Argument(..., help=", ".join(PLOTS)),
         output: Path = typer.Option(..., "--output", "-o", help="File ending in .svg, .png or .pdf."),
         mu: list[float] = typer.Option([], help="GDP mu (repeatable)."),
         epsilon: list[float] = typer.Option([], help="Laplace epsilon (repeatable)."),
         eps_delta: list[str] = typer.Option([], "--eps-delta", help="(epsilon, delta)-DP curve as EPS,DELTA (repeatable)."),
         mechanism: Optional[Path] = typer.Option(None, "--mechanism", "-m", help="Mechanism spec to plot."),
         points: list[Path] = typer.Option([], "--points", help="CSV of (FPR, FNR) error points (header fpr,fnr or "
                                           "alpha,beta); their lower convex hull is plotted (repeatable)."),
         fpr: list[str] = typer.Option([], "--fpr", help="mu-vs-epsilon: FPR level of the TPR/FPR reading "
                                       "(K&H Fig. 1b/c; repeatable)."),
         recall: list[str] = typer.Option([], "--recall", help="mu-vs-epsilon: recall level of the precision "
                                          "reading (K&H Fig. 2b/c; repeatable)."),
         epsilon_max: Optional[float] = typer.Option(None, "--epsilon-max", help="mu-vs-epsilon: largest ε on "
                                                     "the x axis (default 8; K&H Figs. 1-3 b and c differ in "
                                                     "this range), from 0.1 to 100."),
         effect: float = typer.Option(0.2, help="power-effect / ztest-roc: planned shift of the mean."),
         n: list[float] = typer.Option([], help="power-effect / ztest-roc: observations (repeatable, one "
                                       "set of series per n; default 15)."),
         sd: float = typer.Option(0.25, help="power-effect / ztest-roc: measurement sd."),
         level: Optional[str] = typer.Option(None, "--level", help="power-effect: the test's significance level "
                                             "[default: 0.01]."),
         alpha: Optional[str] = AlphaOpt,
         sensitivity: float = typer.Option(1.0, help="epsilon-noise: sensitivity."),
         delta: list[str] = typer.Option([], help="mu-vs-epsilon: delta level of the (epsilon, delta) reading "
                                         "(K&H Fig. 3b/c; repeatable); epsilon-noise: delta of the Gaussian "
                                         "epsilon (one, default 1e-5)."),
         discretization: Optional[float] = DiscOpt) -> None:
    """Write one of the plots to SVG/PNG/PDF (several curves on one plot where it makes sense)."""
    from fdpkit.report import plots
    from fdpkit.report.figures import FORMATS as FIGURE_FORMATS, render

    if kind not in PLOTS:
        fail(f"plot kind must be one of {', '.join(PLOTS)}, got {kind!r}")
    fmt = check_output(output, "--output", FIGURE_FORMATS).suffix.lower().lstrip(".")
    curves: dict[str, fp.TradeOffCurve] = {f"μ = {m:g}": fp.GaussianCurve(m) for m in mu}
    curves.update({f"Laplace ε = {e:g}": fp.LaplaceCurve(e) for e in epsilon})
    for text in eps_delta:
        e, d = _eps_delta(text)
        try:  # its epsilon and delta are --eps-delta's, not --epsilon's and --delta's
            curves[f"(ε, δ) = ({e:g}, {d:g})"] = fp.EpsDeltaCurve(e, d)
        except ValueError as exc:
            raise ValueError(f"--eps-delta {text}: {exc}") from None
    for path in points:
        curves[f"points {path.name}"] = load_points(path)
    fitted = None
    if mechanism is not None:
        mech = mechanism_from_dict(load_spec(mechanism))
        # the curve and mu of `fdpkit report` for the same spec (its discretization rule, and
        # its fit: the FPR range widened where a large mu leaves the default one empty)
        with working("Accounting the mechanism..."):
            rep = fp.privacy_report(mech, discretization=discretization, budget=cli_budget())
        curves["mechanism"] = rep.curve
        fitted = rep.mu
    if not curves and kind not in _NO_CURVE:
        fail("give at least one --mu, --epsilon, --eps-delta, --points or --mechanism")
    first = next(iter(curves.values()), None)
    ns = tuple(n) or (15.0,)
    overall = level_option(level, alpha)
    spec = fp.ZTestSpec(effect=effect, n=ns[0], sd=sd, alpha=fraction_option("0.01" if overall is None else overall,
                                                                             "level"))
    fprs = tuple(fraction_option(a, "fpr") for a in fpr)
    recalls = tuple(fraction_option(b, "recall") for b in recall)
    deltas = tuple(fraction_option(d, "delta") for d in delta)
    if kind == "epsilon-noise" and len(deltas) > 1:
        fail(f"epsilon-noise takes one --delta, got {len(deltas)}")
    if kind != "mu-vs-epsilon" and (fprs or recalls):
        fail("--fpr and --recall apply to mu-vs-epsilon only")
    if deltas and kind not in ("mu-vs-epsilon", "epsilon-noise"):
        fail("--delta applies to mu-vs-epsilon and epsilon-noise only")
    if n and kind not in ("power-effect", "ztest-roc"):
        fail("--n applies to power-effect and ztest-roc only")
    if epsilon_max is not None and kind != "mu-vs-epsilon":
        fail("--epsilon-max applies to mu-vs-epsilon only")
    if epsilon_max is not None and not 0.1 <= epsilon_max <= 100.0:
        fail(f"--epsilon-max must be between 0.1 and 100, got {epsilon_max!r}")
    levels: dict[str, Any] = {}  # mu-vs-epsilon: the levels given, or K&H's defaults (FPR 1e-2, 1e-3, 1e-5; recall 1e-2, 1e-5)
    if fprs or recalls or deltas:
        levels = {"fprs": fprs, "recalls": recalls, "deltas": deltas}
    if epsilon_max is not None:
        levels["epsilons"] = [0.05 + (epsilon_max - 0.05) * i / 119 for i in range(120)]
    draw = {
        "tradeoff": lambda ax: plots.tradeoff(ax, curves, mu=fitted),
        "roc": lambda ax: plots.roc_loglog(ax, curves, mu=fitted),
        "difference": lambda ax: plots.curve_vs_gdp(ax, first, fitted if fitted is not None else fp.fit_gdp(first).mu),
        "profile": lambda ax: plots.privacy_profile(ax, curves),
        "posterior": lambda ax: plots.posterior_vs_prior(ax, first),
        "relative-risk": lambda ax: plots.relative_risk_vs_fpr(ax, curves),
        "attack-power": lambda ax: plots.attack_power_vs_mu(ax),
        "mu-vs-epsilon": lambda ax: plots.mu_vs_epsilon(ax, **levels),
        "precision-recall": lambda ax: plots.precision_vs_recall(ax, curves),
        "power-effect": lambda ax: plots.power_vs_effect(ax, spec, mus=tuple(mu) or (0.1, 0.5, 1.0), epsilons=tuple(epsilon),
                                                          ns=ns),
        "ztest-roc": lambda ax: plots.ztest_roc(ax, spec, mus=tuple(mu) or (0.1, 0.5, 1.0), ns=ns),
        "posterior-fpr": lambda ax: plots.posterior_vs_fpr(ax, first),
        "epsilon-noise": lambda ax: plots.epsilon_vs_noise(ax, sensitivity=sensitivity, delta=deltas[0] if deltas else 1e-5),
    }[kind]
    write_output(output, render(draw, fmt))
    if not State.quiet:
        err.print(f"wrote {output}")
