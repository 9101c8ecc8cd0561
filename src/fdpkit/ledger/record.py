"""The approval record: what an approver decided, on which release of which dataset, and
what releasing it does to the dataset's budget, stored with the privacy report it approves.

The record is built before the approval's transaction (it needs the release's privacy
report and the totals before and after) and stored as JSON and PDF bytes with their
SHA-256 in the chained approval row. Its JSON begins with an ``"approval"`` object
(dataset, release title, proposer, approver, decision, comment, time, thresholds and the
running totals before and after), followed by the privacy report's own fields (the schema
of ``fdpkit/report/report.schema.json``); the PDF begins with the same facts. No database
access here: :class:`fdpkit.ledger.Ledger` passes the rows and the check in.

>>> from fdpkit.ledger.record import RECORD_KIND
>>> RECORD_KIND
'fdpkit approval record'
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from typing import Any

from fdpkit._numerics import json_safe
from fdpkit.ledger.chain import canonical
from fdpkit.ledger.models import Dataset, Release
from fdpkit.ledger.totals import DELTA_REF, FPR_REF
from fdpkit.ledger.views import Check
from fdpkit.mechanisms import Mechanism
from fdpkit.guarantee import privacy_report
from fdpkit.report import build_document, render_document
from fdpkit.report.model import ReportDocument, Section, Table, fmt

#: The ``"record"`` field of every approval record (JSON).
RECORD_KIND = "fdpkit approval record"
#: Version of the ``"approval"`` object's layout.
RECORD_VERSION = 1


def _iso(t: dt.datetime | None) -> str | None:
    return None if t is None else json.loads(canonical(t))


def approval_record(*, dataset: Dataset, release: Release, approver: str, decision: str, comment: str,
                    at: dt.datetime, check: Check, four_eyes: bool, released_ids: list[int]) -> dict[str, Any]:
    """The ``"approval"`` object of an approval record, as JSON data.

    Parameters
    ----------
    dataset, release : Dataset, Release
        The rows the approval is about (read in the approval's own transaction or just before).
    approver, decision, comment : str
        Who decided, ``"approved"`` or ``"rejected"``, and the approver's comment (the reason).
    at : datetime
        The time of the decision (UTC), also stored as the approval row's ``created_at``.
    check : Check
        The released total before and after this release, read against the thresholds.
    four_eyes : bool
        Whether the dataset keeps four-eyes (the proposer could not approve).
    released_ids : list of int
        The releases composing the "before" total (the approval is refused if they changed).

    Returns
    -------
    dict
        Dataset, release (title, purpose, mechanism spec), proposer, approver, decision,
        comment, time, thresholds (each with its value after this release), and the totals
        before and after (μ, ε at δ = 1e-5, TPR at FPR 1e-3, the ε sum).
    """
    return json_safe({
        "record": RECORD_KIND, "version": RECORD_VERSION,
        "dataset": {"name": dataset.name, "unit": dataset.unit, "relation": dataset.relation_name},
        "release": {"id": release.id, "title": release.title, "purpose": release.purpose or "",
                    "proposed_at": _iso(release.created_at), "mechanism": json.loads(release.spec)},
        "proposer": release.analyst, "approver": approver, "decision": decision, "comment": comment or "",
        "time": _iso(at), "four_eyes": bool(four_eyes),
        "thresholds": [c.to_dict() for c in check.thresholds],
        "totals": {"before": check.before.to_dict(), "after": check.after.to_dict(),
                   "released_before": sorted(int(i) for i in released_ids),
                   "delta": DELTA_REF, "fpr": FPR_REF},
        "blocked_by_hard_limit": check.blocked,
        "new_crossings": check.messages,
    })


def _when(iso: str | None) -> str:
    """An ISO time for people: to the second, UTC."""
    return "-" if not iso else iso[:19].replace("T", " ") + " UTC"


def _total_rows(before: dict, after: dict) -> tuple[tuple[str, ...], ...]:
    keys = (("releases", "count"), ("μ (tight composition)", "mu"), (f"ε at δ = {DELTA_REF:g}", "epsilon"),
            (f"TPR at FPR {FPR_REF:g} (certified)", "tpr"), ("ε sum (basic composition)", "epsilon_sum"))
    def get(d: dict, k: str):
        return d.get("tpr_at_fpr", {}).get("tpr") if k == "tpr" else d.get(k)
    # the count exact; μ, ε, the TPR and the ε sum are upper bounds: their last digit rounds up
    return tuple((label, fmt(get(before, k), up=k != "count" or None), fmt(get(after, k), up=k != "count" or None))
                 for label, k in keys)


def record_document(approval: dict[str, Any], report_doc: ReportDocument) -> ReportDocument:
    """The approval record as a document: the approval's facts and the budget first, then
    the privacy report it approves (its sections and figures); JSON data
    ``{"approval": ..., **report}``. A rejection (``decision == "rejected"``) gives the
    rejection record: the same facts, the totals releasing it would have made, and the
    privacy report it rejected."""
    rel, ds = approval["release"], approval["dataset"]
    rejected = approval["decision"] == "rejected"
    facts = Table("Decision", ("field", "value"), (
        ("dataset", f"{ds['name']} (privacy unit: {ds['unit']}, {ds['relation']})"),
        ("release", f"#{rel['id']}: {rel['title']}"),
        ("purpose", rel["purpose"] or "-"),
        ("proposed by", f"{approval['proposer']} at {_when(rel['proposed_at'])}"),
        ("decision", approval["decision"]),
        ("rejected by" if rejected else "approver", approval["approver"]),
        ("comment", approval["comment"] or "-"),
        ("time", _when(approval["time"])),
        ("four-eyes", "kept: the proposer could not approve" if approval["four_eyes"] else "relaxed for this dataset"),
    ))
    after = "had it been released" if rejected else "after this release"
    tot = approval["totals"]
    totals = Table("Running total of the dataset", ("quantity", "before (released)", after),
                   _total_rows(tot["before"], tot["after"]))
    thr = Table(f"Thresholds, read against the total {after}",
                ("level", "metric", "limit", "after", "exceeded"),
                tuple((t["level"], t["metric"], fmt(t["value"]) + (f" at δ = {fmt(t['delta'])}" if t["metric"] == "epsilon"
                                                                     else f" at FPR {fmt(t['fpr'])}" if t["metric"] == "tpr"
                                                                     else ""),
                       fmt(t["current"], up=True), "yes" if t["exceeded"] else "no") for t in approval["thresholds"]))
    notes = tuple("Releasing it " + m + "." for m in approval["new_crossings"]) or ("Releasing it crosses no threshold that the total had not "
                                                 "crossed already.",)
    if approval["blocked_by_hard_limit"]:
        notes += ("It would exceed a hard limit: releasing needs an override reason from an approver "
                  "other than the proposer.",)
    if rejected:
        notes = ("It was not released: the dataset's total is unchanged by it. The figures below say what "
                 "releasing it would have done.",) + tuple(
            n.replace("Releasing it would exceed", "Releasing it would have exceeded")
             .replace("Releasing it crosses", "Releasing it would have crossed")
             .replace("It would exceed a hard limit: releasing needs", "It would have exceeded a hard limit: releasing "
                      "would have needed") for n in notes)
    takes = ("Releasing it would have taken" if rejected else "Releasing it takes")
    summary = (f"Release #{rel['id']} “{rel['title']}” of dataset {ds['name']}, proposed by {approval['proposer']}, "
               f"was {approval['decision']} by {approval['approver']} at {_when(approval['time'])}. {takes} "
               f"the dataset's total from μ = {fmt(tot['before']['mu'], up=True)} to μ = {fmt(tot['after']['mu'], up=True)} "
               f"(ε {fmt(tot['before']['epsilon'], up=True)} → {fmt(tot['after']['epsilon'], up=True)} at δ = {DELTA_REF:g}).")
    word = "Rejection" if rejected else "Approval"
    head = (Section(word, (), (facts,), key="approval"),
            Section("Budget", notes, (totals, thr), key="budget"),
            Section(f"The privacy report {approval['decision']}", (report_doc.summary,), key="approved-report"))
    return dataclasses.replace(report_doc, title=f"{word} record: release #{rel['id']} of {ds['name']}",
                               summary=summary, sections=head + report_doc.sections,
                               data={"approval": approval, **report_doc.data}, kind=f"{word.lower()} record",
                               grade=None)  # the release's own grade stays in its headline, not atop the record


def render_approval(approval: dict[str, Any], report_doc: ReportDocument, *,
                    pdf: bool = True) -> tuple[bytes, bytes | None]:
    """(JSON bytes, PDF bytes or None) of the approval record of ``approval`` and the
    privacy report document ``report_doc`` (see :func:`record_document`)."""
    doc = record_document(approval, report_doc)
    return render_document(doc, "json"), (render_document(doc, "pdf") if pdf else None)


def render_record(mechanism: Mechanism, approval: dict[str, Any], *, pdf: bool = True) -> tuple[bytes, bytes | None]:
    """(JSON bytes, PDF bytes or None) of the approval record of ``mechanism`` (its privacy
    report is computed here). The PDF is the slow part (seconds); ``pdf=False`` leaves it to
    :func:`render_record_pdf` later, from the stored JSON."""
    return render_approval(approval, build_document(privacy_report(mechanism)), pdf=pdf)


def render_record_pdf(mechanism: Mechanism, record_json: bytes) -> bytes:
    """The PDF of a stored approval record (its ``"approval"`` object as stored, the privacy
    report recomputed from the same mechanism: the same numbers, the report is
    deterministic)."""
    approval = json.loads(record_json)["approval"]
    return render_document(record_document(approval, build_document(privacy_report(mechanism))), "pdf")


__all__ = ["RECORD_KIND", "RECORD_VERSION", "approval_record", "record_document", "render_approval", "render_record",
           "render_record_pdf"]
