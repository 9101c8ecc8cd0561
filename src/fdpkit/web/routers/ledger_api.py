"""JSON twins of the ledger pages, with the same authorisation (session cookie from
``POST /api/ledger/login``; ``X-CSRF-Token`` header on every POST). No maths here.

Statuses, checks, timelines, proposals, approvals and releases run in a worker process
(:func:`fdpkit.web.auth.run_ledger`, killed at the time limit); the other routes are
bounded database work in a thread."""

from __future__ import annotations

from typing import Any, Literal, Optional

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse
from pydantic import ConfigDict, Field

from fdpkit._numerics import json_safe
from fdpkit.vocabulary import ADD_REMOVE, LedgerRelationInput
from fdpkit.web.auth import Principal, call, ledger_of, require, run_ledger
from fdpkit.web.common import run_light, spec_from_text
from fdpkit.web.models import RequestModel
from fdpkit.web.json_numbers import CheckedJSONRoute

router = APIRouter(prefix="/api/ledger", tags=["ledger"], route_class=CheckedJSONRoute)


def _err(exc: ValueError) -> JSONResponse:
    from fdpkit.ledger import NotFound

    return JSONResponse({"detail": str(exc)}, status_code=404 if isinstance(exc, NotFound) else 422)


async def _run(fn, *args, **kwargs):
    """Bounded database work in a thread (no accounting, no rendering)."""
    try:
        return json_safe(await call(fn, *args, **kwargs))
    except ValueError as exc:
        return _err(exc)


async def _job(request: Request, view: str, *args, work: Any, **kwargs):
    """A ledger view in a worker process (:func:`run_ledger`); ``work`` is the estimate
    (a number) or a function of the ledger giving it (run in a thread first)."""
    try:
        if callable(work):
            work = await call(work, ledger_of(request))
        return json_safe(await run_ledger(request, view, *args, work=work, **kwargs))
    except ValueError as exc:
        return _err(exc)


def _totals(name: str | None, request: Request, timeline: bool = False):
    """The estimate of reading ``name``'s totals (all datasets when None), as a function of
    the ledger; it stops counting past the light lane's bound. An unknown dataset raises
    NotFound here (404 at once: no worker process is asked)."""
    from fdpkit.ledger.work import totals_work

    bound = request.app.state.limits.light_work

    def work(led):
        if name is not None:
            led.dataset(name)
        return totals_work(led, name, timeline=timeline, stop_at=bound)
    return work


def checked_spec(spec: Any, limits: Any) -> float:
    """Refuse a mechanism beyond the server's limits (noise, steps, parts) or its cost budget
    at the ledger's discretization, before the ledger accounts it (ValueError, HTTP 422);
    else its estimated work. JSON text that does not parse is left to the ledger, which
    names the error (work 0). Cheap: run in a thread."""
    from fdpkit.accounting import RUNNING_DISCRETIZATION
    from fdpkit.web.common import checked as _checked

    if isinstance(spec, str):
        try:
            spec = spec_from_text(spec)
        except ValueError as exc:
            if "nested" in str(exc):
                raise
            return 0.0
    return _checked(spec, RUNNING_DISCRETIZATION, limits)[1]


async def _bounded(request: Request, spec: Any) -> float | JSONResponse:
    """``spec``'s estimated work when within the server's limits, else the 422 answer (at
    once: nothing is queued)."""
    try:
        return await run_light(checked_spec, spec, request.app.state.limits)
    except ValueError as exc:
        return _err(exc)


class DatasetRequest(RequestModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(..., min_length=1, max_length=200)
    unit: str = Field(..., min_length=1, max_length=200)
    relation: LedgerRelationInput = ADD_REMOVE  # old spelling accepted
    description: str = Field("", max_length=5000)


class ProposeRequest(RequestModel):
    model_config = ConfigDict(extra="forbid")
    mechanism: dict[str, Any]
    title: str = Field(..., min_length=1, max_length=300)
    purpose: str = Field("", max_length=5000)


class CheckRequest(RequestModel):
    model_config = ConfigDict(extra="forbid")
    mechanism: dict[str, Any]


class ThresholdRequest(RequestModel):
    model_config = ConfigDict(extra="forbid")
    metric: Literal["epsilon", "mu", "tpr"]
    level: Literal["notice", "warning", "hard"]
    value: float = Field(..., allow_inf_nan=False)
    delta: Optional[float] = Field(None, allow_inf_nan=False)
    fpr: Optional[float] = Field(None, allow_inf_nan=False)


class DecisionRequest(RequestModel):
    model_config = ConfigDict(extra="forbid")
    comment: str = Field("", max_length=5000)


class ReleaseRequest(RequestModel):
    model_config = ConfigDict(extra="forbid")
    override_reason: Optional[str] = Field(None, max_length=5000)
    #: must be ``true``: releasing cannot be undone (``POST .../preview`` shows what it does)
    confirm: Optional[bool] = None


class UserChangeRequest(RequestModel):
    model_config = ConfigDict(extra="forbid")
    active: Optional[bool] = None
    role: Optional[Literal["viewer", "analyst", "approver", "admin"]] = None
    password: Optional[str] = Field(None, min_length=8, max_length=1000)
    reason: str = Field("", max_length=5000)


class FourEyesRequest(RequestModel):
    model_config = ConfigDict(extra="forbid")
    enabled: bool
    reason: str = Field("", max_length=5000)


class UserRequest(RequestModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(..., min_length=1, max_length=200)
    role: Literal["viewer", "analyst", "approver", "admin"]
    password: str = Field(..., min_length=8, max_length=1000)


@router.get("/datasets")
async def datasets(request: Request, p: Principal = require("viewer", api=True)):
    """Datasets with their released totals."""
    return await _job(request, "statuses", work=_totals(None, request))


@router.post("/datasets")
async def dataset_add(request: Request, body: DatasetRequest, p: Principal = require("admin", api=True)):
    """Add a dataset (admin)."""
    led = ledger_of(request)
    return await _run(lambda: {"id": led.add_dataset(body.name, unit=body.unit, relation=body.relation,
                                                     description=body.description, user=p.name).id})


@router.get("/datasets/{name}/status")
async def status(request: Request, name: str, p: Principal = require("viewer", api=True)):
    """Running total (tight composition), ε sum, thresholds, alerts."""
    return await _job(request, "status", name, work=_totals(name, request))


@router.get("/datasets/{name}/timeline")
async def timeline(request: Request, name: str, bucket: str = "week", p: Principal = require("viewer", api=True)):
    """Running total per week (or day, month)."""
    return await _job(request, "timeline", name, bucket, work=_totals(name, request, timeline=True))


@router.post("/datasets/{name}/check")
async def check(request: Request, name: str, body: CheckRequest, p: Principal = require("viewer", api=True)):
    """What releasing a mechanism would do to the running total (writes nothing)."""
    work = await _bounded(request, body.mechanism)
    if isinstance(work, JSONResponse):
        return work
    totals = _totals(name, request)
    return await _job(request, "check", name, body.mechanism, work=lambda led: work + totals(led))


@router.post("/datasets/{name}/releases")
async def propose(request: Request, name: str, body: ProposeRequest, p: Principal = require("analyst", api=True)):
    """Propose a release (analyst)."""
    work = await _bounded(request, body.mechanism)
    if isinstance(work, JSONResponse):
        return work
    return await _job(request, "propose", name, body.mechanism, title=body.title, user=p.name,
                      purpose=body.purpose, work=lambda led: (led.dataset(name), work)[1])


@router.post("/datasets/{name}/thresholds")
async def threshold_set(request: Request, name: str, body: ThresholdRequest,
                        p: Principal = require("admin", api=True)):
    """Set a threshold (admin). Lifting a hard limit (raising it, loosening its δ or FPR)
    needs a second person under four-eyes: 422 here; request it with
    ``POST /api/ledger/datasets/{name}/lift-requests`` for another approver to approve."""
    from fdpkit.ledger import NeedsSecondPerson
    from fdpkit.web.lift_hints import lift_refusal

    led = ledger_of(request)

    def fn():
        try:
            t = led.set_threshold(name, metric=body.metric, level=body.level, value=body.value, delta=body.delta,
                                  fpr=body.fpr, user=p.name)
        except NeedsSecondPerson as exc:
            raise NeedsSecondPerson(lift_refusal(exc, name, True)) from None
        return {"metric": t.metric, "level": t.level, "value": t.value, "delta": t.delta, "fpr": t.fpr}
    return await _run(fn)


@router.get("/releases/{release_id}")
async def release_get(request: Request, release_id: int, p: Principal = require("viewer", api=True)):
    """A release with its approvals (report digests) and events."""
    from fdpkit.ledger import event_dict, release_dict

    led = ledger_of(request)

    def fn():
        out = release_dict(led.release_info(release_id))
        out["approvals"] = [{"approver": a.approver, "decision": a.decision, "comment": a.comment,
                             "at": a.created_at.isoformat(),
                             "report_pdf_sha256": a.report_pdf_sha256, "report_json_sha256": a.report_json_sha256}
                            for a in led.approvals(release_id)]
        out["events"] = [event_dict(e) for e in led.history(release_id=release_id)]
        return out
    return await _run(fn)


async def _transition(request: Request, verb: str, release_id: int, p: Principal, **kwargs):
    """approve (renders the privacy report) and release (composes the total) in a worker
    process; reject and withdraw are database writes in a thread."""
    from fdpkit.ledger import release_dict
    from fdpkit.ledger.work import approval_work, pending_work

    if verb in ("approve", "reject", "release"):
        estimate = approval_work if verb in ("approve", "reject") else pending_work

        def work(led):
            led.release_info(release_id)  # an unknown release: 404 at once, no worker process
            return estimate(led, release_id)
        return await _job(request, "transition", verb, release_id, user=p.name, **kwargs, work=work)
    led = ledger_of(request)
    if verb == "withdraw":
        kwargs["role"] = p.role
    return await _run(lambda: (getattr(led, verb)(release_id, user=p.name, **kwargs),
                               release_dict(led.release_info(release_id)))[1])


@router.post("/releases/{release_id}/approve")
async def approve(request: Request, release_id: int, body: DecisionRequest,
                  p: Principal = require("approver", api=True)):
    """Approve (approver): stores the approval record (dataset, title, proposer, approver,
    decision, comment, time, thresholds, totals before and after, and the privacy report):
    the JSON at once, the PDF rendered in a worker right after the answer
    (``GET /ledger/r/{id}/report.pdf`` renders it at once if it is not there yet)."""
    from starlette.background import BackgroundTask

    from fdpkit.web.auth import approval_pdf, pdf_jobs

    out = await _transition(request, "approve", release_id, p, comment=body.comment, pdf=False)
    if isinstance(out, JSONResponse):
        return out
    pdf_jobs(request.app).add(int(release_id))
    return JSONResponse(out, background=BackgroundTask(approval_pdf, request, release_id))


@router.post("/releases/{release_id}/reject")
async def reject(request: Request, release_id: int, body: DecisionRequest,
                 p: Principal = require("approver", api=True)):
    """Reject (approver; ``comment``, the reason, is required): stores the rejection record
    (like an approval's, with the totals releasing it would have made): the JSON at once,
    the PDF rendered in a worker right after the answer."""
    from starlette.background import BackgroundTask

    from fdpkit.web.auth import approval_pdf, pdf_jobs

    out = await _transition(request, "reject", release_id, p, comment=body.comment, pdf=False)
    if isinstance(out, JSONResponse):
        return out
    pdf_jobs(request.app).add(int(release_id))
    return JSONResponse(out, background=BackgroundTask(approval_pdf, request, release_id))


@router.post("/releases/{release_id}/withdraw")
async def withdraw(request: Request, release_id: int, body: DecisionRequest,
                   p: Principal = require("analyst", api=True)):
    """Withdraw a proposed or approved release (analyst)."""
    return await _transition(request, "withdraw", release_id, p, comment=body.comment)


@router.post("/releases/{release_id}/preview")
async def release_preview(request: Request, release_id: int, p: Principal = require("viewer", api=True)):
    """What releasing would do, writing nothing (a dry run): the release, the released
    total before and after, the thresholds it would cross, whether a hard limit blocks it
    (then ``override_reason`` is needed) and the request that releases it."""
    from fdpkit.ledger.work import pending_work

    def work(led):
        led.release_info(release_id)  # an unknown release: 404 at once, no worker process
        return pending_work(led, release_id)
    out = await _job(request, "release_preview", release_id, work=work)
    if isinstance(out, JSONResponse) or not isinstance(out, dict):
        return out
    out["confirm"] = {"method": "POST", "path": f"/api/ledger/releases/{release_id}/release",
                      "body": {"confirm": True, **({"override_reason": "..."} if out["check"]["blocked"] else {})}}
    return out


@router.post("/releases/{release_id}/release")
async def release(request: Request, release_id: int, body: ReleaseRequest,
                  p: Principal = require("approver", api=True)):
    """Release (approver); beyond the hard limit only with ``override_reason``. A release
    cannot be undone: ``POST /api/ledger/releases/{id}/preview`` shows first what it would
    do, and ``"confirm": false`` is refused (422 naming ``confirm``); clients written before
    the field existed (no ``confirm``) keep working."""
    if body.confirm is False:
        return JSONResponse({"detail": [{"loc": ["body", "confirm"], "type": "confirmation_required",
                                         "msg": "confirm must be true: releasing cannot be undone (preview it "
                                                f"with POST /api/ledger/releases/{release_id}/preview)"}]},
                            status_code=422)
    return await _transition(request, "release", release_id, p, override_reason=body.override_reason)


#: The most events one ``GET /api/ledger/events`` returns.
MAX_EVENTS = 10_000


@router.get("/events")
async def events(request: Request, limit: int = Query(200, ge=1, le=MAX_EVENTS,
                                                    description="how many of the last events (1 to 10,000)"),
                 p: Principal = require("viewer", api=True)):
    """The last ``limit`` events of the hash-chained log (a limit outside 1..10,000 is a
    422 naming it, not cut to the range)."""
    from fdpkit.ledger import event_dict

    led = ledger_of(request)
    return await _run(lambda: [event_dict(e) for e in led.history(limit=limit)])


@router.get("/verify")
async def verify(request: Request, anchor: Optional[str] = None, p: Principal = require("viewer", api=True)):
    """Check the event chain, every row against it and the re-derived totals; with
    ``anchor=SEQ:HASH`` (an earlier head) the chain must still contain that head."""
    led = ledger_of(request)
    return await _run(lambda: led.verify(anchor=anchor).to_dict())


@router.get("/head")
async def head(request: Request, p: Principal = require("viewer", api=True)):
    """The chain head (keep ``anchor`` elsewhere; ``GET /api/ledger/verify?anchor=`` checks it)."""
    led = ledger_of(request)

    def fn():
        h = led.head()
        return {"seq": h.seq, "hash": h.hash, "anchor": str(h)}
    return await _run(fn)


@router.post("/datasets/{name}/four-eyes")
async def four_eyes(request: Request, name: str, body: FourEyesRequest, p: Principal = require("admin", api=True)):
    """Keep or relax four-eyes for a dataset (admin; relaxing needs a reason; logged)."""
    led = ledger_of(request)

    def fn():
        led.set_four_eyes(name, body.enabled, user=p.name, reason=body.reason)
        return {"dataset": name, "four_eyes": led.four_eyes(name)}
    return await _run(fn)


@router.post("/users/{name}")
async def user_change(request: Request, name: str, body: UserChangeRequest,
                      p: Principal = require("admin", api=True)):
    """Deactivate / re-activate (``active``), re-role (``role``) or reset the password of an
    account (admin): each a chained event; the account's sessions end."""
    from fdpkit.ledger import users as accounts

    led = ledger_of(request)

    def fn():
        if body.active is None and body.role is None and body.password is None:
            raise ValueError("give active, role or password")
        u = None
        if body.role is not None:
            u = accounts.set_role(led, name, role=body.role, actor=p.name)
        if body.password is not None:
            u = accounts.reset_password(led, name, password=body.password, actor=p.name)
        if body.active is False:
            u = accounts.deactivate_user(led, name, actor=p.name, reason=body.reason)
        elif body.active is True:
            u = accounts.activate_user(led, name, actor=p.name)
        return accounts.user_dict(u)
    return await _run(fn)


@router.get("/users")
async def users(request: Request, p: Principal = require("admin", api=True)):
    """Local accounts (admin); never a password or its hash."""
    from fdpkit.ledger.users import user_dict, users as list_users

    led = ledger_of(request)
    return await _run(lambda: [user_dict(u) for u in list_users(led)])


@router.post("/users")
async def user_add(request: Request, body: UserRequest, p: Principal = require("admin", api=True)):
    """Add a local account (admin)."""
    from fdpkit.ledger.users import add_user, user_dict

    led = ledger_of(request)
    return await _run(lambda: user_dict(add_user(led, body.name, role=body.role, password=body.password,
                                                 actor=p.name)))
