"""Ledger work for the web's worker processes (:mod:`fdpkit.web.pool`): everything that
composes a running total, accounts a mechanism or renders a report (status, check,
propose, approve, release, the timeline, the ledger report) runs here, in a process that
is killed and replaced at the server's time limit, never in a thread that outlives its
request. A killed write leaves nothing behind: every ledger write is one transaction.

:func:`ledger_job` is the one module-level job: ``ledger_job(url, view, *args)`` opens the
ledger at ``url`` once per worker process (module-level cache; the server has already
created or upgraded its schema) and runs the named view. Views return plain picklable
data: ORM rows, and totals as :class:`fdpkit.ledger.totals.TotalReading` (numbers, never
the composition, which can be megabytes). No maths here: it all comes from fdpkit.ledger.

An in-memory SQLite ledger (``sqlite://``) lives in the server process only; the server
runs the same views in a thread for it, passing the Ledger itself instead of its URL
(fine for tests and demos, not for production).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from fdpkit.ledger import Check, Ledger, NotFound, Status, open_ledger, release_dict

#: Ledgers opened by this worker process, by URL.
_LEDGERS: dict[str, Ledger] = {}


@dataclasses.dataclass(frozen=True)
class Missing:
    """A view's NotFound, carried back as data (the pool re-raises only ValueError)."""

    message: str


def _open(target: Ledger | str) -> Ledger:
    if isinstance(target, Ledger):
        return target
    led = _LEDGERS.get(target)
    if led is None:
        led = _LEDGERS[target] = open_ledger(target, upgrade=False)
    return led


def status_reading(st: Status, with_approved: bool = True) -> Status:
    """``st`` with its totals read out (``with_approved=False``: that total dropped, for
    pages that do not show it, so it is not composed)."""
    return dataclasses.replace(st, released=st.released.reading(),
                               with_approved=st.with_approved.reading() if with_approved else None)


def check_reading(chk: Check) -> Check:
    return dataclasses.replace(chk, before=chk.before.reading(), after=chk.after.reading())


# ------------------------------------------------------------------------------------ views
def _index(led: Ledger) -> list:
    return [(d, status_reading(led.status(d.name), with_approved=False)) for d in led.datasets()]


def _statuses(led: Ledger) -> list:
    return [led.status(d.name).to_dict() for d in led.datasets()]


def _status(led: Ledger, name: str) -> dict:
    return led.status(name).to_dict()


def _dataset_page(led: Ledger, name: str) -> tuple:
    from fdpkit.ledger.timeline import timeline, timeline_svg

    st = led.status(name)
    rows = timeline(led, name)
    return (status_reading(st), rows, timeline_svg(rows, st) if rows else None, led.releases(name),
            led.thresholds(name))


def _timeline(led: Ledger, name: str, bucket: str) -> list:
    from fdpkit.ledger.timeline import timeline

    return [r.to_dict() for r in timeline(led, name, bucket)]


def _check(led: Ledger, name: str, mechanism: Any) -> dict:
    return led.check(name, mechanism).to_dict()


def _check_release(led: Ledger, release_id: int) -> Check:
    return check_reading(led.check_release(release_id))


def _release_preview(led: Ledger, release_id: int) -> dict:
    """What releasing ``release_id`` would do (writes nothing), as JSON data."""
    r = led.release_info(release_id)
    return {"release": release_dict(r), "check": led.check_release(r.id).to_dict(), "dry_run": True}


def _queue(led: Ledger) -> tuple:
    items = [(r, check_reading(led.check_release(r.id)))
             for r in led.releases(state="proposed") + led.releases(state="approved")]
    return sorted(items, key=lambda x: x[0].id), {d.id: d.name for d in led.datasets()}


def _export(led: Ledger, name: str, fmt: str) -> bytes:
    from fdpkit.ledger.timeline import ledger_document
    from fdpkit.report import render_document

    return render_document(ledger_document(led, name), fmt)


def _propose(led: Ledger, name: str, mechanism: Any, **kwargs: Any) -> dict:
    return release_dict(led.propose(name, mechanism, **kwargs))


def _transition(led: Ledger, verb: str, release_id: Any, **kwargs: Any) -> dict:
    """``approve`` or ``reject`` (the approval or rejection record; the web passes
    ``pdf=False`` and renders the PDF after answering, with :func:`_approval_pdf`) or ``release`` (composes the total), then
    the release as the API shows it."""
    if verb not in ("approve", "reject", "release"):
        raise ValueError(f"verb must be approve, reject or release, got {verb!r}")
    getattr(led, verb)(release_id, **kwargs)
    return release_dict(led.release_info(release_id))


def _approval_pdf(led: Ledger, release_id: Any) -> str:
    """Render and store the PDF of a release's approval record (once); its SHA-256."""
    return led.render_approval_pdf(release_id).report_pdf_sha256


VIEWS: dict[str, Callable[..., Any]] = {
    "index": _index, "statuses": _statuses, "status": _status, "dataset_page": _dataset_page,
    "timeline": _timeline, "check": _check, "check_release": _check_release,
    "release_preview": _release_preview, "queue": _queue,
    "export": _export, "propose": _propose, "transition": _transition, "approval_pdf": _approval_pdf,
}


def ledger_job(target: Ledger | str, view: str, *args: Any, **kwargs: Any) -> Any:
    """Run the ledger view ``view`` (a key of :data:`VIEWS`) on the ledger at ``target`` (its
    URL in a worker process; the Ledger itself for an in-memory ledger in a thread). A
    NotFound comes back as :class:`Missing`; other ledger errors raise (ValueError: 422)."""
    try:
        return VIEWS[view](_open(target), *args, **kwargs)
    except NotFound as exc:
        return Missing(str(exc))
