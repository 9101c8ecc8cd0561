"""``fdpkit plot``: one plot to SVG, PNG or PDF."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

import fdpkit as fp
from fdpkit.cli._common import (cli_budget, write_output, DiscOpt, State, err, fail, guarded, load_spec, working)
from fdpkit.mechanisms import mechanism_from_dict
PLOTS = ("tradeoff", "roc", "difference", "profile", "posterior", "relative-risk", "attack-power")


@guarded
def plot(kind: str = typer.Argument(..., help=", ".join(PLOTS)),
         output: Path = typer.Option(..., "--output", "-o", help="File ending in .svg, .png or .pdf."),
         mu: list[float] = typer.Option([], help="GDP mu (repeatable)."),
         epsilon: list[float] = typer.Option([], help="Laplace / pure-DP epsilon (repeatable)."),
         mechanism: Optional[Path] = typer.Option(None, "--mechanism", "-m", help="Mechanism spec to plot."),
         discretization: float = DiscOpt) -> None:
    """Write one of the plots to SVG/PNG/PDF."""
    from fdpkit.report import plots
    from fdpkit.report.figures import render

    if kind not in PLOTS:
        fail(f"plot kind must be one of {', '.join(PLOTS)}, got {kind!r}")
    fmt = output.suffix.lower().lstrip(".")
    curves: dict[str, fp.TradeOffCurve] = {f"μ = {m:g}": fp.GaussianCurve(m) for m in mu}
    curves.update({f"Laplace ε = {e:g}": fp.LaplaceCurve(e) for e in epsilon})
    fitted = None
    if mechanism is not None:
        mech = mechanism_from_dict(load_spec(mechanism))
        with working("Accounting the mechanism..."):
            c = fp.tradeoff_curve(mech, discretization=discretization, budget=cli_budget())
        curves["mechanism"] = c
        fitted = fp.fit_gdp(c).mu
    if not curves and kind not in ("attack-power",):
        fail("give at least one --mu, --epsilon or --mechanism")
    first = next(iter(curves.values()), None)
    draw = {
        "tradeoff": lambda ax: plots.tradeoff(ax, curves, mu=fitted),
        "roc": lambda ax: plots.roc_loglog(ax, curves, mu=fitted),
        "difference": lambda ax: plots.curve_vs_gdp(ax, first, fitted if fitted is not None else fp.fit_gdp(first).mu),
        "profile": lambda ax: plots.privacy_profile(ax, curves),
        "posterior": lambda ax: plots.posterior_vs_prior(ax, first),
        "relative-risk": lambda ax: plots.relative_risk_vs_fpr(ax, curves),
        "attack-power": lambda ax: plots.attack_power_vs_mu(ax),
    }[kind]
    write_output(output, render(draw, fmt))
    if not State.quiet:
        err.print(f"wrote {output}")

