"""``fdpkit risk``: attack-risk reading of a guarantee."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

import fdpkit as fp
from fdpkit.cli._common import (OutputOpt, emit, fail, guarded, kv)


@guarded
def risk(mu: Optional[float] = typer.Option(None, help="GDP mu."),
         epsilon: Optional[float] = typer.Option(None, help="Pure or approximate DP epsilon (with --delta)."),
         delta: Optional[float] = typer.Option(None, help="delta of an (epsilon, delta) guarantee."),
         zcdp: Optional[float] = typer.Option(None, "--zcdp", help="zCDP parameter rho (any rho-zCDP mechanism)."),
         prior: list[float] = typer.Option([0.01], help="Prior probability of membership (repeatable)."),
         fpr: list[float] = typer.Option([1e-3], help="Attack FPR (repeatable)."),
         fmt: str = typer.Option("text", "--format", "-f"), output: Optional[Path] = OutputOpt) -> None:
    """Attack-risk reading of mu-GDP, (epsilon, delta)-DP or rho-zCDP."""
    if sum(x is not None for x in (mu, epsilon, zcdp)) != 1:
        fail("give exactly one of --mu, --epsilon or --zcdp")
    if zcdp is not None:
        curve, name = fp.tradeoff_curve(fp.ZCDP(zcdp)), f"rho = {zcdp:g} zCDP"
    else:
        curve = fp.GaussianCurve(mu) if mu is not None else fp.EpsDeltaCurve(epsilon, delta or 0.0)
        name = f"mu = {mu:g}" if mu is not None else f"epsilon = {epsilon:g}, delta = {delta or 0:g}"
    rows = {
        "failure mode": fp.failure_mode(curve),
        "advantage (max TPR - FPR)": fp.advantage(curve),
        "relative risk (all FPR)": fp.relative_risk(curve),
    }
    attacks = []
    for a in fpr:
        rows[f"attack TPR at FPR {a:g}"] = fp.attack_power(curve, a)
        rows[f"relative risk for FPR >= {a:g}"] = fp.relative_risk(curve, fpr_min=a)
        for p in prior:
            rows[f"posterior at FPR {a:g} for prior {p:g}"] = fp.posterior(curve, p, a)
        attacks.append({"fpr": a, "tpr": fp.attack_power(curve, a), "relative_risk": fp.relative_risk(curve, fpr_min=a),
                        "posteriors": [{"prior": p, "posterior": fp.posterior(curve, p, a)} for p in prior]})
    payload = {"guarantee": name, "failure_mode": rows["failure mode"], "advantage": rows["advantage (max TPR - FPR)"],
               "relative_risk": rows["relative risk (all FPR)"], "attacks": attacks}
    emit((payload), fmt, output, lambda: kv(f"Risk of {name}", rows))

