"""``fdpkit convert`` and ``fdpkit tables``: epsilon, delta and mu, and the seed tables."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Optional

import typer
from rich.table import Table as RichTable

import fdpkit as fp
from fdpkit.cli._common import (OutputOpt, emit, guarded, kv, out, working)

convert_app = typer.Typer(help="Convert between epsilon, delta and mu.", no_args_is_help=True)


@convert_app.command("eps-to-mu")
@guarded
def convert_eps_to_mu(epsilon: float = typer.Option(..., help="Pure-DP epsilon."),
                      fpr: Optional[float] = typer.Option(None, help="Match multiplicative advantage at this FPR."),
                      recall: Optional[float] = typer.Option(None, help="Match precision at this recall."),
                      delta: Optional[float] = typer.Option(None, help="Match the privacy profile at this delta."),
                      fmt: str = typer.Option("text", "--format", "-f"), output: Optional[Path] = OutputOpt) -> None:
    """epsilon -> mu under each semantics (Kulynych & Honkela; Gomez Prop. 6.1)."""
    rows = {"any epsilon-DP mechanism (Gomez Prop. 6.1)": fp.mu_from_pure_epsilon(epsilon)}
    if fpr is None and recall is None and delta is None:
        for a in (1e-2, 1e-3, 1e-5):
            rows[f"multiplicative advantage at FPR {a:g}"] = fp.mu_from_pure_epsilon(epsilon, fpr=a)
        for b in (1e-2, 1e-3, 1e-5):
            rows[f"precision at recall {b:g}"] = fp.mu_from_pure_epsilon(epsilon, recall=b)
        rows["rule of thumb eps/5 (conservative)"] = fp.mu_rule_of_thumb(epsilon, 5)
        rows["rule of thumb eps/3"] = fp.mu_rule_of_thumb(epsilon, 3)
    else:
        rows = {f"{k}={v:g}": fp.mu_from_pure_epsilon(epsilon, fpr=fpr, recall=recall, delta=delta)
                for k, v in (("fpr", fpr), ("recall", recall), ("delta", delta)) if v is not None}
    payload = {"epsilon": epsilon, "mu": [{"semantics": k, "mu": v} for k, v in rows.items()]}
    emit((payload), fmt, output, lambda: kv(f"mu for pure epsilon = {epsilon:g}", rows))


@convert_app.command("mu-to-eps")
@guarded
def convert_mu_to_eps(mu: float = typer.Option(...),
                      delta: list[float] = typer.Option([1e-5, 1e-6, 1e-9], help="Repeat for several."),
                      fmt: str = typer.Option("text", "--format", "-f"), output: Optional[Path] = OutputOpt) -> None:
    """mu -> epsilon(delta) (Kulynych & Honkela Eq. 11, inverted)."""
    rows = {f"delta = {d:g}": fp.epsilon_for_delta(mu, d) for d in delta}
    payload = {"mu": mu, "epsilon_at_delta": [{"delta": d, "epsilon": fp.epsilon_for_delta(mu, d)} for d in delta]}
    emit((payload), fmt, output, lambda: kv(f"epsilon(delta) for mu = {mu:g}", rows))


@convert_app.command("mu-to-delta")
@guarded
def convert_mu_to_delta(mu: float = typer.Option(...), epsilon: list[float] = typer.Option([1.0]),
                        fmt: str = typer.Option("text", "--format", "-f"), output: Optional[Path] = OutputOpt) -> None:
    """mu -> delta(epsilon) (Kulynych & Honkela Eq. 11)."""
    rows = {f"epsilon = {e:g}": fp.delta_for_epsilon(mu, e) for e in epsilon}
    payload = {"mu": mu, "delta_at_epsilon": [{"epsilon": e, "delta": fp.delta_for_epsilon(mu, e)} for e in epsilon]}
    emit((payload), fmt, output, lambda: kv(f"delta(epsilon) for mu = {mu:g}", rows))


@convert_app.command("eps-delta-to-mu")
@guarded
def convert_eps_delta_to_mu(epsilon: float = typer.Option(...), delta: float = typer.Option(...),
                            fmt: str = typer.Option("text", "--format", "-f"), output: Optional[Path] = OutputOpt) -> None:
    """(epsilon, delta) -> the largest mu whose GDP implies it (Gomez Table 3)."""
    m = fp.mu_for_epsilon_delta(epsilon, delta)
    emit(({"epsilon": epsilon, "delta": delta, "mu": m}), fmt, output,
         lambda: kv(f"mu with the same delta at epsilon = {epsilon:g}", {f"delta = {delta:g}": m}))



@convert_app.command("rho-to-mu")
@guarded
def convert_rho_to_mu(rho: float = typer.Option(..., help="zCDP parameter rho."),
                      fmt: str = typer.Option("text", "--format", "-f"), output: Optional[Path] = OutputOpt) -> None:
    """rho -> the Gaussian reading sqrt(2 rho) and the tight mu that rho-zCDP guarantees."""
    with working("Computing the rho-zCDP curve..."):
        rows = {"Gaussian mechanism that is exactly rho-zCDP: mu = sqrt(2 rho)": fp.gaussian_mu_from_rho(rho),
                "tight mu-GDP of any rho-zCDP mechanism (FPR, FNR >= 1e-10)": fp.mu_bound_from_rho(rho)}
    payload = {"rho": rho, "gaussian_mu": rows["Gaussian mechanism that is exactly rho-zCDP: mu = sqrt(2 rho)"],
               "mu_bound": rows["tight mu-GDP of any rho-zCDP mechanism (FPR, FNR >= 1e-10)"]}
    emit(payload, fmt, output, lambda: kv(f"mu for rho = {rho:g} zCDP", rows))


@convert_app.command("mu-to-rho")
@guarded
def convert_mu_to_rho(mu: float = typer.Option(..., help="GDP mu of a Gaussian mechanism."),
                      fmt: str = typer.Option("text", "--format", "-f"), output: Optional[Path] = OutputOpt) -> None:
    """mu -> rho = mu^2 / 2, the zCDP parameter of the Gaussian mechanism with that mu."""
    r = fp.rho_from_gaussian_mu(mu)
    emit({"mu": mu, "rho": r}, fmt, output, lambda: kv(f"rho for mu = {mu:g}", {"rho = mu^2 / 2": r}))


@convert_app.command("rho-to-eps")
@guarded
def convert_rho_to_eps(rho: float = typer.Option(..., help="zCDP parameter rho."),
                       delta: list[float] = typer.Option([1e-5, 1e-6, 1e-9], help="Repeat for several."),
                       fmt: str = typer.Option("text", "--format", "-f"), output: Optional[Path] = OutputOpt) -> None:
    """rho -> epsilon(delta): the optimal conversion (sound), beside the classic formula."""
    with working("Converting..."):
        rows_p = [{"delta": d, "epsilon": fp.epsilon_for_delta_from_rho(rho, d),
                   "epsilon_classic": fp.classic_epsilon_for_delta_from_rho(rho, d)} for d in delta]
    rows = {}
    for r in rows_p:
        rows[f"delta = {r['delta']:g} (optimal)"] = r["epsilon"]
        rows[f"delta = {r['delta']:g} (rho + 2 sqrt(rho log 1/delta))"] = r["epsilon_classic"]
    emit({"rho": rho, "epsilon_at_delta": rows_p}, fmt, output, lambda: kv(f"epsilon(delta) for rho = {rho:g}", rows))


@convert_app.command("rdp-to-eps")
@guarded
def convert_rdp_to_eps(orders: list[float] = typer.Option(..., "--order", help="Rényi order t > 1 (repeatable)."),
                       epsilons: list[float] = typer.Option(..., "--epsilon", help="eps(t) at that order (repeatable)."),
                       delta: list[float] = typer.Option([1e-5, 1e-6, 1e-9], help="Repeat for several."),
                       fmt: str = typer.Option("text", "--format", "-f"), output: Optional[Path] = OutputOpt) -> None:
    """RDP (order, epsilon) pairs -> epsilon(delta): the improved conversion (sound)."""
    with working("Converting..."):
        rows_p = [{"delta": d, "epsilon": fp.epsilon_for_delta_from_rdp(orders, epsilons, d)} for d in delta]
    emit({"orders": orders, "epsilons": epsilons, "epsilon_at_delta": rows_p}, fmt, output,
         lambda: kv("epsilon(delta) for the RDP list", {f"delta = {r['delta']:g}": r["epsilon"] for r in rows_p}))


@guarded
def tables(fmt: str = typer.Option("text", "--format", "-f", help="text, json or csv."),
           output: Optional[Path] = OutputOpt) -> None:
    """Regenerate the seed tables (Kulynych & Honkela Fig. 4b/5b/6b, Gomez Table 3)."""
    with working("Computing tables..."):
        ts = fp.seed_tables()
    if fmt == "csv":
        from fdpkit.report import csv_rows, write_atomic

        rows: list[list[Any]] = []
        for t in ts:
            rows += [[f"# {t.title} ({t.source})"], *t.formatted(), []]
        data = csv_rows(rows)
        write_atomic(output, data.encode()) if output else sys.stdout.write(data)
        return

    def text() -> None:
        for t in ts:
            table = RichTable(title=f"{t.title} ({t.source})", title_justify="left")
            grid = t.formatted()
            for h in grid[0]:
                table.add_column(h)
            for r in grid[1:]:
                table.add_row(*r)
            out.print(table)

    emit({"tables": [t.to_dict() for t in ts]}, fmt, output, text)

