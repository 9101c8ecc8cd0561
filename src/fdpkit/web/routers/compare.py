"""Compare page: several guarantees on one trade-off plot (R fdp's ``fdp()`` view), and its
JSON twin. The curves come from :mod:`fdpkit.report.compare`; no maths here. Closed-form
curves run in a thread; a mechanism spec is checked against the server's limits and cost
budget, then accounted in a worker process (:func:`fdpkit.web.jobs.compare_job`)."""

from __future__ import annotations

import re

from fastapi import APIRouter, Request

from fdpkit.mechanisms import mechanism_from_dict
from fdpkit.report.compare import KIND_LABELS, MAX_CURVES
from fdpkit.errors import ParameterError, parameter_of
from fdpkit.web.common import FormErrors, Limits, api_error, check_limits, finite, form_status, render_page, run_heavy, run_light, spec_from_text
from fdpkit.web.forms import field_of, parse_form
from fdpkit.web.jobs import compare_job, prepare
from fdpkit.web.models import CompareCurve, CompareRequest, CompareSettings
from fdpkit.web.json_numbers import CheckedJSONRoute

router = APIRouter(route_class=CheckedJSONRoute)
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
                "kind_3": "laplace", "value_3": "1", "kind_4": "gaussian", "value_4": "2", "sensitivity_4": "1",
                "discretization": "0.001"}


def _context(values: dict, errors: dict, result=None, figure=None) -> dict:
    return {"values": values, "errors": errors, "result": result, "figure": figure, "kinds": FORM_KINDS,
            "rows": range(1, MAX_CURVES + 1), "visible": VISIBLE_ROWS}


def checked(entries: list[dict], discretization: float, limits: Limits) -> tuple[list, float]:
    """Mechanism specs parsed, held to the server's limits and cost budget (cheap; a thread);
    the estimated work of the whole comparison (0 without a mechanism)."""
    out, work = [], 0.0
    for i, e in enumerate(entries):
        if e.get("kind") == "mechanism" and isinstance(e.get("spec"), dict):
            try:
                mech = mechanism_from_dict(e["spec"])
                check_limits(mech, discretization, limits)
                mech, w = prepare(mech, discretization, limits.budget)
            except ValueError as exc:
                raise ParameterError(f"curves[{i}].spec: {exc}", parameter=f"curves[{i}].spec") from None
            e = {**e, "spec": mech}
            work += w
        out.append(e)
    return out, work


async def _compare(request: Request, entries: list[dict], discretization: float, points: int = 101):
    limits: Limits = request.app.state.limits
    entries, work = await run_light(checked, entries, discretization, limits)
    if work == 0.0:
        return await run_light(compare_job, entries, discretization, limits.budget, points)
    return await run_heavy(request, compare_job, entries, discretization, limits.budget, points, work=work)


#: the form's row fields -> CompareCurve's (the main value is MAIN_FIELD's)
ROW_FIELDS = ("delta", "sensitivity")


def _entries(form, errors: FormErrors) -> tuple[list[dict], list[str]]:
    """The filled rows as library entries, each read through CompareCurve (the JSON API's
    schema for one curve; errors at once, beside the row's fields, each naming its row as the
    page does, "Curve 2: δ ..."), and for each the form row it came from."""
    entries, rows = [], []
    for r in range(1, MAX_CURVES + 1):
        kind = str(form.get(f"kind_{r}") or "")
        if not kind:
            continue
        if kind not in MAIN_FIELD:
            errors[f"kind_{r}"] = f"kind_{r} must be one of {', '.join(MAIN_FIELD)}, got {kind!r}"
            continue
        main = MAIN_FIELD[kind]
        data = {"kind": "laplace" if kind == "laplace_scale" else kind, main: form.get(f"value_{r}")}
        if kind == "epsilon_delta":
            data["delta"] = form.get(f"delta_{r}") or "1e-5"
        if kind in ("laplace_scale", "gaussian"):
            data["sensitivity"] = form.get(f"sensitivity_{r}") or "1"
        body, found = parse_form(CompareCurve, data, fields=tuple(data), required=(main,))
        for name, message in found.items():
            field = f"{name}_{r}" if name in ROW_FIELDS else (f"kind_{r}" if name == "kind" else f"value_{r}")
            errors.setdefault(field, f"Curve {r}: {message}")
        entries.append(body.model_dump(exclude_none=True) if body is not None else data)
        rows.append(str(r))
    text = str(form.get("mechanism") or "").strip()
    if text:
        try:
            entries.append({"kind": "mechanism", "spec": spec_from_text(text)})
            rows.append("mechanism")
        except ValueError as exc:  # not JSON, nested too deeply (was a 500), a key named twice
            errors["mechanism"] = str(exc)
    if not entries and not errors:
        errors["kind_1"] = "choose at least one guarantee to plot"
    if len(entries) > MAX_CURVES:
        errors["mechanism"] = f"at most {MAX_CURVES} curves: leave a row empty to add a mechanism"
    return entries, rows


def _in_rows(message: str, rows: list[str]) -> str:
    """A library message naming a curve by its index, ``curves[1].delta ...``, in the page's
    words, "Curve 2: delta ..." (the index counts the filled rows from 0; the page's rows are
    numbered from 1, an empty row skipped).

    >>> _in_rows("curves[1].delta must be at most 1", ["1", "3"]), _in_rows("curves[0].spec: x", ["mechanism"])
    ('Curve 3: delta must be at most 1', 'Mechanism spec: x')
    """
    m = re.match(r"curves\[(\d+)\]\.", message)
    if not m or int(m.group(1)) >= len(rows):
        return message
    r, rest = rows[int(m.group(1))], message[m.end():]
    if r == "mechanism":
        return ("Mechanism " if rest.startswith("spec") else "Mechanism: ") + rest
    return f"Curve {r}: {rest}"


def _field_of(error: BaseException, rows: list[str]) -> str:
    """The form field of a library error, by its ``parameter`` (``curves[i].field``, as
    :func:`fdpkit.report.compare.compared_curve` names it), not by its message."""
    name = parameter_of(error) or field_of(error, ("discretization",), "")
    if name == "discretization":
        return name
    m = re.fullmatch(r"curves\[(\d+)\]\.(\w+)", name)
    if not m or int(m.group(1)) >= len(rows):
        return "form"
    r, name = rows[int(m.group(1))], m.group(2)
    if r == "mechanism":
        return "mechanism"
    return {"delta": f"delta_{r}", "sensitivity": f"sensitivity_{r}", "kind": f"kind_{r}"}.get(name, f"value_{r}")


def _is_query(name: str) -> bool:
    """Whether ``name`` is one of the form's fields (a permalink's query parameter)."""
    return name in ("mechanism", "discretization") or re.fullmatch(r"(kind|value|delta|sensitivity)_\d+", name) is not None


@router.get("/compare", include_in_schema=False)
async def compare_page(request: Request):
    """The form; with query parameters (a permalink, e.g. ``/compare?kind_1=mu&value_1=1``) the
    plot, rendered on the server."""
    if any(_is_query(k) for k in request.query_params):
        return await _answer(request, request.query_params)
    return await render_page(request, "compare.html", _context(DEFAULT_ROWS, {}))


@router.post("/compare", include_in_schema=False)
async def compare_submit(request: Request):
    return await _answer(request, await request.form())


async def _answer(request: Request, form):
    errors = FormErrors()
    entries, rows = _entries(form, errors)
    settings, found = parse_form(CompareSettings, form, fields=("discretization",))
    errors.update(found)
    disc = settings.discretization if settings is not None else 1e-3
    result = figure = None
    if not errors:
        try:
            result, figure = await _compare(request, entries, disc)
        except ValueError as exc:
            errors[_field_of(exc, rows)] = _in_rows(str(exc), rows)
    return await render_page(request, "compare.html", _context(dict(form), errors, result, figure), status=form_status(errors))


@router.post("/api/compare", tags=["compare"])
async def compare_api(request: Request, body: CompareRequest) -> dict:
    """Several guarantees (mu-GDP, (epsilon, delta)-DP, pure epsilon, Laplace by epsilon or
    scale, Gaussian by sigma, a mechanism spec) as trade-off curves sampled on an FPR grid,
    each with its bound, and the best attack's TPR at FPR 0.001 and 0.1."""
    entries = [c.model_dump(exclude_none=True) for c in body.curves]
    try:
        data, _ = await _compare(request, entries, body.discretization, body.points)
        return finite(data)
    except ValueError as exc:
        return api_error(exc)
