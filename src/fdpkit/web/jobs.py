"""Heavy web jobs: plain module-level functions of plain data, run in the worker processes
of :mod:`fdpkit.web.pool` (picklable in and out). They call the library and the report
renderers; no maths here."""

from __future__ import annotations

import dataclasses
from typing import Any

import fdpkit as fp
from fdpkit.accounting import CostBudget, estimate_cost
from fdpkit.accounting._resolution import choose_discretization
from fdpkit.guarantee.privacy import deltas_led_by  # (the routers import it from here)
from fdpkit.accounting.work_limits import (  # noqa: F401  (the cost constants' home; names kept for callers)
    AUDIT_WORK_PER_SCORE, SIMULATION_WORK_PER_DRAW, SWEEP_WORK_PER_SETTING, sweep_cost,
)
from fdpkit.mechanisms import Mechanism, mechanism_from_dict


def warm_up(full: bool = True) -> None:
    """Run once in each worker process when it starts (``WorkerPool(warm=...)``): import the
    modules the jobs use and run every pass of a report once (Poisson and shuffled DP-SGD
    accounting at the library's default discretization and, with ``full``, the page's
    document and the JSON dict with its representations), so that the first request a
    worker serves costs what the library call costs. (About 3.5 s of one core, 1 s without
    ``full``, what the heavy lane runs: its jobs take seconds anyway; what stays per
    request is each mechanism's own work.)"""
    rep = fp.privacy_report(fp.dpsgd(2.0, 0.1, 10))
    fp.privacy_report(fp.dpsgd(2.0, batch_size=10, dataset_size=100, steps=4, sampling="shuffled",
                               relation="replace-one")).to_dict(representations=False)
    if full:
        from fdpkit.report import build_document

        build_document(rep)
        fp.privacy_report(fp.Gaussian(1.0)).to_dict()
        # one composition at a grid of a few 10^5 points: the allocator's thresholds and the
        # scratch buffers grow to that size once here (about 20% of a first such request's CPU)
        fp.privacy_report(fp.dpsgd(6.0, 0.25, 1000))


def warm_server() -> None:
    """Run once in the server process when it starts (in a thread): the cost model and the
    spec parser the server runs before queueing any job (:func:`prepare`)."""
    prepare(fp.dpsgd(2.0, 0.1, 10).to_dict(), 1e-4, None)
    choose_discretization(fp.dpsgd(2.0, 0.1, 10))


def prepare(spec: Any, discretization: float, budget: CostBudget | None) -> tuple[Mechanism, float]:
    """Parse a mechanism spec and refuse it at once when over ``budget`` (a ValueError
    naming the parameter to change); return it with its estimated work. Cheap: run in a
    thread before queueing heavy work."""
    mech = mechanism_from_dict(spec)
    cost = estimate_cost(mech, discretization)
    cost.check(budget)
    return mech, cost.work


def _on_page(section: Any) -> Any:
    """The report page shows the paper statement in its own card (with a copy button) near
    the top: the statement section keeps only its tables, not the heading and text again."""
    if section.key == "statement" and section.tables:
        return dataclasses.replace(section, title=section.tables[0].title, paragraphs=())
    return section


#: Reports this worker computed recently, by (mechanism, discretization, budget): a deferred
#: section (the representations) or a second format of the same report costs only its own
#: work. Only reports whose curve is small are kept (bounded memory).
_REPORTS: dict = {}
_REPORTS_SIZE = 8
_REPORT_MAX_VERTICES = 200_000


def cached_report(mech: Mechanism, discretization: float | None, budget: CostBudget | None,
                  deltas: tuple[float, ...] | None = None) -> Any:
    """``fp.privacy_report(mech, discretization=discretization, budget=budget)`` (at ``deltas``
    where given, else the library's), kept for the next job of this worker on the same inputs
    (the library's numbers, computed once)."""
    try:
        key: Any = (mech, discretization, budget, deltas)
        hash(key)
    except TypeError:  # pragma: no cover - an unhashable custom mechanism
        key = None
    if key is not None and key in _REPORTS:
        _REPORTS[key] = _REPORTS.pop(key)  # most recent last
        return _REPORTS[key]
    rep = fp.privacy_report(mech, discretization=discretization, budget=budget, **({"deltas": deltas} if deltas else {}))
    if key is not None and len(getattr(rep.curve, "alphas", ())) <= _REPORT_MAX_VERTICES:
        while len(_REPORTS) >= _REPORTS_SIZE:
            _REPORTS.pop(next(iter(_REPORTS)))
        _REPORTS[key] = rep
    return rep


def report_job(mech: Mechanism, discretization: float | None, fmt: str, budget: CostBudget | None,
               representations: bool = True, deltas: tuple[float, ...] | None = None) -> Any:
    """The privacy report of ``mech`` as the API's JSON-ready dict (``fmt="dict"``; without
    the representations section unless ``representations``), the representations section
    alone (``fmt="representations"``), a rendered document (json, csv, md, html, pdf: bytes)
    or the pieces of the report page (``fmt="page"``, ``"page-first"``, ``"page-extras"``:
    :func:`_page_parts`). ``discretization`` None: the
    library's rule (:func:`fdpkit.privacy_report`); ``deltas`` None: the library's δ."""
    from fdpkit.report import build_document, render_document

    rep = cached_report(mech, discretization, budget, deltas)
    if fmt == "dict":
        return rep.to_dict(representations=representations)
    if fmt == "representations":
        return rep.representations().to_dict()
    if fmt in ("page", "page-first", "page-extras"):
        return _page_parts(rep, fmt)
    return render_document(build_document(rep), fmt)


def _page_parts(rep: Any, fmt: str) -> dict[str, Any]:
    """The report page's pieces: everything (``"page"``); the document without the
    representations section and without figures (``"page-first"``: about the report's own
    cost, answered first); or the figures and the representations section that the page
    then fetches (``"page-extras"``)."""
    # function-level: the report's modules (matplotlib) load in the worker when a page asks for them
    from fdpkit.report import build_document
    from fdpkit.report.build import plain_figures
    from fdpkit.report.figures import svg_inline
    from fdpkit.report.render import section_html

    doc = build_document(rep, representations=fmt != "page-first")
    figures = [] if fmt == "page-first" else [(f.caption, svg_inline(f.draw, title=f.caption)) for f in doc.figures]
    if fmt == "page-extras":
        return {"figures": figures, "tables": [section_html(s) for s in doc.sections if s.key == "representations"]}
    tables = [section_html(_on_page(s)) for s in doc.sections
              if not s.collapsed and s.key not in ("headline", "warnings")]
    details = [section_html(s) for s in doc.sections if s.collapsed]
    return {"doc": dataclasses.replace(doc, figures=()), "tables": tables, "figures": figures,
            "details": details, "statement": rep.statement(), "extras": fmt == "page-first",
            "run_risk": {**plain_figures(rep), "advantage": float(rep.advantage)}}


def compare_job(entries: list, discretization: float, budget: CostBudget | None, points: int = 101) -> tuple[dict, str]:
    """Several guarantees on one trade-off plot (:func:`fdpkit.report.compare.compare_guarantees`):
    the data twin and the SVG with its accessible name. Closed forms are cheap (run in a
    thread); with a mechanism spec it accounts a PLD (run in a worker process)."""
    from fdpkit.report.compare import compare_guarantees
    from fdpkit.report.figures import svg_inline

    cmp = compare_guarantees(entries, discretization=discretization, budget=budget)
    svg = svg_inline(cmp.draw, title=cmp.title, size=(5.5, 5.5 + 0.22 * len(cmp.curves)))
    return cmp.to_dict(points), svg


# ------------------------------------------------------------------------------------ sweep
def sweep_map_job(body: dict[str, Any], figure: bool) -> dict[str, Any]:
    """One row of metrics per setting of the grid in ``body`` (noise_multiplier, sample_rate,
    steps, delta, discretization) and, with ``figure``, the regret map as inline SVG."""
    from fdpkit.sweep import run_sweep

    r = run_sweep(body["noise_multiplier"], body["sample_rate"], body["steps"], delta=body["delta"],
                  discretization=body["discretization"], executor="inprocess",
                  metrics=("mu", "regret", "epsilon", "tpr", "advantage"))
    out: dict[str, Any] = {"result": {"columns": list(r.columns), "rows": list(r.rows)}}
    if figure:
        from fdpkit.report.figures import svg_inline
        from fdpkit.report.sweep_plots import regret_map_plot

        out["figure"] = svg_inline(lambda ax: regret_map_plot(ax, r.rows), size=(7.0, 4.8))
    return out


def sweep_design_job(body: dict[str, Any], max_steps: int, figure: bool) -> dict[str, Any]:
    """The design table (smallest noise multiplier per batch size and epochs at a target mu);
    refused (ValueError naming ``steps``) when a pair needs more than ``max_steps`` steps."""
    from fdpkit.sweep import design_table

    rows = design_table(mu=body["mu"], batch_size=body["batch_size"], epochs=body["epochs"],
                        dataset_size=body["dataset_size"], delta=body["delta"],
                        discretization=body["discretization"], executor="inprocess")
    if any(r["steps"] > max_steps for r in rows):
        raise ValueError(f"steps (epochs x dataset_size / batch_size) must be at most {max_steps:,} on this page")
    out: dict[str, Any] = {"result": {"mu": body["mu"], "rows": rows}}
    if figure:
        from fdpkit.report.figures import svg_inline
        from fdpkit.report.sweep_plots import design_table_plot

        out["figure"] = svg_inline(lambda ax: design_table_plot(ax, rows))
    return out


# ------------------------------------------------------------------------------------ audit
def _certified(mechanism: Mechanism | None, discretization: float, budget: CostBudget | None) -> Any:
    """The privacy report an audit is read against (None stays None)."""
    if mechanism is None:
        return None
    return fp.privacy_report(mechanism, discretization=discretization, budget=budget)


def _audit_answer(result: Any, fmt: str) -> Any:
    """``fmt``: "view" (the page's pieces), "json" (the result's dict) or a report format
    (rendered bytes)."""
    if fmt == "json":
        return result.to_dict()
    if fmt == "view":
        from fdpkit.report.audit import audit_roc, audit_tables
        from fdpkit.report.figures import svg_inline
        from fdpkit.report.render import table_html

        return {"data": result.to_dict(), "verdict": result.verdict, "violation": result.violation,
                "tables": [table_html(t) for t in audit_tables(result)],
                "figure": svg_inline(lambda ax: audit_roc(ax, result)),
                "tpr_1e3": result.empirical_tpr_at(1e-3), "tpr_1e2": result.empirical_tpr_at(1e-2)}
    from fdpkit.report import render_document

    return render_document(result.document(), fmt)


def audit_scores_job(member_scores: Any, nonmember_scores: Any, confidence: float, delta: float,
                     mechanism: Mechanism | None, discretization: float, budget: CostBudget | None,
                     fmt: str) -> Any:
    """:func:`fdpkit.run_audit` of the scores, against ``mechanism`` when given."""
    result = fp.run_audit(member_scores, nonmember_scores, confidence=confidence, delta=delta,
                          mechanism=_certified(mechanism, discretization, budget))
    return _audit_answer(result, fmt)


def audit_counts_job(true_positives: Any, false_positives: Any, members: Any, nonmembers: Any,
                     confidence: float, delta: float, mechanism: Mechanism | None, discretization: float,
                     budget: CostBudget | None, fmt: str) -> Any:
    """:func:`fdpkit.audit_from_counts`, against ``mechanism`` when given."""
    result = fp.audit_from_counts(true_positives, false_positives, members, nonmembers, confidence=confidence,
                                  delta=delta, mechanism=_certified(mechanism, discretization, budget))
    return _audit_answer(result, fmt)


def simulate_job(ran: Mechanism, declared: Mechanism, trials: int, seed: int, confidence: float, delta: float,
                 discretization: float, budget: CostBudget | None, fmt: str) -> Any:
    """The optimal canary attack against ``ran`` (:func:`fdpkit.simulate_attack`), audited
    against ``declared``; ``fmt`` "view" or "json" (with a ``simulated`` entry), or a report
    format (the audit document's bytes)."""
    sim = fp.simulate_attack(ran, trials=trials, seed=seed)
    result = sim.audit(confidence=confidence, delta=delta, mechanism=_certified(declared, discretization, budget))
    out = _audit_answer(result, fmt)
    if isinstance(out, bytes):
        return out
    out["simulated"] = {"mechanism": ran.to_dict(), "label": ran.label(), "trials": sim.trials, "seed": sim.seed,
                        "score": sim.score}
    return out


# ------------------------------------------------------------------------------------ calibrate
def calibrate_job(kwargs: dict[str, Any], max_steps: int, min_noise: float, with_report: bool,
                  budget: CostBudget | None) -> tuple[Any, str | None, Any]:
    """:func:`fdpkit.calibrate_dpsgd` within the server's step and noise bounds; with
    ``with_report`` (the page) the result for the run as the page prints it, the solved value
    rounded to the safe side with that run's own figures (:meth:`CalibrationResult.rounded`),
    and its privacy statement and grade: one run behind every number on the page. The JSON API
    (no report) gets the same rounded result: the σ the page and ``fdpkit calibrate`` propose,
    with the search's own value as ``exact_value``."""
    r = fp.calibrate_dpsgd(**kwargs, max_steps=max_steps, min_noise_multiplier=min_noise).rounded(budget=budget)
    statement = grade = None
    if with_report:
        # the statement quotes ε at the calibration's δ, as the page's table (it said "ε = 2.091, δ = 1e-05"
        # under a target of ε ≤ 2 at δ = 2e-5)
        led = deltas_led_by(kwargs.get("delta"))
        rep = fp.privacy_report(r.rounded_mechanism(), discretization=kwargs["discretization"], budget=budget,
                                **({"deltas": led} if led else {}))
        statement, grade = rep.statement(), rep.grade
    return r, statement, grade
