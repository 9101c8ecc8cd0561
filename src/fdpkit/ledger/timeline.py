"""The running total over time (weekly buckets by default) as a table, a plot, CSV, and the
ledger report (JSON, CSV, Markdown, HTML, PDF through fdpkit.report's renderers).

Each bucket's row is the tight composition of every release released up to the end of the
bucket, beside the basic epsilon sum; the plot draws both with the epsilon thresholds, on
an Axes like every fdpkit plot (``draw(ax)``)."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import Any

from fdpkit._numerics import json_safe
from fdpkit.ledger.chain import canonical, utc
from fdpkit.ledger.operations import Ledger, Status, alert_text, event_dict, release_dict
from fdpkit.ledger.totals import (
    DELTA_REF, FPR_REF, ThresholdSpec, add_rows, basic_claim, parts_of, pure_epsilon, read_total, reference_deltas, settle,
)
from fdpkit.accounting import Composition
from fdpkit.report.model import Figure, ReportDocument, Section, Table, fmt
from fdpkit.report import csv_rows
from fdpkit.report.figures import svg_inline

BUCKETS = ("week", "day", "month")
ADJECTIVE = {"week": "weekly", "day": "daily", "month": "monthly"}
#: Most buckets a timeline may have (gaps are filled with empty buckets).
MAX_BUCKETS = 520
HEADER = ("period start", "releases", "released total", "μ", "regret", f"ε at δ = {DELTA_REF:g}",
          "ε sum (basic)", f"TPR at FPR {FPR_REF:g}", "method", "δ of the ε sum")

#: HEADER in a few characters each (a terminal's 80 columns), and what they abbreviate.
SHORT_HEADER = ("period", "new", "total", "μ", "regret", "ε", "ε sum", "TPR", "method", "δ sum")
SHORT_LEGEND = (f"period: first day; new: releases in it; total: released so far; μ and ε (at δ = {DELTA_REF:g}): "
                f"tight composition; ε sum at δ sum: basic composition (each release's ε added up); TPR: "
                f"certified, at FPR {FPR_REF:g}")

#: Per column of HEADER: the side a printed value's last digit rounds to (None: nearest).
_CELL_UP = (None, None, None, True, None, True, True, True, None, True)


@dataclass(frozen=True)
class TimelineRow:
    """One period of a dataset's timeline: the running total after the period's releases.

    Attributes
    ----------
    start : datetime.date
        First day of the period (UTC; a Monday for weeks).
    releases, count : int
        Releases in this period, and released so far.
    mu, regret : float
        Tight μ of the running total and its regret.
    epsilon, epsilon_sum : float
        ε at δ = 1e-5 of the tight composition, and ε of the basic-composition claim
        (:func:`fdpkit.ledger.totals.basic_claim`).
    tpr : float
        Certified TPR of the best attack at the reference FPR.
    method : str
        How the total was composed (exact GDP or the accountant's PLD).
    delta_sum : float
        δ of the basic-composition claim (1e-5 per release that is not pure ε-DP).
    """

    start: dt.date
    releases: int
    count: int
    mu: float
    regret: float
    epsilon: float
    epsilon_sum: float
    tpr: float
    method: str
    delta_sum: float = 0.0

    def cells(self) -> list[Any]:
        """The row's values in the order of the timeline table's header."""
        return [self.start.isoformat(), self.releases, self.count, self.mu, self.regret, self.epsilon,
                self.epsilon_sum, self.tpr, self.method, self.delta_sum]

    def texts(self) -> list[str]:
        """:meth:`cells` as people read them: μ, ε, the ε sum and the TPR (upper bounds) with
        their last digit rounded up (:func:`fdpkit.report.model.fmt`), the regret to nearest."""
        return [fmt(c, up=up) for c, up in zip(self.cells(), _CELL_UP)]

    def to_dict(self) -> dict[str, Any]:
        """The row as JSON data (``start`` as an ISO date)."""
        return dict(zip(("start", "releases", "count", "mu", "regret", "epsilon", "epsilon_sum", "tpr",
                         "method", "delta_sum"), [self.start.isoformat(), *self.cells()[1:]]))


def _start(t: dt.datetime, bucket: str) -> dt.date:
    d = utc(t).date()
    if bucket == "week":
        return d - dt.timedelta(days=d.weekday())
    if bucket == "month":
        return d.replace(day=1)
    return d


def _next(d: dt.date, bucket: str) -> dt.date:
    if bucket == "week":
        return d + dt.timedelta(days=7)
    if bucket == "month":
        return (d.replace(day=28) + dt.timedelta(days=4)).replace(day=1)
    return d + dt.timedelta(days=1)


def timeline(ledger: Ledger, dataset: str, bucket: str = "week") -> list[TimelineRow]:
    """Running totals at the end of each bucket (``week``, ``day`` or ``month``)."""
    if bucket not in BUCKETS:
        raise ValueError(f"bucket must be one of {', '.join(BUCKETS)}, got {bucket!r}")
    rel = sorted(ledger.releases(dataset, state="released"), key=lambda r: (utc(r.released_at), r.id))
    if not rel:
        return []
    groups: dict[dt.date, list] = {}
    for r in rel:
        groups.setdefault(_start(r.released_at, bucket), []).append(r)
    first, last = min(groups), max(groups)
    starts, d = [], first
    while d <= last:
        starts.append(d)
        d = _next(d, bucket)
    if len(starts) > MAX_BUCKETS:
        starts = sorted(groups)  # too long to fill the gaps: only buckets with releases
    # each total read against the thresholds as the status reads it (settle: a figure just over
    # a limit at the running grid is read again at the releases' own), so that the last row is
    # the status's total: the dataset page showed ε 2.091 above a timeline ending at 2.099
    specs = [ThresholdSpec(t.metric, t.level, t.value, t.delta, t.fpr) for t in ledger.thresholds(dataset)]
    state, eps_sum, claim, parts, rows = Composition.empty(), 0.0, (0.0, 0), (), []
    for s in starts:
        batch = groups.get(s, [])
        if batch or not rows:
            state = add_rows(state, batch)
            eps_sum += sum(r.epsilon_ref for r in batch)
            claim = basic_claim(batch, claim)
            parts += parts_of(batch)
            total = settle(read_total(state, eps_sum, claim=claim, parts=parts), specs)
        rows.append(TimelineRow(s, len(batch), total.count, total.mu, total.regret, total.epsilon,
                                total.epsilon_sum, total.tpr, total.method, total.delta_sum))
    return rows


def timeline_csv(rows: list[TimelineRow]) -> str:
    """The timeline as CSV text: the header row, then one row per period (floats written
    with ``repr`` so that they read back exactly)."""
    return csv_rows([list(HEADER), *[[c if not isinstance(c, float) else repr(c) for c in r.cells()]
                                     for r in rows]])


def draw_timeline(rows: list[TimelineRow], epsilon_thresholds: list[tuple[str, float]] = ()):
    """A ``draw(ax)`` function: tight epsilon and the basic epsilon sum against time, with
    the epsilon thresholds as dotted lines."""

    def draw(ax):
        xs = [r.start for r in rows]
        if xs:  # close the last bucket so that a single bucket is a segment, not a dot
            xs.append(xs[-1] + (xs[-1] - xs[-2] if len(xs) > 1 else dt.timedelta(days=7)))
        eps = [r.epsilon for r in rows] + [rows[-1].epsilon] if rows else []
        eps_sum = [r.epsilon_sum for r in rows] + [rows[-1].epsilon_sum] if rows else []
        # a dot at each bucket's start only: the closing point is no total (one week read as two dots,
        # the second at the start of a week not yet begun)
        line, = ax.step(xs, eps, where="post", label=f"ε (tight composition, δ = {DELTA_REF:g})")
        ax.plot(xs[:-1], eps[:-1], "o", ms=3, color=line.get_color())
        ax.step(xs, eps_sum, where="post", ls="--", color="tab:purple", label="Σ ε (basic composition)")
        for level, value in epsilon_thresholds:
            ax.axhline(value, ls=":", color={"notice": "grey", "warning": "tab:orange",
                                             "hard": "tab:red"}.get(level, "grey"),
                       label=f"{level} threshold ε = {value:g}")
        ax.set_xlabel("Period start (UTC)")
        ax.set_ylabel(f"ε at δ = {DELTA_REF:g} (privacy spent)")
        ax.set_ylim(bottom=0)
        ax.legend(fontsize="small")
        ax.figure.autofmt_xdate() if hasattr(ax.figure, "autofmt_xdate") else None
        return ax
    return draw


def timeline_svg(rows: list[TimelineRow], status: Status) -> str:
    """The timeline plot (:func:`draw_timeline`) as inline SVG, with the dataset's ε
    thresholds at δ = 1e-5 from ``status``."""
    return svg_inline(draw_timeline(rows, _eps_thresholds(status)))


def _eps_thresholds(status: Status) -> list[tuple[str, float]]:
    return [(c.threshold.level, c.threshold.value) for c in status.thresholds
            if c.threshold.metric == "epsilon" and c.threshold.delta == DELTA_REF]


def export_data(ledger: Ledger, dataset: str, bucket: str = "week") -> dict[str, Any]:
    """Everything about one dataset as plain JSON data (status, releases, approvals' report
    digests, timeline, events)."""
    status = ledger.status(dataset)
    releases = []
    for r in ledger.releases(dataset):
        item = release_dict(r)
        item["approvals"] = [{"approver": a.approver, "decision": a.decision, "comment": a.comment,
                              "at": json.loads(canonical(a.created_at)),
                              "report_json_sha256": a.report_json_sha256,
                              "report_pdf_sha256": a.report_pdf_sha256} for a in ledger.approvals(r.id)]
        releases.append(item)
    return {"status": status.to_dict(), "releases": releases,
            "timeline": [r.to_dict() for r in timeline(ledger, dataset, bucket)],
            "events": [event_dict(e) for e in ledger.history(dataset)],
            "verify": ledger.verify().to_dict()}


_pure_epsilon = pure_epsilon  # its former home (tests/accounting/test_accounting_tree_fold.py)


def basic_composition_claim(releases: list[dict[str, Any]]) -> tuple[float, float]:
    """(sum of epsilon, sum of delta) that basic composition gives for ``releases`` (their
    ``release_dict`` rows): a pure release adds (its pure epsilon, 0), any other its own
    (epsilon at 1e-5, 1e-5). Three pure Laplace releases of epsilon 2 claim (6, 0); the
    same claim as every ``Total.epsilon_sum`` / ``delta_sum`` (:func:`~fdpkit.ledger.totals.basic_claim`)."""
    eps, approximate = basic_claim(_SpecRow(item) for item in releases)
    return eps, reference_deltas(approximate)


class _SpecRow:
    """A ``release_dict`` row read as a release row (``spec``, ``epsilon_ref``)."""

    def __init__(self, item: dict[str, Any]) -> None:
        self.spec, self.epsilon_ref = canonical(item["mechanism"]), item["epsilon_ref"]


def _integrity_section(v: dict[str, Any]) -> Section:
    """The chain head (keep it elsewhere: ``fdpkit ledger verify --anchor`` checks it later)
    and what verify said when the report was made, its findings included."""
    said = (f"Event log verified: {v['events']} events intact" + (" (keyed chain)." if v.get("keyed") else ".")
            if v["ok"] else f"Event log BROKEN at event {v['broken_seq']}: {v['reason']}")
    # what an intact chain holds that its totals cannot vouch for (verify's findings)
    findings = tuple(f"Finding: {f}" for f in v.get("findings") or ())
    return Section("Integrity", (said, *findings, f"Chain head (anchor): {v.get('head') or '-'}. Keep it outside the "
                                       "ledger; `fdpkit ledger verify --anchor SEQ:HASH` fails if the chain is "
                                       "later cut or rewritten before it."))


def ledger_document(ledger: Ledger, dataset: str, bucket: str = "week") -> ReportDocument:
    """The ledger report of one dataset, for fdpkit.report's renderers."""
    data = export_data(ledger, dataset, bucket)
    status = ledger.status(dataset)
    r = status.released
    rows = timeline(ledger, dataset, bucket)
    eps_sum, delta_sum = r.epsilon_sum, r.delta_sum  # the basic-composition claim (pure releases at δ 0)
    head = f"Dataset {dataset} (privacy unit: {status.dataset.unit}). "
    summary = (head + "Nothing released yet." if r.count == 0 else
               head + f"Released so far: {r.count} release{'' if r.count == 1 else 's'}, composing to "
               f"μ = {fmt(r.mu, up=True)} (regret {fmt(r.regret)}), ε = {fmt(r.epsilon, up=True)} at δ = {DELTA_REF:g}; "
               f"adding up each release's ε (basic composition) would claim {fmt(eps_sum, up=True)} at δ = "
               f"{fmt(delta_sum, up=True)}.")
    total = Table("Running total", ("quantity", "released", "released + approved"), (
        ("releases", str(r.count), str(status.with_approved.count)),
        ("μ (tight)", fmt(r.mu, up=True), fmt(status.with_approved.mu, up=True)),
        ("regret", fmt(r.regret), fmt(status.with_approved.regret)),
        (f"ε at δ = {DELTA_REF:g}", fmt(r.epsilon, up=True), fmt(status.with_approved.epsilon, up=True)),
        (f"TPR at FPR {FPR_REF:g}", fmt(r.tpr, up=True), fmt(status.with_approved.tpr, up=True)),
        ("ε sum (basic composition)", fmt(r.epsilon_sum, up=True), fmt(status.with_approved.epsilon_sum, up=True)),
        ("δ of the ε sum", fmt(r.delta_sum, up=True), fmt(status.with_approved.delta_sum, up=True)),
        ("method", r.method_label, status.with_approved.method_label)))
    thr = Table("Thresholds", ("level", "metric", "limit", "current", "exceeded"), tuple(
        (c.threshold.level, c.threshold.describe(), fmt(c.threshold.value), fmt(c.current, up=True),
         "yes" if c.exceeded else "no") for c in status.thresholds))
    tl = Table(f"Timeline ({ADJECTIVE[bucket]} buckets)", HEADER, tuple(tuple(row.texts()) for row in rows))
    rel = Table("Releases", ("id", "title", "state", "analyst", "released at", "ε alone"), tuple(
        (str(x["id"]), x["title"], x["state"], x["analyst"], x["released_at"] or "-", fmt(x["epsilon_ref"], up=True))
        for x in data["releases"]))
    # what the released total exceeds now (as `fdpkit ledger status` and the web page say), then
    # the alerts logged when releases crossed a threshold
    alerts = tuple(list(status.relation_notes) + [c.message() for c in status.exceeded]
                   + ["alert " + alert_text(e) for e in status.alerts])
    figures = (Figure("timeline", "Privacy spent over time: tight composition against the ε sum",
                      draw_timeline(rows, _eps_thresholds(status))),) if rows else ()
    sections = (Section("Running total", (), (total, thr)),
                Section("Warnings", alerts or ("No threshold crossed.",)),
                Section("Timeline", (), (tl,)), Section("Releases", (), (rel,)),
                _integrity_section(data["verify"]))
    return ReportDocument(f"Privacy-budget ledger: {dataset}", summary, sections, figures,
                          json_safe(data), kind="privacy-budget ledger report")

