"""``fdpkit calibrate``: solve DP-SGD for one unknown."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

import fdpkit as fp
from fdpkit.cli._common import (DiscOpt, OutputOpt, emit, guarded, kv, working)

calibrate_app = typer.Typer(help="Solve DP-SGD for one unknown.", no_args_is_help=True)


@calibrate_app.command("dpsgd")
@guarded
def calibrate_dpsgd_cmd(mu: Optional[float] = typer.Option(None), noise_multiplier: Optional[float] = typer.Option(None),
                    sample_rate: Optional[float] = typer.Option(None), steps: Optional[int] = typer.Option(None),
                    discretization: float = DiscOpt,
                    fmt: str = typer.Option("text", "--format", "-f"), output: Optional[Path] = OutputOpt) -> None:
    """Leave exactly one of --mu, --noise-multiplier, --sample-rate, --steps out; it is solved for."""
    with working("Calibrating (several accounting runs)..."):
        r = fp.calibrate_dpsgd(mu=mu, noise_multiplier=noise_multiplier, sample_rate=sample_rate,
                               steps=steps, discretization=discretization)
    emit((r.to_dict()), fmt, output, lambda: kv(
        f"DP-SGD calibrated for {r.unknown}",
        {r.unknown: r.value, "achieved mu": r.achieved_mu, "converged": str(r.converged),
         "accounting runs": r.evaluations + r.coarse_evaluations}))

