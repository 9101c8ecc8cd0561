"""One report model, rendered to JSON, CSV, Markdown, HTML and PDF.

``ReportDocument`` arranges a :class:`fdpkit.privacy.PrivacyReport` into titled sections of
sentences and tables (strings already formatted), plus the figures to draw. Renderers only
lay it out; they compute nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

from fdpkit.privacy import PrivacyReport


def fmt(x: Any, digits: int = 4) -> str:
    """Numbers for people: 4 significant digits, inf as the symbol."""
    if isinstance(x, str):
        return x
    if x is None:
        return "-"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return str(x)
    v = float(x)
    if math.isinf(v):
        return "∞" if v > 0 else "-∞"
    if v == 0:
        return "0"
    return f"{v:.{digits}g}"


@dataclass(frozen=True)
class Table:
    """A titled table of formatted strings."""

    title: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    note: str = ""


@dataclass(frozen=True)
class Section:
    title: str
    paragraphs: tuple[str, ...] = ()
    tables: tuple[Table, ...] = ()


@dataclass(frozen=True)
class Figure:
    """A figure: ``draw(ax)`` fills a matplotlib Axes."""

    name: str
    caption: str
    draw: Callable[[Any], Any] = field(repr=False)


@dataclass(frozen=True)
class ReportDocument:
    title: str
    summary: str
    sections: tuple[Section, ...]
    figures: tuple[Figure, ...]
    data: dict[str, Any] = field(repr=False)  # the schema-versioned JSON form


def build_document(report: PrivacyReport) -> ReportDocument:
    """Arrange a privacy report for people (see module docs)."""
    from fdpkit.report import plots
    from fdpkit.report.representations import representation_figures, representation_section

    d = report.to_dict()
    g = d["guarantee"]
    fit = report.fit
    mu_text = fmt(fit.mu)
    summary = (
        f"{report.mechanism.label()} satisfies μ = {mu_text} Gaussian DP "
        f"(regret {fmt(fit.regret)}). {report.verdict}"
    )
    guarantee = Table(
        "Guarantee",
        ("quantity", "value"),
        (
            ("μ (tight, pessimistic)", mu_text),
            ("regret Δ", fmt(fit.regret)),
            ("verdict", report.verdict),
            ("FPR range", "all FPR in [0, 1]" if fit.alpha_min == 0 else
             f"attacks with FPR and FNR ≥ {fmt(fit.alpha_min)}"),
            ("τ (left out by the range)", fmt(fit.tau)),
            ("curve", f"{report.curve.bound} bound ({report.method})"),
            ("statement", fit.statement()),
        ),
    )
    eps = Table(
        "ε at standard δ (from the accountant's privacy profile)",
        ("δ", "ε"),
        tuple((fmt(r["delta"]), fmt(r["epsilon"] if r["epsilon"] != "inf" else math.inf)) for r in d["epsilon_at_delta"]),
    )
    tpr = Table(
        "Best attack at a given false-positive rate",
        ("FPR α", "certified TPR", "TPR / FPR", f"TPR under μ = {mu_text}"),
        tuple((fmt(r["fpr"]), fmt(r["tpr"]), fmt(r["tpr_over_fpr"]), fmt(r["tpr_gdp"])) for r in d["tpr_at_fpr"]),
        "TPR is an upper bound on the power of any membership-inference attack at that FPR.",
    )
    post = Table(
        f"Posterior after a positive attack at FPR {fmt(d['posterior']['fpr'])}",
        ("prior", "posterior"),
        tuple((fmt(r["prior"]), fmt(r["posterior"])) for r in d["posterior"]["rows"]),
        "de Fondeville Eq. 4: how far a positive attack can raise belief in membership.",
    )
    modes = {
        "none": "none: relative disclosure risk is bounded (de Fondeville Thm. 2)",
        "graceful": "graceful: confidence can approach certainty but never reach it",
        "catastrophic": "catastrophic: some outputs reveal membership with certainty",
    }
    risk = Table(
        "Risk summary",
        ("quantity", "value"),
        (("advantage (max TPR − FPR)", fmt(report.advantage)),
         ("failure mode", modes[report.failure_mode])),
    )
    inputs = Table("Inputs", ("field", "value"), tuple(_flatten(report.mechanism.to_dict())))
    prov = Table("Provenance", ("field", "value"), tuple((k, fmt(v) if not isinstance(v, str) else v) for k, v in d["provenance"].items()))
    sections = (
        Section("Guarantee", (), (guarantee,)),
        Section("Privacy profile", (), (eps,)),
        Section("Attack risk", (), (tpr, post, risk)),
        representation_section(report),
        Section("Warnings", tuple(report.warnings) or ("None.",)),
        Section("Inputs and provenance", (), (inputs, prov)),
        _statement_section(report),
    )
    curve, mu = report.curve, fit.mu
    figures = [
        Figure("tradeoff", "Trade-off curve (FNR β against FPR α) and the fitted G_μ",
               lambda ax: plots.tradeoff(ax, {"mechanism": curve}, mu=mu)),
        Figure("roc", "Log-log ROC: attack TPR against FPR",
               lambda ax: plots.roc_loglog(ax, {"mechanism": curve}, mu=mu)),
    ]
    if math.isfinite(mu):
        figures.append(Figure("difference", "Numeric curve against G_μ and their difference",
                              lambda ax: plots.curve_vs_gdp(ax, curve, mu)))
    figures += representation_figures(report)
    return ReportDocument(f"Privacy report: {report.mechanism.label()}", summary, sections, tuple(figures), d)


def _statement_section(report: PrivacyReport) -> Section:
    from fdpkit.report.paper import statement_section

    return statement_section(report)


def _flatten(obj: Any, prefix: str = ""):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _flatten(v, f"{prefix}{k}.")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _flatten(v, f"{prefix}{i}.")
    else:
        yield (prefix.rstrip("."), fmt(obj) if not isinstance(obj, str) else obj)
