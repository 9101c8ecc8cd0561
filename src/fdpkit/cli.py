"""The ``fdpkit`` command line (typer + rich). It parses, calls the library and prints:
no maths here. Bad input exits with code 2 and one readable line on stderr."""

from __future__ import annotations

import contextlib
import functools
import json
import math
import sys
from pathlib import Path
from typing import Any, Callable, Optional

import typer
from rich.console import Console
from rich.table import Table as RichTable

import fdpkit as fp
from fdpkit._numerics import json_safe
from fdpkit.mechanisms import mechanism_from_dict
from fdpkit.report.model import fmt as fmt_num

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Honest, tight, readable privacy guarantees (f-DP, Gaussian DP).")
report_app = typer.Typer(help="Privacy report of a mechanism: mu, regret, risk, exports.")
convert_app = typer.Typer(help="Convert between epsilon, delta and mu.", no_args_is_help=True)
calibrate_app = typer.Typer(help="Solve DP-SGD for one unknown.", no_args_is_help=True)
app.add_typer(report_app, name="report")
app.add_typer(convert_app, name="convert")
app.add_typer(calibrate_app, name="calibrate")

out = Console()
err = Console(stderr=True)
FORMATS = ("text", "json", "csv", "md", "html", "pdf")


class State:
    quiet = False


def fail(message: str) -> None:
    sys.stderr.write(f"error: {message}\n")
    raise typer.Exit(2)


def guarded(fn: Callable) -> Callable:
    """Turn library ValueErrors (and missing files) into exit code 2 with one line."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any):
        try:
            return fn(*args, **kwargs)
        except (ValueError, OSError) as exc:
            fail(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)

    return wrapper


@contextlib.contextmanager
def working(message: str):
    """A rich spinner on stderr for anything that may take more than a second."""
    if State.quiet or not err.is_terminal:
        yield
        return
    with err.status(message, spinner="dots"):
        yield


def emit(payload: dict, fmt: str, output: Optional[Path], text: Callable[[], None]) -> None:
    """Print or write a small result (convert/risk/calibrate) as text or JSON."""
    if fmt == "json":
        data = json.dumps(json_safe(payload), indent=2, allow_nan=False) + "\n"
        if output:
            from fdpkit.report import write_atomic

            write_atomic(output, data.encode())
        else:
            sys.stdout.write(data)
        return
    if fmt != "text":
        fail(f"--format must be text or json for this command, got {fmt!r}")
    text()


# ----------------------------------------------------------------------------- callbacks
@app.callback()
def main_callback(quiet: bool = typer.Option(False, "--quiet", "-q", help="No spinners or extra text.")) -> None:
    State.quiet = quiet


# ----------------------------------------------------------------------------- report
def _load_spec(path: Path) -> dict:
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() == ".toml":
        try:
            import tomllib
        except ModuleNotFoundError:  # pragma: no cover - Python 3.10
            fail("TOML mechanism specs need Python 3.11 or newer; use JSON")
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"mechanism spec is not valid TOML: {exc}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"mechanism spec is not valid JSON: {exc}") from None


def _print_report(r: fp.PrivacyReport) -> None:
    from fdpkit.report import build_document

    doc = build_document(r)
    out.print(f"[bold]{doc.title}[/bold]")
    out.print(doc.summary, highlight=False, soft_wrap=True)
    for s in doc.sections:
        for p in s.paragraphs:
            out.print(f"[yellow]! {p}[/yellow]" if s.title == "Warnings" and p != "None." else p, highlight=False, soft_wrap=True)
        for t in s.tables:
            table = RichTable(title=t.title, title_justify="left")
            for h in t.header:
                table.add_column(h)
            for row in t.rows:
                table.add_row(*row)
            out.print(table)


def run_report(mechanism: fp.Mechanism, fmt: str, output: Optional[Path], discretization: float) -> None:
    if fmt not in FORMATS:
        fail(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    with working("Accounting the mechanism..."):
        r = fp.privacy_report(mechanism, discretization=discretization)
    if fmt == "text":
        if output:
            fail("--output needs a file format (--format json, csv, md, html or pdf)")
        _print_report(r)
        return
    from fdpkit.report import build_document, render_document, write_atomic

    with working(f"Rendering {fmt}..."):
        data = render_document(build_document(r), fmt)
    if output:
        write_atomic(output, data)
        if not State.quiet:
            err.print(f"wrote {output}")
    elif fmt == "pdf":
        fail("PDF output needs --output PATH")
    else:
        sys.stdout.write(data.decode("utf-8"))


FormatOpt = typer.Option("text", "--format", "-f", help="text, json, csv, md, html or pdf.")
OutputOpt = typer.Option(None, "--output", "-o", help="Write to this file (atomically).")
DiscOpt = typer.Option(1e-4, "--discretization", help="PLD discretization interval.")


@report_app.callback(invoke_without_command=True)
@guarded
def report_main(
    ctx: typer.Context,
    mechanism: Optional[Path] = typer.Option(None, "--mechanism", "-m", help="Mechanism spec (JSON or TOML)."),
    fmt: str = FormatOpt, output: Optional[Path] = OutputOpt, discretization: float = DiscOpt,
) -> None:
    """Report a mechanism given as a spec file, or use a subcommand."""
    if ctx.invoked_subcommand is not None:
        ctx.obj = {"fmt": fmt, "output": output, "discretization": discretization}
        return
    if mechanism is None:
        fail("give --mechanism SPEC or a subcommand (dpsgd, gaussian, laplace, randomized-response, pure-dp, approx-dp)")
    run_report(mechanism_from_dict(_load_spec(mechanism)), fmt, output, discretization)


def _opts(ctx: typer.Context, fmt: str, output: Optional[Path], disc: float) -> tuple:
    parent = ctx.obj or {}
    return (fmt if fmt != "text" else parent.get("fmt", "text"),
            output or parent.get("output"), disc if disc != 1e-4 else parent.get("discretization", 1e-4))


@report_app.command("dpsgd")
@guarded
def report_dpsgd(ctx: typer.Context,
                 noise_multiplier: float = typer.Option(..., help="Noise sd / clipping norm."),
                 sample_rate: float = typer.Option(..., help="Poisson sampling rate (batch / dataset size)."),
                 steps: int = typer.Option(..., help="Number of steps."),
                 fmt: str = FormatOpt, output: Optional[Path] = OutputOpt, discretization: float = DiscOpt) -> None:
    """DP-SGD: STEPS Poisson-subsampled Gaussian steps."""
    run_report(fp.dpsgd(noise_multiplier, sample_rate, steps), *_opts(ctx, fmt, output, discretization))


@report_app.command("gaussian")
@guarded
def report_gaussian(ctx: typer.Context, sigma: float = typer.Option(..., help="Noise standard deviation."),
                    sensitivity: float = typer.Option(1.0), times: int = typer.Option(1, help="Repetitions."),
                    fmt: str = FormatOpt, output: Optional[Path] = OutputOpt, discretization: float = DiscOpt) -> None:
    """Gaussian mechanism (repeated TIMES times)."""
    mech = fp.Gaussian(sigma, sensitivity)
    run_report(mech if times == 1 else fp.Repeated(mech, times), *_opts(ctx, fmt, output, discretization))


@report_app.command("laplace")
@guarded
def report_laplace(ctx: typer.Context, scale: float = typer.Option(..., help="Laplace scale b."),
                   sensitivity: float = typer.Option(1.0), times: int = typer.Option(1, help="Repetitions."),
                   fmt: str = FormatOpt, output: Optional[Path] = OutputOpt, discretization: float = DiscOpt) -> None:
    """Laplace mechanism (repeated TIMES times)."""
    mech = fp.Laplace(scale, sensitivity)
    run_report(mech if times == 1 else fp.Repeated(mech, times), *_opts(ctx, fmt, output, discretization))


@report_app.command("randomized-response")
@guarded
def report_rr(ctx: typer.Context, epsilon: float = typer.Option(...),
              fmt: str = FormatOpt, output: Optional[Path] = OutputOpt, discretization: float = DiscOpt) -> None:
    """Binary randomized response."""
    run_report(fp.RandomizedResponse(epsilon), *_opts(ctx, fmt, output, discretization))


@report_app.command("pure-dp")
@guarded
def report_pure(ctx: typer.Context, epsilon: float = typer.Option(...),
                fmt: str = FormatOpt, output: Optional[Path] = OutputOpt, discretization: float = DiscOpt) -> None:
    """Any epsilon-DP mechanism (worst case)."""
    run_report(fp.PureDP(epsilon), *_opts(ctx, fmt, output, discretization))


@report_app.command("approx-dp")
@guarded
def report_approx(ctx: typer.Context, epsilon: float = typer.Option(...), delta: float = typer.Option(...),
                  fmt: str = FormatOpt, output: Optional[Path] = OutputOpt, discretization: float = DiscOpt) -> None:
    """Any (epsilon, delta)-DP mechanism (worst case)."""
    run_report(fp.ApproxDP(epsilon, delta), *_opts(ctx, fmt, output, discretization))


# ----------------------------------------------------------------------------- convert
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
    emit((payload), fmt, output, lambda: _kv(f"mu for pure epsilon = {epsilon:g}", rows))


@convert_app.command("mu-to-eps")
@guarded
def convert_mu_to_eps(mu: float = typer.Option(...),
                      delta: list[float] = typer.Option([1e-5, 1e-6, 1e-9], help="Repeat for several."),
                      fmt: str = typer.Option("text", "--format", "-f"), output: Optional[Path] = OutputOpt) -> None:
    """mu -> epsilon(delta) (Kulynych & Honkela Eq. 11, inverted)."""
    rows = {f"delta = {d:g}": fp.epsilon_for_delta(mu, d) for d in delta}
    payload = {"mu": mu, "epsilon_at_delta": [{"delta": d, "epsilon": fp.epsilon_for_delta(mu, d)} for d in delta]}
    emit((payload), fmt, output, lambda: _kv(f"epsilon(delta) for mu = {mu:g}", rows))


@convert_app.command("mu-to-delta")
@guarded
def convert_mu_to_delta(mu: float = typer.Option(...), epsilon: list[float] = typer.Option([1.0]),
                        fmt: str = typer.Option("text", "--format", "-f"), output: Optional[Path] = OutputOpt) -> None:
    """mu -> delta(epsilon) (Kulynych & Honkela Eq. 11)."""
    rows = {f"epsilon = {e:g}": fp.delta_for_epsilon(mu, e) for e in epsilon}
    payload = {"mu": mu, "delta_at_epsilon": [{"epsilon": e, "delta": fp.delta_for_epsilon(mu, e)} for e in epsilon]}
    emit((payload), fmt, output, lambda: _kv(f"delta(epsilon) for mu = {mu:g}", rows))


@convert_app.command("eps-delta-to-mu")
@guarded
def convert_eps_delta_to_mu(epsilon: float = typer.Option(...), delta: float = typer.Option(...),
                            fmt: str = typer.Option("text", "--format", "-f"), output: Optional[Path] = OutputOpt) -> None:
    """(epsilon, delta) -> the largest mu whose GDP implies it (Gomez Table 3)."""
    m = fp.mu_for_epsilon_delta(epsilon, delta)
    emit(({"epsilon": epsilon, "delta": delta, "mu": m}), fmt, output,
         lambda: _kv(f"mu with the same delta at epsilon = {epsilon:g}", {f"delta = {delta:g}": m}))


def _kv(title: str, rows: dict) -> None:
    table = RichTable(title=title, title_justify="left")
    table.add_column("")
    table.add_column("value")
    for k, v in rows.items():
        table.add_row(k, fmt_num(v))
    out.print(table)


# ----------------------------------------------------------------------------- risk
@app.command("risk")
@guarded
def risk(mu: Optional[float] = typer.Option(None, help="GDP mu."),
         epsilon: Optional[float] = typer.Option(None, help="Pure or approximate DP epsilon (with --delta)."),
         delta: Optional[float] = typer.Option(None, help="delta of an (epsilon, delta) guarantee."),
         prior: list[float] = typer.Option([0.01], help="Prior probability of membership (repeatable)."),
         fpr: list[float] = typer.Option([1e-3], help="Attack FPR (repeatable)."),
         fmt: str = typer.Option("text", "--format", "-f"), output: Optional[Path] = OutputOpt) -> None:
    """Attack-risk reading of mu-GDP or (epsilon, delta)-DP."""
    if (mu is None) == (epsilon is None):
        fail("give exactly one of --mu or --epsilon")
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
    emit((payload), fmt, output, lambda: _kv(f"Risk of {name}", rows))


# ----------------------------------------------------------------------------- tables
@app.command("tables")
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


# ----------------------------------------------------------------------------- calibrate
@calibrate_app.command("dpsgd")
@guarded
def calibrate_dpsgd(mu: Optional[float] = typer.Option(None), noise_multiplier: Optional[float] = typer.Option(None),
                    sample_rate: Optional[float] = typer.Option(None), steps: Optional[int] = typer.Option(None),
                    discretization: float = DiscOpt,
                    fmt: str = typer.Option("text", "--format", "-f"), output: Optional[Path] = OutputOpt) -> None:
    """Leave exactly one of --mu, --noise-multiplier, --sample-rate, --steps out; it is solved for."""
    with working("Calibrating (several accounting runs)..."):
        r = fp.calibrate_dpsgd(mu=mu, noise_multiplier=noise_multiplier, sample_rate=sample_rate,
                               steps=steps, discretization=discretization)
    emit((r.to_dict()), fmt, output, lambda: _kv(
        f"DP-SGD calibrated for {r.unknown}",
        {r.unknown: r.value, "achieved mu": r.achieved_mu, "converged": str(r.converged),
         "accounting runs": r.evaluations + r.coarse_evaluations}))


# ----------------------------------------------------------------------------- power / plan
@app.command("power")
@guarded
def power(effect: float = typer.Option(..., help="Mean shift to detect."),
          n: float = typer.Option(..., help="Number of observations."),
          sd: float = typer.Option(..., help="Measurement sd of one observation."),
          mu: list[float] = typer.Option([], help="GDP mu of the release (repeatable)."),
          epsilon: list[float] = typer.Option([], help="Laplace epsilon of the release (repeatable)."),
          alpha: float = typer.Option(0.05, help="Test level."),
          data_range: float = typer.Option(1.0, help="Width of the data range."),
          alternative: str = typer.Option("larger", help="larger, smaller or two-sided."),
          tests: int = typer.Option(1, help="Number of planned tests (Bonferroni)."),
          fmt: str = typer.Option("text", "--format", "-f"), output: Optional[Path] = OutputOpt) -> None:
    """Power of a Z-test for a mean released with Gaussian (mu) or Laplace (epsilon) noise."""
    level = fp.adjusted_alpha(alpha, tests) if tests > 1 else alpha
    kw = dict(effect=effect, n=n, sd=sd, alpha=level, data_range=data_range, alternative=alternative)
    rows = {"non-private": fp.ztest_power(mu=math.inf, **kw)}
    rows.update({f"Gaussian, mu = {m:g}": fp.ztest_power(mu=m, **kw) for m in mu})
    rows.update({f"Laplace, epsilon = {e:g}": fp.ztest_power_laplace(epsilon=e, **kw) for e in epsilon})
    payload = {"alpha_per_test": level, "power": [{"release": k, "power": v} for k, v in rows.items()]}
    emit((payload), fmt, output, lambda: _kv(f"Power at level {level:g}", rows))


@app.command("plan")
@guarded
def plan(guide: str = typer.Argument(..., help="utility-first or privacy-first"),
         effect: float = typer.Option(...), n: float = typer.Option(...), sd: float = typer.Option(...),
         alpha: float = typer.Option(0.05), data_range: float = typer.Option(1.0),
         required_power: Optional[float] = typer.Option(None, help="utility-first: power to keep."),
         max_relative_loss: Optional[float] = typer.Option(None, help="utility-first: largest relative power loss."),
         max_relative_risk: Optional[float] = typer.Option(None, help="privacy-first: largest relative risk."),
         max_attack_power: Optional[float] = typer.Option(None, help="privacy-first: largest attack TPR at --fpr."),
         blatant_ok: bool = typer.Option(False, "--blatant-ok", help="privacy-first: blatant disclosure acceptable."),
         high_confidence_ok: bool = typer.Option(True, "--high-confidence-ok/--bounded-confidence",
                                                 help="privacy-first: unbounded attacker confidence acceptable."),
         prior: float = typer.Option(0.01), fpr: float = typer.Option(1e-3),
         fmt: str = typer.Option("text", "--format", "-f"), output: Optional[Path] = OutputOpt) -> None:
    """Privacy-first or utility-first planning guide (de Fondeville Sec. 5)."""
    spec = fp.ZTestSpec(effect=effect, n=n, sd=sd, alpha=alpha, data_range=data_range)
    if guide == "utility-first":
        res = fp.utility_first(analysis=spec, required_power=required_power, max_relative_loss=max_relative_loss,
                               prior=prior, fpr=fpr)
        d = res.to_dict()
        rows = {k: d[k] for k in ("criterion", "mu_min", "power", "nonprivate_power", "posterior",
                                  "attack_power", "relative_risk", "epsilon_at_1e5", "reachable")}
        if res.reason:
            rows["reason"] = res.reason
    elif guide == "privacy-first":
        res = fp.privacy_first(blatant_disclosure_ok=blatant_ok, high_confidence_ok=high_confidence_ok,
                               max_relative_risk=max_relative_risk, max_attack_power=max_attack_power,
                               fpr=fpr, analysis=spec)
        d = res.to_dict()
        rows = {"admissible": ", ".join(d["admissible_families"])}
        for o in d["options"]:
            rows[f"{o['mechanism']}: {o['parameter']}"] = o["value"]
            rows[f"{o['mechanism']}: power"] = o["power"]
    else:
        fail(f"guide must be utility-first or privacy-first, got {guide!r}")
    emit(d, fmt, output, lambda: _kv(f"{guide} plan", {k: (v if isinstance(v, str) else fmt_num(v)) for k, v in rows.items()}))


# ----------------------------------------------------------------------------- plot
PLOTS = ("tradeoff", "roc", "difference", "profile", "posterior", "relative-risk", "attack-power")


@app.command("plot")
@guarded
def plot(kind: str = typer.Argument(..., help=", ".join(PLOTS)),
         output: Path = typer.Option(..., "--output", "-o", help="File ending in .svg, .png or .pdf."),
         mu: list[float] = typer.Option([], help="GDP mu (repeatable)."),
         epsilon: list[float] = typer.Option([], help="Laplace / pure-DP epsilon (repeatable)."),
         mechanism: Optional[Path] = typer.Option(None, "--mechanism", "-m", help="Mechanism spec to plot."),
         discretization: float = DiscOpt) -> None:
    """Write one of the plots to SVG/PNG/PDF."""
    from fdpkit.report import plots, write_atomic
    from fdpkit.report.figures import render

    if kind not in PLOTS:
        fail(f"plot kind must be one of {', '.join(PLOTS)}, got {kind!r}")
    fmt = output.suffix.lower().lstrip(".")
    curves: dict[str, fp.TradeOffCurve] = {f"μ = {m:g}": fp.GaussianCurve(m) for m in mu}
    curves.update({f"Laplace ε = {e:g}": fp.LaplaceCurve(e) for e in epsilon})
    fitted = None
    if mechanism is not None:
        mech = mechanism_from_dict(_load_spec(mechanism))
        with working("Accounting the mechanism..."):
            c = fp.tradeoff_curve(mech, discretization=discretization)
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
    write_atomic(output, render(draw, fmt))
    if not State.quiet:
        err.print(f"wrote {output}")


# ----------------------------------------------------------------------------- serve
@app.command("serve")
def serve(host: str = typer.Option("127.0.0.1"), port: int = typer.Option(8000)) -> None:
    """Start the web calculator."""
    import uvicorn

    from fdpkit.web.main import create_app

    err.print(f"fdpkit web calculator on http://{host}:{port}/")
    uvicorn.run(create_app(), host=host, port=port, log_level="warning")


def main() -> None:  # pragma: no cover - console entry point
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
