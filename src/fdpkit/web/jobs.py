"""Heavy web jobs: plain module-level functions of plain data, run in the worker processes
of :mod:`fdpkit.web.pool` (picklable in and out). They call the library and the report
renderers; no maths here."""

from __future__ import annotations

import dataclasses
from typing import Any

import fdpkit as fp
from fdpkit.accounting import CostBudget, estimate_cost
from fdpkit.mechanisms import Mechanism, mechanism_from_dict


def prepare(spec: Any, discretization: float, budget: CostBudget | None) -> tuple[Mechanism, float]:
    """Parse a mechanism spec and refuse it at once when over ``budget`` (a ValueError
    naming the parameter to change); return it with its estimated work. Cheap: run in a
    thread before queueing heavy work."""
    mech = mechanism_from_dict(spec)
    cost = estimate_cost(mech, discretization)
    cost.check(budget)
    return mech, cost.work


def report_job(mech: Mechanism, discretization: float, fmt: str, budget: CostBudget | None) -> Any:
    """The privacy report of ``mech`` as the API's JSON-ready dict (``fmt="dict"``), a
    rendered document (json, csv, md, html, pdf: bytes) or the pieces of the report page
    (``fmt="page"``)."""
    from fdpkit.report import build_document, render_document

    rep = fp.privacy_report(mech, discretization=discretization, budget=budget)
    if fmt == "dict":
        return rep.to_dict()
    doc = build_document(rep)
    if fmt == "page":
        from fdpkit.report.figures import svg_inline
        from fdpkit.report.render import section_html

        tables = [section_html(s) for s in doc.sections if not s.collapsed and s.key not in ("headline", "warnings")]
        figures = [(f.caption, svg_inline(f.draw, title=f.caption)) for f in doc.figures]
        details = [section_html(s) for s in doc.sections if s.collapsed]
        return {"doc": dataclasses.replace(doc, figures=()), "tables": tables, "figures": figures,
                "details": details, "statement": rep.statement()}
    return render_document(doc, fmt)


def compare_job(entries: list, discretization: float, budget: CostBudget | None, points: int = 101) -> tuple[dict, str]:
    """Several guarantees on one trade-off plot (:func:`fdpkit.report.compare.compare_guarantees`):
    the data twin and the SVG with its accessible name. Closed forms are cheap (run in a
    thread); with a mechanism spec it accounts a PLD (run in a worker process)."""
    from fdpkit.report.compare import compare_guarantees
    from fdpkit.report.figures import svg_inline

    cmp = compare_guarantees(entries, discretization=discretization, budget=budget)
    svg = svg_inline(cmp.draw, title=cmp.title, size=(5.5, 5.5 + 0.22 * len(cmp.curves)))
    return cmp.to_dict(points), svg
