"""JSON routes for lifting a hard limit with a second person: an admin requests the lift
(``POST /api/ledger/datasets/{name}/lift-requests``), another logged-in approver or admin
approves or rejects it (``POST /api/ledger/lift-requests/{id}/approve|reject``; its
requester may only withdraw it). ``X-CSRF-Token`` on every POST, as the other ledger
routes; bounded database writes in a thread; the rules are :mod:`fdpkit.ledger.lifts`'.
The pages' twins are in :mod:`fdpkit.web.routers.ledger_pages`."""

from __future__ import annotations

from typing import Literal, Optional

from fastapi import APIRouter, Query, Request
from pydantic import ConfigDict, Field

from fdpkit.web.auth import Principal, ledger_of, require
from fdpkit.web.json_numbers import CheckedJSONRoute
from fdpkit.web.models import RequestModel
from fdpkit.web.routers.ledger_api import DecisionRequest, _run

router = APIRouter(route_class=CheckedJSONRoute)

class LiftRequestBody(RequestModel):
    model_config = ConfigDict(extra="forbid")
    metric: Literal["epsilon", "mu", "tpr"]
    level: Literal["notice", "warning", "hard"] = "hard"
    value: Optional[float] = Field(None, allow_inf_nan=False)
    delta: Optional[float] = Field(None, allow_inf_nan=False)
    fpr: Optional[float] = Field(None, allow_inf_nan=False)
    remove: bool = False
    reason: str = Field(..., min_length=1, max_length=5000)


# ---------------------------------------------------------------------------- JSON
@router.post("/api/ledger/datasets/{name}/lift-requests", tags=["ledger"])
async def api_request_lift(request: Request, name: str, body: LiftRequestBody,
                           p: Principal = require("admin", api=True)):
    """Request lifting a hard limit (admin): raise it (``value``), loosen its ``delta`` /
    ``fpr``, or ``remove`` it, with a ``reason``. Stored as a pending request and logged;
    the limits change only when another approver or admin approves it."""
    from fdpkit.ledger import lift_dict

    led = ledger_of(request)
    return await _run(lambda: lift_dict(led.request_lift(
        name, metric=body.metric, level=body.level, value=body.value, delta=body.delta, fpr=body.fpr,
        remove=body.remove, reason=body.reason, user=p.name), name))


@router.get("/api/ledger/lift-requests", tags=["ledger"])
async def api_lifts(request: Request, dataset: Optional[str] = None,
                    state: Literal["pending", "approved", "rejected", "withdrawn", "superseded", "all"] = Query(
                        "pending", description="which requests (default the pending ones)"),
                    p: Principal = require("viewer", api=True)):
    """Lift requests of the hard limits (the pending ones by default), of one ``dataset`` or all."""
    from fdpkit.ledger import lift_dict

    led = ledger_of(request)

    def fn():
        names = {d.id: d.name for d in led.datasets()}
        return [lift_dict(r, names.get(r.dataset_id))
                for r in led.lift_requests(dataset, None if state == "all" else state)]
    return await _run(fn)


@router.get("/api/ledger/lift-requests/{request_id}", tags=["ledger"])
async def api_lift(request: Request, request_id: int, p: Principal = require("viewer", api=True)):
    """One lift request."""
    from fdpkit.ledger import lift_dict

    led = ledger_of(request)
    return await _run(lambda: lift_dict(led.lift_info(request_id)))


@router.post("/api/ledger/lift-requests/{request_id}/approve", tags=["ledger"])
async def api_approve_lift(request: Request, request_id: int, body: DecisionRequest,
                           p: Principal = require("approver", api=True)):
    """Approve a pending lift request and apply it (approver or admin; never its requester).
    A request whose threshold changed since is refused (422): request it again."""
    from fdpkit.ledger import lift_dict

    led = ledger_of(request)
    return await _run(lambda: lift_dict(led.approve_lift(request_id, user=p.name, comment=body.comment)))


@router.post("/api/ledger/lift-requests/{request_id}/reject", tags=["ledger"])
async def api_reject_lift(request: Request, request_id: int, body: DecisionRequest,
                          p: Principal = require("approver", api=True)):
    """Reject a pending lift request (approver or admin; ``comment``, the reason, required),
    or withdraw it (its requester)."""
    from fdpkit.ledger import lift_dict

    led = ledger_of(request)
    return await _run(lambda: lift_dict(led.reject_lift(request_id, user=p.name, comment=body.comment)))
