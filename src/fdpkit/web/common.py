"""Shared web plumbing: templates, form parsing, bounded execution, responses.
No maths here: every number comes from the fdpkit library."""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from fastapi import Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.templating import Jinja2Templates
from markupsafe import Markup, escape

from fdpkit._numerics import json_safe
from fdpkit.plausibility import FRACTION_FIELDS, parse_fraction
from fdpkit.report.model import fmt

HERE = Path(__file__).resolve().parent
templates = Jinja2Templates(directory=str(HERE / "templates"))
templates.env.filters["num"] = fmt
#: G_μ with a real subscript (report sentences), escaped first.
templates.env.filters["sub"] = lambda text: Markup(str(escape(text)).replace("G_μ", "G<sub>μ</sub>"))


@dataclass(frozen=True)
class Limits:
    """Bounds on the work one request may ask for."""

    max_steps: int = 1_000_000
    min_discretization: float = 1e-5
    max_parts: int = 50
    timeout_s: float = 60.0
    #: smallest noise (sd or scale relative to sensitivity): below it a PLD grid explodes
    min_noise: float = 0.1


class FormErrors(dict):
    """field -> message."""


def parse_float(form: Any, name: str, errors: FormErrors, *, required: bool = True,
                default: float | None = None, percent: bool | None = None) -> float | None:
    """A number from a form field; probability fields (``percent``, by default the library's
    FRACTION_FIELDS) also accept "5%" as 0.05."""
    raw = form.get(name)
    if raw is None or str(raw).strip() == "":
        if required and default is None:
            errors[name] = f"{name.replace('_', ' ')} is required"
        return default
    if percent or (percent is None and name in FRACTION_FIELDS):
        try:
            return parse_fraction(raw, name.replace("_", " "))
        except ValueError as exc:
            errors[name] = str(exc)
            return None
    try:
        v = float(str(raw).strip())
    except ValueError:
        errors[name] = f"{name.replace('_', ' ')} must be a number, got {raw!r}"
        return None
    if math.isnan(v):
        errors[name] = f"{name.replace('_', ' ')} must be a number, got {raw!r}"
        return None
    return v


def parse_int(form: Any, name: str, errors: FormErrors, *, required: bool = True,
              default: int | None = None) -> int | None:
    v = parse_float(form, name, errors, required=required, default=default)
    if v is None:
        return None
    if v != int(v):
        errors[name] = f"{name.replace('_', ' ')} must be a whole number, got {form.get(name)!r}"
        return None
    return int(v)


def field_of(message: str, names: tuple[str, ...]) -> str:
    """The form field a library error message names (its first word), else 'form'."""
    first = message.split(" ", 1)[0]
    return first if first in names else "form"


async def run_bounded(fn: Callable[[], Any], limits: Limits) -> Any:
    """Run blocking library work off the event loop, within the time limit."""
    try:
        return await asyncio.wait_for(asyncio.to_thread(fn), timeout=limits.timeout_s)
    except asyncio.TimeoutError:
        raise ValueError(f"the computation took longer than {limits.timeout_s:g} s; use fewer steps "
                         "or a coarser discretization") from None


def page(request: Request, name: str, context: dict, status: int = 200) -> HTMLResponse:
    return templates.TemplateResponse(request, name, context, status_code=status)


def api_error(message: str) -> JSONResponse:
    return JSONResponse({"detail": message}, status_code=422)


def download(data: bytes, filename: str, media_type: str) -> Response:
    return Response(data, media_type=media_type,
                    headers={"Content-Disposition": f'attachment; filename="{filename}"'})


MEDIA = {"json": "application/json", "csv": "text/csv; charset=utf-8", "md": "text/markdown; charset=utf-8",
         "html": "text/html; charset=utf-8", "pdf": "application/pdf"}


#: JSON-safe payloads: inf as the string "inf" (one implementation, in the core).
finite = json_safe
