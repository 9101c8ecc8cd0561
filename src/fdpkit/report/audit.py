"""The "Audit" section of the report formats: an audit result (``fdpkit.run_audit``) arranged
as sentences, tables and a log-log ROC with confidence boxes, for every renderer
(JSON, CSV, Markdown, HTML, PDF). Nothing is computed here: every number comes from the
:class:`fdpkit.audit.AuditResult`."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from fdpkit.report.model import Figure, ReportDocument, Section, Table, _symbols, fmt
from fdpkit.curves import GaussianCurve
from fdpkit.report.plots import FPR_LABEL, TPR_LABEL

#: Confidence boxes drawn at most (spread over the bounded thresholds).
MAX_BOXES = 40
_FLOOR = 1e-12  # log axes: zero FPR/TPR drawn here
_WARNING = ("VIOLATION: with confidence {:g} the audited attack does better than the certified guarantee "
            "allows; see the Audit section for where, and what may be wrong.")


def audit_roc(ax, result: Any):
    """Log-log ROC: the empirical ROC, the one-sided confidence boxes
    [FPR, FPR_upper] x [TPR_lower, TPR] at the bounded thresholds, the certified curve
    (when given) and G_mu at the empirical lower bound."""
    from matplotlib.patches import Rectangle

    grid = np.geomspace(_FLOOR, 1.0, 300)
    fpr, tpr = result.roc_samples()
    ax.loglog(np.maximum(fpr, _FLOOR), np.maximum(tpr, _FLOOR), drawstyle="steps-post", color="C0",
              label=f"empirical ROC ({result.members:,} members, {result.nonmembers:,} non-members)")
    p = result.points
    shown = np.unique(np.linspace(0, len(p) - 1, min(MAX_BOXES, len(p))).round().astype(int))
    for i in shown:
        x0, x1 = max(float(p.fpr[i]), _FLOOR), max(float(p.fpr_upper[i]), _FLOOR)
        y0, y1 = max(float(p.tpr_lower[i]), _FLOOR), max(float(p.tpr[i]), _FLOOR)
        ax.add_patch(Rectangle((x0, y0), x1 - x0, y1 - y0, fill=False, lw=0.6, color="C0", alpha=0.6))
    i = result.mu_index
    ax.loglog([max(float(p.fpr_upper[i]), _FLOOR)], [max(float(p.tpr_lower[i]), _FLOOR)], "o", color="C3",
              label=f"best box corner: μ ≥ {fmt(result.mu_lower, up=False)} ({result.confidence:g} confidence)")
    if result.certified is not None:
        c = result.certified
        ax.loglog(grid, np.maximum(c.curve.tpr(grid), _FLOOR), color="C2",
                  label=f"certified ({c.curve_bound}), μ = {fmt(c.mu, up=True)}")
    if result.mu_lower > 0:
        ax.loglog(grid, np.maximum(GaussianCurve(result.mu_lower).tpr(grid), _FLOOR), "--", color="C3",
                  label=f"$G_\\mu$ at the lower bound μ = {fmt(result.mu_lower, up=False)}")
    ax.loglog(grid, grid, ":", color="grey", label="TPR = FPR (random guess)")
    lo = max(_FLOOR, min(float(np.min(p.fpr_upper)), 1.0) / 10)
    ax.set_xlim(lo, 1.5)
    ax.set_ylim(lo, 1.5)
    ax.set_xlabel(FPR_LABEL)
    ax.set_ylabel(TPR_LABEL)
    ax.legend(fontsize="x-small", loc="lower right")
    return ax


def audit_tables(result: Any) -> tuple[Table, ...]:
    """The audit's numbers as tables: the result, and the best thresholds."""
    best = result.best()
    rows = [
        ("source", f"{result.source} ({result.members:,} members, {result.nonmembers:,} non-members)"),
        ("confidence (joint, all bounds)", fmt(result.confidence)),
        ("μ lower bound", fmt(result.mu_lower, up=False)),  # lower bounds round down, certified up
        (f"ε lower bound at δ = {fmt(result.delta)}", f"{fmt(result.epsilon_lower, up=False)} ({result.epsilon_side})"),
        ("best threshold: FPR ≤ / TPR ≥", f"{fmt(best['fpr_upper'], up=True)} / {fmt(best['tpr_lower'], up=False)}"),
        ("best threshold: counts", f"FP {best['false_positives']:,} of {best['nonmembers']:,}, "
                                   f"TP {best['true_positives']:,} of {best['members']:,}"),
        ("bounds", _symbols(result.correction)),
    ]
    if result.certified is not None:
        c = result.certified
        rows += [
            ("certified guarantee", c.description),
            ("certified μ", f"{fmt(c.mu, up=True)} ({c.curve_bound} curve)"),
            (f"certified ε at δ = {fmt(result.delta)}", fmt(c.epsilon, up=True)),
            ("audit gap (certified μ − μ lower bound)", fmt(result.audit_gap)),
            ("violation", "YES" if result.violation else "no"),
        ]
    main = Table("Audit", ("quantity", "value"), tuple((k, str(v)) for k, v in rows),
                 "Lower bounds hold together with the stated confidence; an audit can refute a "
                 "guarantee, never prove it.")
    p = result.points
    order = np.argsort(-np.where(np.isfinite(p.mu_lower), p.mu_lower, -np.inf))[:8]
    thr = Table(
        "Thresholds with the largest μ lower bounds",
        ("threshold", "FP / non-members", "TP / members", "FPR ≤", "TPR ≥", "μ ≥"),
        tuple(("-" if p.threshold is None else fmt(float(p.threshold[i])),
               f"{int(p.false_positives[i]):,} / {int(p.nonmembers[i]):,}",
               f"{int(p.true_positives[i]):,} / {int(p.members[i]):,}",
               fmt(float(p.fpr_upper[i]), up=True), fmt(float(p.tpr_lower[i]), up=False),
               fmt(max(0.0, float(p.mu_lower[i])), up=False) if np.isfinite(p.mu_lower[i]) else "-")
              for i in order),
        "Test: score > threshold. For score audits the FP count is the non-member rank used in the bound.",
    )
    return main, thr


def audit_section(result: Any) -> Section:
    """The "Audit" section: the verdict, how the bounds were made, and the tables."""
    return Section("Audit", (_symbols(result.verdict),), audit_tables(result))


def audit_figure(result: Any) -> Figure:
    """The audit's plot: the empirical ROC with its confidence boxes against the certified
    curve, log-log (:func:`audit_roc`)."""
    return Figure("audit-roc", "Audit: empirical ROC with confidence boxes against the certified curve (log-log)",
                  lambda ax: audit_roc(ax, result))


def build_audit_document(result: Any) -> ReportDocument:
    """A stand-alone audit document for every renderer; a violation also goes under
    "Warnings" so renderers show it loudly."""
    cert = result.certified
    title = "Audit" + (f": {cert.description}" if cert is not None else " of a membership-inference attack")
    sections = [audit_section(result)]
    if result.violation:
        sections.append(Section("Warnings", (_WARNING.format(result.confidence),)))
    return ReportDocument(title, result.headline(), tuple(sections), (audit_figure(result),),
                          {"audit": result.to_dict()}, kind="audit report")


def with_audit(document: ReportDocument, result: Any) -> ReportDocument:
    """A privacy-report document with the "Audit" section (and its plot) appended, and
    the audit under ``"audit"`` in its JSON data."""
    data = dict(document.data)
    data["audit"] = result.to_dict()
    sections = list(document.sections) + [audit_section(result)]
    if result.violation:
        warning = _WARNING.format(result.confidence)
        for i, s in enumerate(sections):
            if s.title == "Warnings":  # one Warnings section: add to it
                kept = tuple(p for p in s.paragraphs if p != "None.")
                sections[i] = dataclasses.replace(s, paragraphs=kept + (warning,))
                break
        else:
            sections.append(Section("Warnings", (warning,)))
    return dataclasses.replace(document, sections=tuple(sections),
                               figures=tuple(document.figures) + (audit_figure(result),), data=data)
