"""JSON request bodies whose numbers lie beyond the floats: ``1e-400`` (which ``json`` reads
as 0.0: ``{"epsilon": 1, "delta": 1e-400}`` was answered as pure epsilon-DP) and ``1e400``
(read as inf) are kept as their text, so that the request models refuse them by field with
the text sent, as the forms do (:func:`fdpkit._inputs.beyond_floats`). No maths here.

Every router is an ``APIRouter(route_class=CheckedJSONRoute)``; its requests also read their
forms through the check for repeated fields (:mod:`fdpkit.web.repeated_fields`).
"""

from __future__ import annotations

import json
from typing import Any, Callable

from fastapi import Request
from fastapi.routing import APIRoute
from starlette.datastructures import FormData

from fdpkit._inputs import beyond_floats
from fdpkit.web import repeated_fields


def _number(text: str) -> Any:
    """A JSON number literal: its float, or its text where the float would not be it."""
    return text if beyond_floats(text) is not None else float(text)


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object's members, refusing a name given twice (``json`` keeps the last:
    ``{"mu": 0.1, "mu": 5}`` was answered for mu 5) as the JSON error FastAPI answers 422 to."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise json.JSONDecodeError(f"the field {key[:40]!r} is given twice", "", 0)
        out[key] = value
    return out


def loads(body: bytes | str) -> Any:
    """``json.loads`` keeping number literals beyond the floats as text, and refusing an object
    that names one field twice.

    >>> loads(b'{"delta": 1e-400, "mu": 0.5, "steps": 10}')
    {'delta': '1e-400', 'mu': 0.5, 'steps': 10}
    """
    return json.loads(body, parse_float=_number, object_pairs_hook=_unique)


class CheckedRequest(Request):
    """A request whose :meth:`json` is :func:`loads`, and whose form is checked for fields
    given more than once (:func:`fdpkit.web.repeated_fields.check_form`)."""

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            self._json = loads(await self.body())
        return self._json

    async def _get_form(self, **limits: Any) -> FormData:  # what ``await request.form(...)`` runs
        form = await super()._get_form(**limits)
        repeated_fields.check_form(form.multi_items())  # on every read: a refusal caught once is not lost
        return form

    async def form_and_repeated(self) -> tuple[FormData, dict[str, str], dict[str, str]]:
        """The form read WITHOUT the refusal, with its repeated fields: {field: message} and
        {field: what to show in it} (:func:`fdpkit.web.repeated_fields.sent`). For a form
        that shows them beside its fields and then does nothing else (the ledger's pages)."""
        form = await super()._get_form()
        items = form.multi_items()
        return form, repeated_fields.repeated(items), repeated_fields.sent(items)


async def read_form(request: Request) -> tuple[FormData, dict[str, str], dict[str, str]]:
    """``request``'s form and its repeated fields (:meth:`CheckedRequest.form_and_repeated`).
    A route that reads its form so must answer a form with repeated fields by showing them
    (422) and neither compute nor write; ``await request.form()`` refuses them instead."""
    if isinstance(request, CheckedRequest):
        return await request.form_and_repeated()
    form = await request.form()
    items = form.multi_items()
    return form, repeated_fields.repeated(items), repeated_fields.sent(items)


class CheckedJSONRoute(APIRoute):
    """An APIRoute whose handlers read JSON bodies with :func:`loads`."""

    def get_route_handler(self) -> Callable:
        handler = super().get_route_handler()

        async def checked(request: Request) -> Any:
            token, record = repeated_fields.start(self.path, request.method, request.scope.get("query_string", b""))
            try:
                response = await handler(CheckedRequest(request.scope, request.receive, request._send))
            finally:
                repeated_fields.finish(token)
            refusal = repeated_fields.answered_anyway(record, response.status_code, request.method)
            if refusal is not None:
                raise refusal
            return response

        return checked
