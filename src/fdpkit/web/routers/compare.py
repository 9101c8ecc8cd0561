"""Compare page: several guarantees on one trade-off plot (R fdp's ``fdp()`` view), and its
JSON twin. The curves come from :mod:`fdpkit.report.compare`; no maths here."""

from __future__ import annotations

import re

from fastapi import APIRouter, Request

from fdpkit.report.compare import KIND_LABELS, MAX_CURVES, compare_guarantees
from fdpkit.report.figures import svg_inline
from fdpkit.web.common import FormErrors, api_error, finite, parse_float, render_page, run_light
from fdpkit.web.models import CompareRequest

router = APIRouter()
#: form kinds: the library's, with the Laplace mechanism given by epsilon or by its scale
FORM_KINDS = (("", "(none)"), ("mu", KIND_LABELS["mu"]), ("epsilon_delta", KIND_LABELS["epsilon_delta"]),
              ("epsilon", KIND_LABELS["epsilon"]), ("laplace", "Laplace mechanism (ε)"),
              ("laplace_scale", "Laplace mechanism (scale b)"), ("gaussian", KIND_LABELS["gaussian"]))
#: which library field the row's main value fills, per form kind
MAIN_FIELD = {"mu": "mu", "epsilon_delta": "epsilon", "epsilon": "epsilon", "laplace": "epsilon",
              "laplace_scale": "scale", "gaussian": "sigma"}
#: rows shown without opening "more curves"
VISIBLE_ROWS = 4
DEFAULT_ROWS = {"kind_1": "mu", "value_1": "1", "kind_2": "epsilon_delta", "value_2": "1", "delta_2": "1e-5",
                "kind_3": "laplace", "value_3": "1", "kind_4": "gaussian", "value_4": "2", "sensitivity_4": "1"}


def _context(values: dict, errors: dict, result=None, figure=None) -> dict:
    return {"values": values, "errors": errors, "result": result, "figure": figure, "kinds": FORM_KINDS,
            "rows": range(1, MAX_CURVES + 1), "visible": VISIBLE_ROWS}


def build(entries: list[dict], points: int | None = None):
    """The comparison (library), its SVG with an accessible name, and its data."""
    cmp = compare_guarantees(entries)
    svg = svg_inline(cmp.draw, title=cmp.title, size=(5.5, 5.5 + 0.22 * len(cmp.curves)))
    return cmp.to_dict(points or 101), svg


def _entries(form, errors: FormErrors) -> tuple[list[dict], list[int]]:
    entries, rows = [], []
    for r in range(1, MAX_CURVES + 1):
        kind = str(form.get(f"kind_{r}") or "")
        if not kind:
            continue
        if kind not in MAIN_FIELD:
            errors[f"kind_{r}"] = f"kind_{r} must be one of {', '.join(MAIN_FIELD)}, got {kind!r}"
            continue
        e: dict = {"kind": "laplace" if kind == "laplace_scale" else kind}
        e[MAIN_FIELD[kind]] = parse_float(form, f"value_{r}", errors)
        if kind == "epsilon_delta":
            e["delta"] = parse_float(form, f"delta_{r}", errors, default=1e-5, percent=True)
        if kind in ("laplace_scale", "gaussian"):
            e["sensitivity"] = parse_float(form, f"sensitivity_{r}", errors, default=1.0)
        entries.append(e)
        rows.append(r)
    if not entries and not errors:
        errors["kind_1"] = "choose at least one guarantee to plot"
    return entries, rows


def _field_of(message: str, rows: list[int]) -> str:
    """The form field named by a library message ``curves[i].field ...``."""
    m = re.match(r"curves\[(\d+)\]\.(\w+)", message)
    if not m or int(m.group(1)) >= len(rows):
        return "form"
    r, name = rows[int(m.group(1))], m.group(2)
    return {"delta": f"delta_{r}", "sensitivity": f"sensitivity_{r}", "kind": f"kind_{r}"}.get(name, f"value_{r}")


@router.get("/compare", include_in_schema=False)
async def compare_page(request: Request):
    return await render_page(request, "compare.html", _context(DEFAULT_ROWS, {}))


@router.post("/compare", include_in_schema=False)
async def compare_submit(request: Request):
    form = await request.form()
    errors = FormErrors()
    entries, rows = _entries(form, errors)
    result = figure = None
    if not errors:
        try:
            result, figure = await run_light(build, entries)
        except ValueError as exc:
            errors[_field_of(str(exc), rows)] = str(exc)
    return await render_page(request, "compare.html", _context(dict(form), errors, result, figure))


@router.post("/api/compare", tags=["compare"])
async def compare_api(body: CompareRequest) -> dict:
    """Several guarantees (mu-GDP, (epsilon, delta)-DP, pure epsilon, Laplace by epsilon or
    scale, Gaussian by sigma) as exact trade-off curves sampled on an FPR grid, with the
    best attack's TPR at FPR 0.001 and 0.1."""
    entries = [c.model_dump(exclude_none=True) for c in body.curves]
    try:
        data, _ = await run_light(build, entries, body.points)
        return finite(data)
    except ValueError as exc:
        return api_error(str(exc))
