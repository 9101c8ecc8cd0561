"""One report model, rendered to JSON, CSV, Markdown, HTML and PDF.

``ReportDocument`` arranges a :class:`fdpkit.guarantee.privacy.PrivacyReport` into titled sections of
sentences and tables (strings already formatted), plus the figures to draw. Renderers only
lay it out; they compute nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

from fdpkit.guarantee.privacy import PrivacyReport


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
    """A titled section of sentences and tables. ``key`` names it for code (renderers and
    other helpers find sections by key, not by title); ``collapsed`` sections are details a
    reviewer opens on demand (HTML ``<details>``), e.g. internal notes."""

    title: str
    paragraphs: tuple[str, ...] = ()
    tables: tuple[Table, ...] = ()
    key: str = ""
    collapsed: bool = False


@dataclass(frozen=True)
class Figure:
    """A figure: ``draw(ax)`` fills a matplotlib Axes."""

    name: str
    caption: str
    draw: Callable[[Any], Any] = field(repr=False)


@dataclass(frozen=True)
class ReportDocument:
    """Title, one-paragraph summary, sections (in reading order: headline first), figures
    and the schema-versioned JSON form. Add sections with :meth:`with_section`."""

    title: str
    summary: str
    sections: tuple[Section, ...]
    figures: tuple[Figure, ...]
    data: dict[str, Any] = field(repr=False)  # the schema-versioned JSON form
    grade: Any = None  # fdpkit.risk.Grade of the certified curve, for colour and icon
    #: what kind of document this is, for page footers ("fdpkit privacy report, page 2")
    kind: str = "privacy report"

    def section(self, key: str) -> Section | None:
        """The section with this key (or title), else None."""
        return next((s for s in self.sections if s.key == key or s.title == key), None)

    def for_grade_box(self) -> "ReportDocument":
        """A copy for renderers that draw the grade as a box with its definition (HTML, PDF):
        the headline's "Protection: ..." sentence, which says the same, is left out."""
        from dataclasses import replace

        if self.grade is None:
            return self
        return replace(self, sections=tuple(
            replace(s, paragraphs=tuple(p for p in s.paragraphs if not p.startswith("Protection: ")))
            if s.key == "headline" else s for s in self.sections))

    def with_section(self, section: Section, *, before: str | None = None) -> "ReportDocument":
        """A copy with ``section`` added (before the section keyed ``before``, else before the
        collapsed sections at the end)."""
        from dataclasses import replace

        secs = list(self.sections)
        idx = next((i for i, s in enumerate(secs) if before is not None and (s.key == before or s.title == before)),
                   next((i for i, s in enumerate(secs) if s.collapsed), len(secs)))
        secs.insert(idx, section)
        return replace(self, sections=tuple(secs))


#: Human labels for the fields of mechanism specs (inputs table).
FIELD_LABELS = {
    "sigma": "noise standard deviation σ", "sensitivity": "sensitivity Δ", "scale": "Laplace scale b",
    "epsilon": "ε", "delta": "δ", "sample_rate": "sample rate q", "times": "repetitions (steps)",
    "noise_multiplier": "noise multiplier σ", "steps": "steps", "p": "probability p", "n": "n",
}
_KIND_LABELS = {"repeated": "repeated", "subsampled": "subsampled", "gaussian": "Gaussian mechanism",
                "laplace": "Laplace mechanism", "composed": "composition", "pure_dp": "pure ε-DP mechanism",
                "approx_dp": "(ε, δ)-DP mechanism", "randomized_response": "randomized response"}
#: Warnings that concern the numerics rather than the guarantee: shown under "Technical notes".
_INTERNAL = ("tail truncation", "dp_accounting", "discretization")


def _symbols(text: str) -> str:
    """Greek letters for the ASCII names in library sentences (mu -> μ, tau -> τ); G_mu
    becomes G_μ, which HTML renders with a subscript and PDF as Gμ."""
    import re

    text = text.replace(" >= ", " ≥ ").replace(" <= ", " ≤ ")
    text = re.sub(r"\bG_mu\b", "G_μ", text)
    text = re.sub(r"\bmu-GDP\b", "μ-GDP", text)
    text = re.sub(r"\bmu\b", "μ", text)
    return re.sub(r"\btau\b", "τ", text)


def human_inputs(spec: dict, path: str = "") -> list[tuple[str, str]]:
    """(label, value) rows of a mechanism spec, with words instead of dotted keys.

    >>> human_inputs({"kind": "repeated", "times": 3, "inner": {"kind": "gaussian", "sigma": 2.0, "sensitivity": 1.0}})
    [('mechanism', 'repeated'), ('repetitions (steps)', '3'), ('mechanism (inside repeated)', 'Gaussian mechanism'), ('noise standard deviation σ (Gaussian mechanism)', '2'), ('sensitivity Δ (Gaussian mechanism)', '1')]
    """
    rows: list[tuple[str, str]] = []
    kind = str(spec.get("kind", ""))
    kind_label = _KIND_LABELS.get(kind, kind.replace("_", " "))
    rows.append(("mechanism" + (f" ({path})" if path else ""), kind_label))
    for k, v in spec.items():
        if k == "kind":
            continue
        if isinstance(v, dict):
            rows += human_inputs(v, f"inside {kind_label}")
        elif isinstance(v, (list, tuple)) and v and not any(isinstance(p, dict) for p in v):
            # a vector (a curve mechanism's vertices): one row, not one row per number
            label = FIELD_LABELS.get(k, k.replace("_", " ")) + (f" ({kind_label})" if path else "")
            text = ", ".join(fmt(p) for p in v) if len(v) <= 6 else \
                f"{len(v)} values, {fmt(v[0])} … {fmt(v[-1])}"
            rows.append((label, text))
        elif isinstance(v, (list, tuple)):
            for i, part in enumerate(v):
                if isinstance(part, dict):
                    rows += human_inputs(part, f"part {i + 1} of the {kind_label}")
                else:
                    rows.append((f"{FIELD_LABELS.get(k, k.replace('_', ' '))} {i + 1}", fmt(part)))
        else:
            label = FIELD_LABELS.get(k, k.replace("_", " "))
            suffix = f" ({kind_label})" if path else ""
            rows.append((label + suffix, fmt(v) if not isinstance(v, str) else v))
    return rows


def build_document(report: PrivacyReport) -> ReportDocument:
    """Arrange a privacy report for people (see module docs): the headline (μ, ε at δ, TPR at
    FPR 1e-3, grade) first, internal notes last and collapsed."""
    from fdpkit.report import plots
    from fdpkit.report.published import PUBLISHED, place_among
    from fdpkit.risk import relative_risk as _relative_risk
    from fdpkit.report.representations_section import representation_figures, representation_section

    d = report.to_dict()
    fit = report.fit
    mu_text = fmt(fit.mu)
    g = report.grade
    eps5 = next((e for dd, e in report.epsilons if dd == 1e-5), report.epsilons[0][1])
    d5 = 1e-5 if any(dd == 1e-5 for dd, _ in report.epsilons) else report.epsilons[0][0]
    tpr3 = float(report.curve.tpr(1e-3))
    placement = place_among(fit.mu) if math.isfinite(fit.mu) else \
        "No finite μ: not comparable with the published μ-GDP settings."
    summary = (
        f"{report.mechanism.label()}: μ = {mu_text} Gaussian DP, ε = {fmt(eps5)} at δ = {fmt(d5)}; "
        f"the best attack at FPR 0.001 reaches TPR ≤ {fmt(tpr3)}. {g.headline}."
    )
    headline = Table(
        "Headline",
        ("quantity", "value"),
        (
            ("μ (tight, pessimistic)", mu_text),
            (f"ε at δ = {fmt(d5)}", fmt(eps5)),
            ("best attack TPR at FPR 0.001", fmt(tpr3)),
            ("protection grade", f"{g.icon} {g.label} (level {g.level} of 0–3)"),
        ),
    )
    glance = Section("At a glance", (f"{g.headline}. {g.definition}", placement, _symbols(report.verdict)),
                     (headline,), key="headline")
    fit_table = Table(
        "Tight μ-GDP fit",
        ("quantity", "value"),
        (
            ("μ (tight, pessimistic)", mu_text),
            ("regret Δ", fmt(fit.regret)),
            ("verdict", _symbols(report.verdict)),
            ("FPR range", "all FPR in [0, 1]" if fit.alpha_min == 0 else
             f"attacks with FPR and FNR ≥ {fmt(fit.alpha_min)}"),
            ("τ (left out by the range)", fmt(fit.tau)),
            ("curve", f"{report.curve.bound} bound ({report.method})"),
            ("statement", _symbols(fit.statement())),
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
        "none": f"none: relative disclosure risk is bounded (de Fondeville Thm. 2): a positive attack "
                f"multiplies the attacker's odds by at most {fmt(_relative_risk(report.curve))}",
        "graceful": "graceful: confidence can approach certainty but never reach it",
        "catastrophic": "catastrophic: some outputs reveal membership with certainty",
    }
    risk = Table(
        "Risk summary",
        ("quantity", "value"),
        (("advantage (max TPR − FPR)", fmt(report.advantage)),
         ("failure mode", modes[report.failure_mode]),
         ("protection grade", f"{g.icon} {g.label}: {g.definition}")),
    )
    refs = sorted([(r.mu, r.name, fmt(r.epsilon_at_1e5) if r.epsilon_at_1e5 else "-", r.source) for r in PUBLISHED]
                  + ([(fit.mu, "▶ this mechanism", fmt(eps5) if d5 == 1e-5 else "-", "this report")]
                     if math.isfinite(fit.mu) else []), key=lambda x: x[0])
    compare = Table("Published settings, most private first", ("setting", "μ", "ε at δ = 1e-5", "source"),
                    tuple((name, fmt(m), e, src) for m, name, e, src in refs))
    user_warn = tuple(_symbols(w) for w in report.warnings if not any(k in w for k in _INTERNAL))
    internal = tuple(_symbols(w) for w in report.warnings if any(k in w for k in _INTERNAL))
    inputs = Table("Inputs", ("input", "value"), tuple(human_inputs(report.mechanism.to_dict())))
    prov = Table("Provenance", ("field", "value"),
                 tuple((k.replace("_", " "), fmt(v) if not isinstance(v, str) else v) for k, v in d["provenance"].items()))
    sections = (
        glance,
        Section("Guarantee", (), (fit_table,), key="guarantee"),
        Section("Privacy profile", (), (eps,), key="profile"),
        Section("Attack risk", (), (tpr, post, risk), key="risk"),
        representation_section(report),
        Section("Comparison with published settings", (placement,), (compare,), key="comparison"),
        Section("Warnings", user_warn or ("None.",), key="warnings"),
        Section("Inputs", (report.mechanism.label(),), (inputs,), key="inputs"),
        _statement_section(report),
        Section("Technical notes", internal or ("None.",), (prov,), key="notes", collapsed=True),
    )
    curve, mu = report.curve, fit.mu
    figures = [
        Figure("tradeoff", "Trade-off curve (FNR β against FPR α) and the fitted Gaussian curve",
               lambda ax: plots.tradeoff(ax, {"mechanism": curve}, mu=mu)),
        Figure("roc", "Log-log ROC: attack TPR against FPR",
               lambda ax: plots.roc_loglog(ax, {"mechanism": curve}, mu=mu)),
    ]
    if math.isfinite(mu):
        figures.append(Figure("difference", "Numeric curve minus the fitted Gaussian curve, on a log FPR axis "
                              "(≥ 0 where μ holds; Gomez et al. Fig. 7)",
                              lambda ax: plots.curve_vs_gdp(ax, curve, mu)))
    figures.append(Figure("posterior", "Posterior after a positive attack against the attack's FPR "
                          "(de Fondeville Fig. 2)", lambda ax: plots.posterior_vs_fpr(ax, curve)))
    figures += representation_figures(report)
    data = dict(d)
    data.setdefault("grade", g.to_dict())
    data.setdefault("comparison", {"sentence": placement, "references": [r.to_dict() for r in PUBLISHED]})
    return ReportDocument(f"Privacy report: {report.mechanism.label()}", summary, sections, tuple(figures), data, g)


def _statement_section(report: PrivacyReport) -> Section:
    from fdpkit.report.paper import statement_section

    return statement_section(report)
