"""``fdpkit risk``: attack-risk reading of a guarantee, with its grade."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

import fdpkit as fp
from fdpkit.cli._common import (OutputOpt, emit, err, fail, fraction_option, guarded, kv, out)


@guarded(names={"rho": "zcdp"})  # the library's rho is --zcdp
def risk(mu: Optional[float] = typer.Option(None, help="GDP mu."),
         epsilon: Optional[float] = typer.Option(None, help="Pure or approximate DP epsilon (with --delta)."),
         delta: Optional[str] = typer.Option(None, help="delta of an (epsilon, delta) guarantee (1e-5 or 0.001%)."),
         prior: list[str] = typer.Option(["0.01"], help="Prior probability of membership, 0.01 or 1% (repeatable)."),
         fpr: list[str] = typer.Option(["0.001"], help="Attack FPR, 0.001 or 0.1% (repeatable)."),
         zcdp: Optional[float] = typer.Option(None, "--zcdp", help="zCDP parameter rho (any rho-zCDP mechanism)."),
         n: Optional[float] = typer.Option(None, help="Number of people in the data (delta sanity check)."),
         mu_fpr_min: Optional[float] = typer.Option(
             None, help="With --mu-tau: a fitted mu's range (a report's alpha_min): mu holds for attacks with FPR and "
                        "FNR >= this; outside, the reading gives TPR <= 1 - G_mu(FPR) + tau."),
         mu_tau: Optional[float] = typer.Option(None, help="With --mu-fpr-min: a report's tau (rounded up)."),
         fmt: str = typer.Option("text", "--format", "-f", help="text or json."), output: Optional[Path] = OutputOpt) -> None:
    """Attack-risk reading of mu-GDP, (epsilon, delta)-DP or rho-zCDP, graded on a fixed scale."""
    if sum(x is not None for x in (mu, epsilon, zcdp)) != 1:
        fail("give exactly one of --mu, --epsilon or --zcdp")
    d = fraction_option(delta, "delta")
    if epsilon is None and d is not None:
        fail("--delta does not apply to a mu-GDP or zCDP guarantee: give --epsilon with --delta")
    priors = [fraction_option(p, "prior") for p in prior]
    fprs = [fraction_option(a, "fpr") for a in fpr]
    kind = "mu" if mu is not None else "zcdp" if zcdp is not None else ("epsilon" if not d else "epsilon_delta")
    if kind != "mu" and (mu_fpr_min is not None or mu_tau is not None):
        fail("--mu-fpr-min and --mu-tau (the range of a fitted mu) apply to --mu only")

    def read(p: float, a: float):
        return fp.read_guarantee(kind, mu=mu, epsilon=epsilon, delta=d if kind == "epsilon_delta" else None,
                                 rho=zcdp, prior=p, fpr=a, n=n, mu_fpr_min=mu_fpr_min, mu_tau=mu_tau)

    readings = [read(priors[0], a) for a in fprs]
    first = readings[0]
    curve = first.curve
    # with a fitted mu's range these describe the run's certified bound, as the web's Risk page
    of = " (the run's bound)" if first.range is not None else ""
    tau = first.range["tau"] if first.range is not None else 0.0
    rows = {
        "grade": str(first.grade),
        f"failure mode{of}": first.range["failure"] if tau > 0 else first.failure_mode,
        f"advantage (max TPR - FPR){of}": first.advantage,
        f"relative risk (all FPR){of}": first.relative_risk,
    }
    attacks = []
    for a, r in zip(fprs, readings):
        rows[f"attack TPR at FPR {a:g}"] = r.attack_power
        rows[f"relative risk for FPR >= {a:g}{of}"] = r.relative_risk_at_fpr
        # outside a fitted mu's range the posterior is the run's bound's (the reading's)
        posts = [{"prior": p, "posterior": fp.posterior(curve, p, a) if r.range is None else read(p, a).posterior}
                 for p in priors]
        for q in posts:
            rows[f"posterior at FPR {a:g} for prior {q['prior']:g}"] = q["posterior"]
        attacks.append({"fpr": a, "tpr": r.attack_power, "relative_risk": r.relative_risk_at_fpr, "posteriors": posts})
    notes = [w for r in readings if r.range is not None and r.range["outside"] for w in r.warnings[:1]]
    warnings = list(dict.fromkeys(notes + list(first.warnings)))  # each FPR outside the range said, once
    payload = {"guarantee": first.guarantee, "grade": first.grade.to_dict(), "failure_mode": first.failure_mode,
               "advantage": first.advantage, "relative_risk": first.relative_risk, "attacks": attacks,
               "notes": list(first.notes), "warnings": warnings, "headline": first.headline,
               "plain_language": list(first.plain_language),  # at the first FPR and prior, as /api/risk
               "gaussian_grade": first.gaussian_grade.to_dict() if first.gaussian_grade is not None else None,
               # a fitted mu's range as /api/risk and read_guarantee give it (at the first FPR)
               "range": first.to_dict()["range"]}

    def text() -> None:
        for w in warnings:
            err.print(f"warning: {w}", soft_wrap=True)
        out.print(first.headline, soft_wrap=True, highlight=False)  # the plain first sentence
        out.print(f"[bold]{first.grade.icon} Protection: {first.grade.label}[/bold] (level {first.grade.level} of 0–3, "
                  "0 strongest)", soft_wrap=True)
        if first.grade.reason:
            out.print(f"Why: {first.grade.reason}.", soft_wrap=True)
        out.print(f"What this grade means: {first.grade.definition}", soft_wrap=True)
        for note in first.notes:
            out.print(note, soft_wrap=True)
        # in plain words, at the first FPR and prior: the Risk page's and the report's sentences
        # (it printed only the run's bound's failure mode, and no sentence otherwise)
        for sentence in first.plain_language:
            out.print(sentence, soft_wrap=True, highlight=False)
        kv(f"Risk of {first.guarantee}", rows, up=True)  # TPR, posterior, risk, advantage: upper bounds

    emit(payload, fmt, output, text)
