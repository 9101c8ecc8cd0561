"""Ledger pages (login required): datasets, a dataset's running total with thresholds and
the timeline plot, the propose form, the approval queue, a release with its stored
reports, the event history, users, and the decisions on requests to lift a hard limit
(:mod:`fdpkit.ledger.lifts`; filed by the threshold form with a reason). Forms post and
redirect; every form carries the session's CSRF token. No maths here: everything comes
from fdpkit.ledger.

Whatever composes a total, accounts a mechanism or renders a report runs in a worker
process (:func:`fdpkit.web.auth.run_ledger`, lane from the :mod:`fdpkit.ledger.work`
estimate, killed at the time limit); bounded database reads and writes run in a thread
(:func:`fdpkit.web.auth.call`)."""

from __future__ import annotations

import json
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response

from fdpkit.accounting.running import GRID_NOTE
from fdpkit.vocabulary import ADD_REMOVE
from fdpkit.web.auth import Principal, call, ledger_of, pdf_jobs, require, run_ledger
from fdpkit.web.common import render_page, run_light, spec_from_text
from fdpkit.web.forms import field_of, report_link
from fdpkit.web.proposal_form import (CHOICES as PROPOSAL_CHOICES, BESIDE, DPSGD_FIELDS, form_values, in_labels,
                                     spec_from_fields, twice_values)
from fdpkit.web.routers.ledger_api import checked_spec
from fdpkit.web.json_numbers import CheckedJSONRoute, read_form
from fdpkit.web.repeated_fields import placed, repeated, sent
from fdpkit.web.lift_hints import lift_refusal, pending_lifts

router = APIRouter(route_class=CheckedJSONRoute)


def _ctx(p: Principal, **kw):
    return {"me": p, "grid_note": GRID_NOTE, **kw}


def _back(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)


async def _totals_work(request: Request, name: str | None, timeline: bool = False) -> float:
    """Estimated work of reading ``name``'s totals (all datasets when None); database reads
    in a thread, counting stops past the light lane's bound."""
    from fdpkit.ledger.work import totals_work

    return await call(totals_work, ledger_of(request), name, timeline=timeline,
                      stop_at=request.app.state.limits.light_work)


async def _index_items(request: Request) -> list:
    return await run_ledger(request, "index", work=await _totals_work(request, None))


async def _dataset_view(request: Request, p: Principal, name: str, errors: dict | None = None,
                        values: dict | None = None, status: int = 200, tvalues: dict | None = None,
                        terrors: dict | None = None, lift_form: dict | None = None):
    from fdpkit.ledger import NotFound, alert_text

    try:
        st, rows, svg, releases, thresholds = await run_ledger(
            request, "dataset_page", name, work=await _totals_work(request, name, timeline=True))
    except NotFound as exc:
        return await render_page(request, "ledger_error.html", _ctx(p, message=str(exc)), status=404)
    except ValueError as exc:  # over the time limit
        return await render_page(request, "ledger_error.html", _ctx(p, message=str(exc)), status=422)
    alerts = [alert_text(e) for e in st.alerts]
    lifts = await call(pending_lifts, ledger_of(request), name)
    return await render_page(request, "ledger_dataset.html", _ctx(
        p, st=st, rows=rows, svg=svg, releases=releases, thresholds=thresholds, alerts=alerts, lifts=lifts,
        errors=errors or {}, values=values or {}, tvalues=tvalues or {}, terrors=terrors or {}, lift_form=lift_form,
        choices=PROPOSAL_CHOICES), status=status)


async def _index_page(request: Request, p: Principal, errors: dict | None = None, values: dict | None = None,
                      status: int = 200):
    return await render_page(request, "ledger_index.html", _ctx(p, items=await _index_items(request),
                                                                 errors=errors or {}, values=values or {}), status=status)


@router.get("/ledger", include_in_schema=False)
async def ledger_index(request: Request, p: Principal = require("viewer")):
    return await _index_page(request, p)


@router.post("/ledger/datasets", include_in_schema=False)
async def dataset_add(request: Request, p: Principal = require("admin")):
    form, twice, shown = await read_form(request)
    values = {**{k: str(form.get(k) or "")[:200] for k in ("name", "unit", "relation")}, **shown}
    if twice:  # a field given more than once: said beside it, nothing written
        return await _index_page(request, p, placed(twice, ("name", "unit", "relation"), "form"), values, 422)
    name = str(form.get("name") or "")
    try:
        await call(ledger_of(request).add_dataset, name, unit=str(form.get("unit") or ""),
                   relation=str(form.get("relation") or ADD_REMOVE),
                   description=str(form.get("description") or ""), user=p.name)
    except ValueError as exc:  # beside the field it names ("unit must be a non-empty text" was atop the form)
        return await _index_page(request, p, {field_of(exc, ("name", "unit", "relation")): str(exc)}, values, 422)
    return _back(f"/ledger/d/{quote(name.strip())}")


@router.get("/ledger/d/{name}", include_in_schema=False)
async def dataset_page(request: Request, name: str, p: Principal = require("viewer")):
    return await _dataset_view(request, p, name)


@router.get("/ledger/d/{name}/export.{fmt}", include_in_schema=False)
async def dataset_export(request: Request, name: str, fmt: str, p: Principal = require("viewer")):
    """The ledger report of a dataset (PDF, HTML, CSV, JSON, Markdown)."""
    from fdpkit.ledger import NotFound
    from fdpkit.ledger.work import document_work
    from fdpkit.report import FORMATS
    from fdpkit.web.common import MEDIA, download

    if fmt not in FORMATS:
        return Response(f"format must be one of {', '.join(FORMATS)}", status_code=404)
    try:
        work = await call(document_work, ledger_of(request), name, fmt)
        data = await run_ledger(request, "export", name, fmt, work=work)
    except NotFound as exc:
        return Response(str(exc), status_code=404)
    except ValueError as exc:  # over the time limit
        return Response(str(exc), status_code=422)
    return download(data, f"ledger-{quote(name)}.{fmt}", MEDIA[fmt])


@router.post("/ledger/d/{name}/propose", include_in_schema=False)
async def propose(request: Request, name: str, p: Principal = require("analyst")):
    """A proposal from the dataset page's own form: the same fields as /ledger/propose (DP-SGD,
    Gaussian, Laplace or a JSON spec), errors beside their fields, ledger errors atop."""
    form, twice, shown = await read_form(request)
    values = {k: str(form.get(k) or "") for k in ("title", "purpose", "mechanism")}
    values.update(form_values(form))
    if not values.get("build"):  # a client that posts the JSON spec alone
        values["build"] = "json"
    if twice:  # a field given more than once: said beside it, nothing proposed
        return await _dataset_view(request, p, name, placed(twice, BESIDE, "propose"),
                                   {**values, **twice_values(form, shown)}, status=422)
    spec, errors = await run_light(spec_from_fields, form)
    if errors:
        top = errors.pop("form", "") or errors.pop("build", "")
        return await _dataset_view(request, p, name, {**errors, **({"propose": top} if top else {})}, values,
                                   status=422)
    try:
        work = await run_light(checked_spec, spec, request.app.state.limits)
        r = await run_ledger(request, "propose", name, spec, title=values["title"],
                             user=p.name, purpose=values["purpose"], work=work)
    except ValueError as exc:  # the ledger's refusal, in the fields' words (beside its field if it has one)
        message = str(exc) if values["build"] == "json" else in_labels(str(exc))
        return await _dataset_view(request, p, name, _refusal(exc, message, values), values, status=422)
    return _back(f"/ledger/r/{r['id']}")


def _refusal(exc: BaseException, message: str, values: dict) -> dict:
    """The ledger's refusal keyed by the form field it names (a relation the dataset does not
    declare: beside the relation), else atop the form (``propose``)."""
    field = getattr(exc, "parameter", None)
    if values.get("build") == "dpsgd" and field in DPSGD_FIELDS:
        return {field: message}
    return {"propose": message}


SOURCES = {"plan": "Plan", "report": "Report", "calibrate": "Calibrate", "calculator": "Calculator"}


async def _propose_page(request: Request, p: Principal, values: dict, error: str = "", status: int = 200,
                        errors: dict | None = None):
    """The proposal form: the dataset to charge, title, purpose and the mechanism: the
    report form's fields (DP-SGD; Gaussian or Laplace) or a JSON spec (carried over from a
    Plan, Report or Calibrate result, shown in words too)."""
    from fdpkit.report.model import human_inputs

    spec_text, rows = values.get("mechanism", ""), []
    try:
        spec = spec_from_text(spec_text) if spec_text.strip() else None  # json.loads: a RecursionError, a 500
        if isinstance(spec, dict):
            rows = human_inputs(spec)
            spec_text = json.dumps(spec, indent=1)
    except ValueError:
        pass
    if not values.get("build"):  # a carried or pasted spec: the JSON; else the fields
        values = {**values, "build": "json" if spec_text.strip() else "dpsgd"}
    datasets = await call(ledger_of(request).datasets)
    return await render_page(request, "ledger_propose.html", _ctx(
        p, values={**values, "mechanism": spec_text}, rows=rows, datasets=datasets, error=error,
        errors=errors or {}, choices=PROPOSAL_CHOICES, source=SOURCES.get(values.get("from", ""), "")),
        status=status)


@router.get("/ledger/propose", include_in_schema=False)
async def propose_form(request: Request, p: Principal = require("analyst")):
    q = request.query_params
    values = {k: str(q.get(k) or "")[:20_000] for k in ("mechanism", "title", "purpose", "dataset", "from")}
    values.update({k: v for k, v in form_values(q).items() if v})
    twice = repeated(q.multi_items())
    if twice:  # a link naming a field twice fills in neither value: said beside the field, as the forms do
        errors = placed(twice, BESIDE, "form")
        return await _propose_page(request, p, {**values, **twice_values(q, sent(q.multi_items()))},
                                   errors.pop("form", ""), status=422, errors=errors)
    return await _propose_page(request, p, values)


@router.post("/ledger/propose", include_in_schema=False)
async def propose_any(request: Request, p: Principal = require("analyst")):
    """A proposal from the form: the mechanism from the fields (built by the library) or
    the JSON spec; field errors all at once beside their fields, ledger errors atop."""
    form, twice, shown = await read_form(request)
    values = {k: str(form.get(k) or "") for k in ("mechanism", "title", "purpose", "dataset", "from")}
    values.update(form_values(form))
    if twice:  # a field given more than once: said beside it, nothing proposed
        errors = placed(twice, BESIDE, "form")
        return await _propose_page(request, p, {**values, **twice_values(form, shown)}, errors.pop("form", ""),
                                   status=422, errors=errors)
    spec, errors = await run_light(spec_from_fields, form)
    if not values["title"].strip():
        errors["title"] = "Title is required"
    if errors:
        return await _propose_page(request, p, values, status=422, errors=errors,
                                   error=errors.pop("form", "") or errors.pop("build", ""))
    try:
        work = await run_light(checked_spec, spec, request.app.state.limits)
        r = await run_ledger(request, "propose", values["dataset"], spec, title=values["title"],
                             user=p.name, purpose=values["purpose"], work=work)
    except ValueError as exc:  # NotFound too: an unknown dataset
        if values["build"] != "json":
            values["mechanism"] = spec  # what the fields built, shown in words beside them
            beside = _refusal(exc, in_labels(str(exc)), values)
            return await _propose_page(request, p, values, beside.pop("propose", ""), status=422, errors=beside)
        return await _propose_page(request, p, values, str(exc), status=422)
    return _back(f"/ledger/r/{r['id']}")


@router.post("/ledger/d/{name}/thresholds", include_in_schema=False)
async def threshold_set(request: Request, name: str, p: Principal = require("admin")):
    """Set (or, ``remove=yes``, remove) a threshold. A change that lifts a hard limit needs a
    second person under four-eyes: with a ``reason`` it is filed as a lift request that
    another approver or admin approves; without one it is refused (422, nothing written)."""
    from fdpkit.ledger import NeedsSecondPerson

    form, twice, shown = await read_form(request)
    tv = {k: str(form.get(k) or "")[:5000] for k in ("metric", "level", "value", "delta", "fpr", "reason", "remove")}
    if twice:  # a field given more than once: said beside it, nothing set or requested
        terrors = placed(twice, tuple(tv), "threshold")
        top = {"threshold": terrors.pop("threshold")} if "threshold" in terrors else {}
        return await _dataset_view(request, p, name, top, status=422, tvalues={**tv, **shown}, terrors=terrors)
    opt = {k: tv[k].strip() or None for k in ("delta", "fpr")}
    remove, reason, led = tv["remove"] == "yes", tv["reason"].strip(), ledger_of(request)
    what = {"metric": tv["metric"], "level": tv["level"], "user": p.name}
    try:
        try:
            if remove:
                await call(led.remove_threshold, name, **what)
            else:
                await call(led.set_threshold, name, value=tv["value"], **what, **opt)
        except NeedsSecondPerson as exc:
            if not reason:
                return await _dataset_view(request, p, name, {"threshold": lift_refusal(exc, name, False)},
                                           status=422, tvalues=tv)
            await call(led.request_lift, name, reason=reason, remove=remove,
                       **({} if remove else {"value": tv["value"], **opt}), **what)
            return _back(f"/ledger/d/{quote(name)}#lifts")
    except ValueError as exc:
        return await _dataset_view(request, p, name, {"threshold": str(exc)}, status=422, tvalues=tv)
    return _back(f"/ledger/d/{quote(name)}")


async def _decide(request: Request, request_id: int, p: Principal, verb: str):
    from fdpkit.ledger import NotFound

    form, twice, shown = await read_form(request)
    led = ledger_of(request)
    comment = str(form.get("comment") or "")
    nxt = str(form.get("next") or "")
    try:
        r = await call(led.lift_info, request_id)
        name = (await call(lambda: {d.id: d.name for d in led.datasets()}))[r.dataset_id]
    except NotFound as exc:
        return await render_page(request, "ledger_error.html", _ctx(p, message=str(exc)), status=404)
    except ValueError as exc:
        return await render_page(request, "ledger_error.html", _ctx(p, message=str(exc)), status=422)
    if twice:  # a field given more than once: beside the card's comment (else atop the requests), nothing decided
        commented = r.state == "pending" and r.requested_by != p.name  # the card shows a comment field
        errors = placed(twice, ("comment",) if commented else (), "lift")
        top = {"lift": errors.pop("lift")} if "lift" in errors else {}
        lift_form = {"id": request_id, "verb": verb, "errors": errors, "comment": shown.get("comment", comment)}
        if nxt == "/ledger/queue" and "next" not in twice:
            return await _queue_page(request, p, status=422, lift_form=lift_form, lift_error=top.get("lift", ""))
        return await _dataset_view(request, p, name, top, status=422, lift_form=lift_form)
    try:
        await call(getattr(led, f"{verb}_lift"), request_id, user=p.name, comment=comment)
    except ValueError as exc:
        if nxt == "/ledger/queue":
            return await render_page(request, "ledger_error.html", _ctx(p, message=str(exc)), status=422)
        return await _dataset_view(request, p, name, {"lift": str(exc)}, status=422)
    target = nxt if nxt == "/ledger/queue" else f"/ledger/d/{quote(name)}"
    return RedirectResponse(f"{target}#lifts", status_code=303)


@router.post("/ledger/lifts/{request_id}/approve", include_in_schema=False)
async def approve_lift(request: Request, request_id: int, p: Principal = require("approver")):
    return await _decide(request, request_id, p, "approve")


@router.post("/ledger/lifts/{request_id}/reject", include_in_schema=False)
async def reject_lift(request: Request, request_id: int, p: Principal = require("approver")):
    return await _decide(request, request_id, p, "reject")


@router.get("/ledger/queue", include_in_schema=False)
async def queue(request: Request, p: Principal = require("approver")):
    return await _queue_page(request, p)


async def _queue_page(request: Request, p: Principal, status: int = 200, **kw):
    """The approval queue; ``kw``: a decision form's refused fields (``act``, ``lift_form``, ``lift_error``)."""
    from fdpkit.ledger.work import pending_work

    try:
        items, names = await run_ledger(request, "queue", work=await call(pending_work, ledger_of(request)))
    except ValueError as exc:  # over the time limit
        return await render_page(request, "ledger_error.html", _ctx(p, message=str(exc)), status=422)
    lifts = await call(pending_lifts, ledger_of(request))
    return await render_page(request, "ledger_queue.html", _ctx(p, items=items, names=names, lifts=lifts, **kw),
                             status=status)


def _approval_work(led, release_id) -> float:
    from fdpkit.ledger.work import approval_work, pending_work

    return approval_work(led, release_id) + pending_work(led, release_id)


def _release_work(led, release_id) -> float:
    from fdpkit.ledger.work import pending_work

    return pending_work(led, release_id)


_WORK = {"approve": _approval_work, "reject": _approval_work, "release": _release_work}


async def _release_context(request: Request, p: Principal, release_id: int, **kw) -> dict:
    """The release, its dataset, approvals, events and (proposed or approved) its check."""
    from fdpkit.ledger.work import pending_work

    led = ledger_of(request)

    def load():
        r = led.release_info(release_id)
        ds = [d for d in led.datasets() if d.id == r.dataset_id][0]
        return r, ds, led.approvals(r.id), led.history(release_id=r.id)

    r, ds, approvals, events = await call(load)
    check = (await run_ledger(request, "check_release", r.id, work=await call(pending_work, led, r.id))
             if r.state in ("proposed", "approved") else None)
    return _ctx(p, r=r, ds=ds, approvals=approvals, events=events, check=check, rid=r.id,
                rendering=r.id in pdf_jobs(request.app), spec=json.dumps(json.loads(r.spec), indent=1),
                report=report_link(json.loads(r.spec)), **kw)


async def _confirm_page(request: Request, p: Principal, release_id: int, error: str = "", reason: str = "",
                        status: int = 200, reason_error: str = ""):
    """The release confirmation: the total after releasing, the thresholds it crosses, the
    override reason where a hard limit needs one (with its rule), and an explicit confirm."""
    from fdpkit.ledger import NotFound

    try:
        ctx = await _release_context(request, p, release_id, error=error, reason=reason, reason_error=reason_error)
    except NotFound as exc:
        return await render_page(request, "ledger_error.html", _ctx(p, message=str(exc)), status=404)
    except ValueError as exc:  # over the time limit
        return await render_page(request, "ledger_error.html", _ctx(p, message=str(exc)), status=422)
    return await render_page(request, "ledger_confirm.html", ctx, status=status)


@router.get("/ledger/r/{release_id}/release", include_in_schema=False)
async def release_confirm(request: Request, release_id: int, p: Principal = require("approver")):
    return await _confirm_page(request, p, release_id)


def _action(verb: str, role: str):
    async def handler(request: Request, release_id: int, p: Principal = require(role)):
        from starlette.background import BackgroundTask

        from fdpkit.web.auth import approval_pdf

        form, twice, shown = await read_form(request)
        if twice:  # a field given more than once: said beside it, nothing decided or released
            return await _twice(request, p, release_id, verb, form, twice, shown)
        led = ledger_of(request)
        kwargs = {"user": p.name}
        if verb == "withdraw":
            kwargs["role"] = p.role
        if verb in ("approve", "reject", "withdraw"):
            kwargs["comment"] = str(form.get("comment") or "")
        reason = str(form.get("override_reason") or "")
        if verb == "release":
            if str(form.get("confirm") or "") != "yes":  # releasing is final: confirm it first
                return await _confirm_page(request, p, release_id, reason=reason)
            if reason.strip():
                kwargs["override_reason"] = reason
        if verb in ("approve", "reject"):
            kwargs["pdf"] = False  # the JSON record now; the PDF renders after the answer
        try:
            if verb in ("approve", "reject", "release"):  # the approval/rejection record / composes the total
                await run_ledger(request, "transition", verb, release_id, **kwargs,
                                 work=await call(_WORK[verb], led, release_id))
            else:
                await call(getattr(led, verb), release_id, **kwargs)
        except ValueError as exc:
            if verb == "release" and "unknown" not in str(exc):
                return await _confirm_page(request, p, release_id, error=str(exc), reason=reason, status=422)
            return await render_page(request, "ledger_error.html", _ctx(p, message=str(exc), release_id=release_id),
                        status=404 if "unknown" in str(exc) else 422)
        resp = _back(str(form.get("next") or f"/ledger/r/{release_id}") if str(form.get("next") or "").startswith("/ledger")
                     else f"/ledger/r/{release_id}")
        if verb in ("approve", "reject"):  # marked as rendering before the answer: the page it leads to polls
            pdf_jobs(request.app).add(int(release_id))
            resp.background = BackgroundTask(approval_pdf, request, release_id)
        return resp
    handler.__name__ = f"release_{verb}"
    return handler


async def _twice(request: Request, p: Principal, release_id: int, verb: str, form, twice: dict, shown: dict):
    """A release action's form with repeated fields, shown again (422): the release's
    confirmation (override reason), else the page it was sent from (the release's or the
    queue's) with the comment's refusal beside it where that page shows the comment field."""
    from fdpkit.ledger import NotFound

    if verb == "release":
        errors = placed(twice, ("override_reason",), "form")
        return await _confirm_page(request, p, release_id, errors.get("form", ""), status=422,
                                   reason=shown.get("override_reason", str(form.get("override_reason") or "")),
                                   reason_error=errors.get("override_reason", ""))
    try:
        state = (await call(ledger_of(request).release_info, release_id)).state
    except NotFound as exc:
        return await render_page(request, "ledger_error.html", _ctx(p, message=str(exc)), status=404)
    commented = verb in ("approve", "reject") and state == "proposed"  # the page shows its comment field
    act = {"rid": release_id, "verb": verb, "errors": placed(twice, ("comment",) if commented else (), "form"),
           "comment": shown.get("comment", str(form.get("comment") or ""))}
    if str(form.get("next") or "") == "/ledger/queue" and "next" not in twice and commented:
        return await _queue_page(request, p, status=422, act=act)
    return await _release_view(request, p, release_id, status=422, act=act)


for _verb, _role in (("approve", "approver"), ("reject", "approver"), ("release", "approver"),
                     ("withdraw", "analyst")):
    router.add_api_route(f"/ledger/r/{{release_id}}/{_verb}", _action(_verb, _role), methods=["POST"],
                         include_in_schema=False)


@router.get("/ledger/r/{release_id}", include_in_schema=False)
async def release_page(request: Request, release_id: int, p: Principal = require("viewer")):
    return await _release_view(request, p, release_id)


async def _release_view(request: Request, p: Principal, release_id: int, status: int = 200, act: dict | None = None):
    from fdpkit.ledger import NotFound

    try:
        ctx = await _release_context(request, p, release_id, act=act)
    except NotFound as exc:
        return await render_page(request, "ledger_error.html", _ctx(p, message=str(exc)), status=404)
    except ValueError as exc:  # over the time limit
        return await render_page(request, "ledger_error.html", _ctx(p, message=str(exc)), status=422)
    return await render_page(request, "ledger_release.html", ctx, status=status)


@router.get("/ledger/r/{release_id}/record", include_in_schema=False)
async def record_fragment(request: Request, release_id: int, p: Principal = require("viewer")):
    """The approval record's downloads (polled while its PDF renders)."""
    from fdpkit.ledger import NotFound

    try:
        approvals = await call(ledger_of(request).approvals, release_id)
    except NotFound as exc:
        return Response(str(exc), status_code=404)
    return await render_page(request, "_ledger_record.html", _ctx(p, approvals=approvals, rid=release_id,
                                                                   rendering=release_id in pdf_jobs(request.app)))


@router.get("/ledger/r/{release_id}/report.{fmt}", include_in_schema=False)
async def release_report(request: Request, release_id: int, fmt: str, p: Principal = require("viewer")):
    """The approval or rejection record (JSON or PDF); a PDF not rendered yet is rendered now, in a worker."""
    if fmt not in ("pdf", "json"):
        return Response("format must be pdf or json", status_code=404)
    from fdpkit.ledger import NotFound
    from fdpkit.web.auth import approval_pdf

    led = ledger_of(request)
    try:
        approvals = await call(led.approvals, release_id)
        if fmt == "pdf" and not any(a.report_pdf for a in approvals) and any(a.report_json for a in approvals):
            await approval_pdf(request, release_id)
            approvals = await call(led.approvals, release_id)
    except NotFound as exc:
        return Response(str(exc), status_code=404)
    a = next((a for a in approvals if getattr(a, f"report_{fmt}")), None)
    if a is None:
        return Response("no stored report for this release", status_code=404)
    media = "application/pdf" if fmt == "pdf" else "application/json"
    kind = "rejection" if a.decision == "rejected" else "approval"
    return Response(getattr(a, f"report_{fmt}"), media_type=media,
                    headers={"Content-Disposition": f'attachment; filename="release-{release_id}-{kind}-record.{fmt}"'})


@router.get("/ledger/history", include_in_schema=False)
async def history(request: Request, verify: int = 0, p: Principal = require("viewer")):
    """The last 500 events; the whole chain is verified only on request (``?verify=1``:
    it reads every event, so not on every view)."""
    led = ledger_of(request)
    events, result = await call(lambda: (led.history(limit=500), led.verify() if verify == 1 else None))
    return await render_page(request, "ledger_history.html", _ctx(p, events=events, result=result,
                                                     data=[json.loads(e.payload)["data"] for e in events]))


@router.get("/ledger/users", include_in_schema=False)
async def users_page(request: Request, p: Principal = require("admin")):
    from fdpkit.ledger.users import users

    return await render_page(request, "ledger_users.html", _ctx(p, users=await call(users, ledger_of(request)), errors={},
                                                                values={}))


@router.post("/ledger/users", include_in_schema=False)
async def users_add(request: Request, p: Principal = require("admin")):
    from fdpkit.ledger.users import add_user, users

    form, twice, shown = await read_form(request)
    values = {**{k: str(form.get(k) or "")[:200] for k in ("name", "role")}, **shown}
    if twice:  # a field given more than once: said beside it (the password never shown), nobody added
        return await render_page(request, "ledger_users.html", _ctx(p, users=await call(users, ledger_of(request)), values=values,
                                 errors=placed(twice, ("name", "role", "password"), "form")), status=422)
    try:
        await call(add_user, ledger_of(request), str(form.get("name") or ""), role=str(form.get("role") or ""),
                   password=str(form.get("password") or ""), actor=p.name)
    except ValueError as exc:
        return await render_page(request, "ledger_users.html", _ctx(p, users=await call(users, ledger_of(request)),
                                                       errors={"form": str(exc)}, values=values), status=422)
    return _back("/ledger/users")


@router.post("/ledger/users/{user_id}", include_in_schema=False)
async def users_change(request: Request, user_id: int, p: Principal = require("admin")):
    """Deactivate / activate, re-role or reset the password of an account (admin): each a
    chained event; the account's sessions end."""
    from fdpkit.ledger import users as accounts

    form, twice, _ = await read_form(request)
    action, led = str(form.get("action") or ""), ledger_of(request)
    if twice:  # a field given more than once: said in the account's row, nothing changed
        return await render_page(request, "ledger_users.html", _ctx(
            p, users=await call(accounts.users, led), errors={}, values={},
            change={"id": user_id, "errors": placed(twice, ("action", "password"), "form")}), status=422)

    def change():
        u = next((x for x in accounts.users(led) if x.id == user_id), None)
        if u is None:
            raise accounts.NotFound(f"user {user_id} is unknown")
        if action == "deactivate":
            return accounts.deactivate_user(led, u.name, actor=p.name)
        if action == "activate":
            return accounts.activate_user(led, u.name, actor=p.name)
        if action.startswith("role:"):
            return accounts.set_role(led, u.name, role=action[5:], actor=p.name)
        if action == "password":
            return accounts.reset_password(led, u.name, password=str(form.get("password") or ""), actor=p.name)
        raise ValueError(f"action must be deactivate, activate, role:ROLE or password, got {action[:40]!r}")
    try:
        await call(change)
    except ValueError as exc:
        return await render_page(request, "ledger_users.html", _ctx(p, users=await call(accounts.users, led),
                                                                   errors={"form": str(exc)}),
                                 status=404 if isinstance(exc, accounts.NotFound) else 422)
    return _back("/ledger/users")

