"""``fdpkit convert`` and ``fdpkit tables``: epsilon, delta and mu, and the seed tables."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Optional

import typer
from rich.table import Table as RichTable

import fdpkit as fp
from fdpkit.cli._common import (OutputOpt, ResultFormatOpt, command_group, emit, err, fmt_num, fraction_option, guarded, kv, out, working)

convert_app = command_group("Convert between epsilon, delta and mu.", no_args_is_help=True)


@convert_app.command("eps-to-mu")
@guarded
def convert_eps_to_mu(epsilon: float = typer.Option(..., help="Epsilon (pure DP, or with --delta)."),
                      fpr: Optional[str] = typer.Option(None, help="Match multiplicative advantage at this FPR."),
                      recall: Optional[str] = typer.Option(None, help="Match precision at this recall."),
                      delta: Optional[str] = typer.Option(None, help="delta of an (epsilon, delta) guarantee."),
                      fmt: str = ResultFormatOpt, output: Optional[Path] = OutputOpt) -> None:
    """epsilon (or (epsilon, delta)) -> one recommended mu, its meaning, and the other readings."""
    fpr, recall, delta = (fraction_option(v, n) for v, n in ((fpr, "fpr"), (recall, "recall"), (delta, "delta")))
    warnings = fp.plausibility_warnings(epsilon=epsilon, delta=delta)
    if fpr is not None or recall is not None:
        rows = {f"{k}={v:g}": fp.mu_from_pure_epsilon(epsilon, fpr=fpr, recall=recall)
                for k, v in (("fpr", fpr), ("recall", recall)) if v is not None}
        payload = {"epsilon": epsilon, "mu": [{"semantics": k, "mu": v} for k, v in rows.items()], "warnings": warnings}
        emit(payload, fmt, output, _warned(warnings, lambda: kv(f"mu for pure epsilon = {epsilon:g}", rows, up=True)))
        return
    rec = fp.recommend_mu(epsilon, delta)
    payload = {"epsilon": epsilon, "delta": delta, **rec.to_dict(), "warnings": warnings,
               "mu": [{"semantics": rec.recommended.semantics, "mu": rec.value}]
               + [{"semantics": a.semantics, "mu": a.value} for a in rec.alternatives]}

    def text() -> None:
        for w in warnings:
            err.print(f"warning: {w}", soft_wrap=True)
        out.print(f"[bold]{rec.question}: μ = {fmt_num(rec.value, up=True)}[/bold]  ({rec.recommended.semantics})", soft_wrap=True)
        out.print(f"{rec.recommended.meaning} ({rec.recommended.source})", soft_wrap=True)
        kv("Other readings", {f"{a.semantics} ({a.source})": a.value for a in rec.alternatives}, up=True)

    emit(payload, fmt, output, text)


def _warned(warnings: list[str], text):
    """The text renderer, with the plausibility warnings on stderr first."""
    def show() -> None:
        for w in warnings:
            err.print(f"warning: {w}", soft_wrap=True)
        text()
    return show


@convert_app.command("mu-to-eps")
@guarded
def convert_mu_to_eps(mu: float = typer.Option(..., help="GDP μ."),
                      delta: list[str] = typer.Option(["1e-5", "1e-6", "1e-9"],
                                                      help="Repeat for several (1e-5 or 0.001%)."),
                      fmt: str = ResultFormatOpt, output: Optional[Path] = OutputOpt) -> None:
    """mu -> epsilon(delta) (Kulynych & Honkela Eq. 11, inverted)."""
    ds = [fraction_option(d, "delta") for d in delta]
    warnings = fp.plausibility_warnings(mu=mu, deltas=ds)
    rows = {f"ε at δ = {d:g}": fp.epsilon_for_delta_from_mu(mu, d) for d in ds}
    payload = {"mu": mu, "epsilon_at_delta": [{"delta": d, "epsilon": fp.epsilon_for_delta_from_mu(mu, d)} for d in ds],
               "warnings": warnings}
    emit(payload, fmt, output, _warned(warnings, lambda: kv(f"ε at δ implied by μ = {mu:g} GDP alone", rows, up=True)))


@convert_app.command("mu-to-delta")
@guarded
def convert_mu_to_delta(mu: float = typer.Option(..., help="GDP μ."),
                        epsilon: list[float] = typer.Option([1.0], help="ε at which to read δ (repeatable)."),
                        fmt: str = ResultFormatOpt, output: Optional[Path] = OutputOpt) -> None:
    """mu -> delta(epsilon) (Kulynych & Honkela Eq. 11)."""
    warnings = fp.plausibility_warnings(mu=mu) + [w for e in epsilon for w in fp.plausibility_warnings(epsilon=e)]
    rows = {f"δ at ε = {e:g}": fp.delta_for_epsilon_from_mu(mu, e) for e in epsilon}
    payload = {"mu": mu, "delta_at_epsilon": [{"epsilon": e, "delta": fp.delta_for_epsilon_from_mu(mu, e)} for e in epsilon],
               "warnings": warnings}
    emit(payload, fmt, output, _warned(warnings, lambda: kv(f"δ at ε for μ = {mu:g}", rows, up=True)))


@convert_app.command("eps-delta-to-mu")
@guarded
def convert_eps_delta_to_mu(epsilon: float = typer.Option(..., help="ε of the (ε, δ)-DP guarantee."),
                            delta: str = typer.Option(..., help="delta (1e-5 or 0.001%)."),
                            fmt: str = ResultFormatOpt, output: Optional[Path] = OutputOpt) -> None:
    """(epsilon, delta) -> the largest mu whose GDP implies it (Gomez Table 3)."""
    d = fraction_option(delta, "delta")
    warnings = fp.plausibility_warnings(epsilon=epsilon, delta=d)
    m = fp.mu_for_epsilon_delta(epsilon, d)
    emit({"epsilon": epsilon, "delta": d, "mu": m, "warnings": warnings}, fmt, output,
         _warned(warnings, lambda: kv(f"Largest μ whose GDP implies (ε = {epsilon:g}, δ = {d:g})",
                                      {"μ (rounded down: any μ up to it implies the pair)": m}, up=False)))



@convert_app.command("rho-to-mu")
@guarded
def convert_rho_to_mu(rho: float = typer.Option(..., help="zCDP parameter rho."),
                      fmt: str = ResultFormatOpt, output: Optional[Path] = OutputOpt) -> None:
    """rho -> the Gaussian reading sqrt(2 rho) and the tight mu that rho-zCDP guarantees."""
    with working("Computing the rho-zCDP curve..."):
        rows = {"Gaussian mechanism that is exactly rho-zCDP: mu = sqrt(2 rho)": fp.gaussian_mu_from_rho(rho),
                "tight mu-GDP of any rho-zCDP mechanism (FPR, FNR >= 1e-10)": fp.mu_bound_from_rho(rho)}
    payload = {"rho": rho, "gaussian_mu": rows["Gaussian mechanism that is exactly rho-zCDP: mu = sqrt(2 rho)"],
               "mu_bound": rows["tight mu-GDP of any rho-zCDP mechanism (FPR, FNR >= 1e-10)"]}
    emit(payload, fmt, output, lambda: kv(f"mu for rho = {rho:g} zCDP", rows, up=True))


@convert_app.command("mu-to-rho")
@guarded
def convert_mu_to_rho(mu: float = typer.Option(..., help="GDP mu of a Gaussian mechanism."),
                      fmt: str = ResultFormatOpt, output: Optional[Path] = OutputOpt) -> None:
    """mu -> rho = mu^2 / 2, the zCDP parameter of the Gaussian mechanism with that mu."""
    r = fp.rho_from_gaussian_mu(mu)
    emit({"mu": mu, "rho": r}, fmt, output, lambda: kv(f"rho for mu = {mu:g}", {"rho = mu^2 / 2": r}, up=True))


@convert_app.command("rho-to-eps")
@guarded
def convert_rho_to_eps(rho: float = typer.Option(..., help="zCDP parameter rho."),
                       delta: list[float] = typer.Option([1e-5, 1e-6, 1e-9], help="Repeat for several."),
                       fmt: str = ResultFormatOpt, output: Optional[Path] = OutputOpt) -> None:
    """rho -> epsilon(delta): the optimal conversion (sound), beside the classic formula."""
    with working("Converting..."):
        rows_p = [{"delta": d, "epsilon": fp.epsilon_for_delta_from_rho(rho, d),
                   "epsilon_classic": fp.classic_epsilon_for_delta_from_rho(rho, d)} for d in delta]
    rows = {}
    for r in rows_p:
        rows[f"delta = {r['delta']:g} (optimal)"] = r["epsilon"]
        rows[f"delta = {r['delta']:g} (rho + 2 sqrt(rho log 1/delta))"] = r["epsilon_classic"]
    emit({"rho": rho, "epsilon_at_delta": rows_p}, fmt, output, lambda: kv(f"epsilon(delta) for rho = {rho:g}", rows, up=True))


@convert_app.command("rdp-to-eps")
@guarded
def convert_rdp_to_eps(orders: list[float] = typer.Option(..., "--order", help="Rényi order t > 1 (repeatable)."),
                       epsilons: list[float] = typer.Option(..., "--epsilon", help="eps(t) at that order (repeatable)."),
                       delta: list[float] = typer.Option([1e-5, 1e-6, 1e-9], help="Repeat for several."),
                       fmt: str = ResultFormatOpt, output: Optional[Path] = OutputOpt) -> None:
    """RDP (order, epsilon) pairs -> epsilon(delta): the improved conversion (sound)."""
    with working("Converting..."):
        rows_p = [{"delta": d, "epsilon": fp.epsilon_for_delta_from_rdp(orders, epsilons, d)} for d in delta]
    emit({"orders": orders, "epsilons": epsilons, "epsilon_at_delta": rows_p}, fmt, output,
         lambda: kv("epsilon(delta) for the RDP list", {f"delta = {r['delta']:g}": r["epsilon"] for r in rows_p}, up=True))


@guarded
def tables(fmt: str = typer.Option("text", "--format", "-f", help="text, json or csv."),
           output: Optional[Path] = OutputOpt) -> None:
    """Regenerate the seed tables (Kulynych & Honkela Fig. 4b/5b/6b, Gomez Tables 2 and 3) at the
    papers' precision; where a printed number differs, the recomputed one is shown beside it."""
    with working("Computing tables..."):
        ts = fp.seed_tables()
    if fmt == "csv":
        from fdpkit.cli._common import write_output
        from fdpkit.report import csv_rows

        rows: list[list[Any]] = []
        for t in ts:
            rows += [[f"# {t.title} ({t.source})"], *t.formatted(), *([[f"# {t.note}"]] if t.note else []), []]
        data = csv_rows(rows)
        write_output(output, data.encode()) if output else sys.stdout.write(data)
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
            if t.note:
                out.print(t.note, soft_wrap=True)

    emit({"tables": [t.to_dict() for t in ts]}, fmt, output, text)

