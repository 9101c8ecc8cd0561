"""Sweep page: a small DP-SGD grid -> the regret map (Gomez et al. Fig. 4) and a table, and a
noise / batch size / epochs design table for a target mu. Bounded (a few hundred settings,
coarse discretization, the cost model's budget), checked in a thread and run in a worker
process (``run_heavy``: killed at the time limit); no maths here."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request

from fdpkit.web.common import FormErrors, Limits, api_error, finite, form_status, render_page, run_heavy, run_light
from fdpkit._numerics import safe_text
from fdpkit.web.forms import parse_form, report_query
from fdpkit.accounting.work_limits import sweep_cost
from fdpkit.web.jobs import sweep_design_job, sweep_map_job
from fdpkit.web.models import DesignTableRequest, SweepRequest
from fdpkit.web.json_numbers import CheckedJSONRoute
from fdpkit.web.repeated_fields import first_value

router = APIRouter(route_class=CheckedJSONRoute)

#: Bounds of one web sweep (the CLI and Python have none of these).
MAX_SETTINGS = 200
MAX_STEPS = 10_000
MAX_DESIGN_PAIRS = 12
MIN_DISCRETIZATION = 1e-3
MIN_NOISE = 0.3
DEFAULTS = {"noise_multiplier": "1, 2, 4", "sample_rate": "0.001, 0.01, 0.1", "steps": "400, 1000",
            "delta": "1e-5", "mu": "1", "batch_size": "256, 1024", "epochs": "1, 5", "dataset_size": "60000",
            "task": "map"}


def check_grid(noise: list[float], rates: list[float], steps: list[int], discretization: float) -> None:
    n = len(noise) * len(rates) * len(steps)
    if n > MAX_SETTINGS:
        raise ValueError(f"the grid has {n} settings; the web sweeps at most {MAX_SETTINGS} (use the CLI or "
                         "Python for larger grids)")
    if steps and max(steps) > MAX_STEPS:
        raise ValueError(f"steps must be at most {MAX_STEPS:,} on this page, got {max(steps):,}")
    if noise and min(noise) < MIN_NOISE:
        raise ValueError(f"noise_multiplier must be at least {MIN_NOISE:g} on this page, got {min(noise):g}")
    if discretization < MIN_DISCRETIZATION:
        raise ValueError(f"discretization must be at least {MIN_DISCRETIZATION:g} on this page, got {discretization:g}")


def check_map(body: dict[str, Any], limits: Limits) -> float:
    """Refuse a grid beyond this page's bounds or the server's cost budget (ValueError);
    return its estimated work (the sum over its settings). Cheap: run in a thread."""
    check_grid(body["noise_multiplier"], body["sample_rate"], body["steps"], body["discretization"])
    work = sweep_cost(body["noise_multiplier"], body["sample_rate"], body["steps"], body["discretization"])
    if limits.budget is not None and work > limits.budget.max_work:
        raise ValueError(f"the grid needs about {work:.3g} units of work (limit {limits.budget.max_work:.3g}); "
                         "use fewer settings, fewer steps or more noise")
    return work


def check_design(body: dict[str, Any]) -> None:
    pairs = len(body["batch_size"]) * len(body["epochs"])
    if pairs > MAX_DESIGN_PAIRS:
        raise ValueError(f"the design table has {pairs} pairs; the web calibrates at most {MAX_DESIGN_PAIRS}")
    if body["discretization"] < MIN_DISCRETIZATION:
        raise ValueError(f"discretization must be at least {MIN_DISCRETIZATION:g} on this page")


async def run_map(request: Request, body: dict[str, Any], figure: bool) -> dict[str, Any]:
    """Check the grid (thread), then sweep it in a worker process."""
    work = await run_light(check_map, body, request.app.state.limits)
    return await run_heavy(request, sweep_map_job, body, figure, work=work)


async def run_design(request: Request, body: dict[str, Any], figure: bool) -> dict[str, Any]:
    """Check the pairs, then calibrate them in a worker process (heavy: a calibration runs
    many accountings)."""
    check_design(body)
    return await run_heavy(request, sweep_design_job, body, MAX_STEPS, figure)


#: the fields of each form (a permalink's query parameters)
MAP_FIELDS = ("noise_multiplier", "sample_rate", "steps", "delta")
DESIGN_FIELDS = ("mu", "batch_size", "epochs", "dataset_size")
def design_row(row: dict[str, Any], discretization: float) -> dict[str, Any]:
    """A design-table row as the page prints it: its noise multiplier rounded up (the σ a user
    copies keeps μ at or below the target: more noise; the row's μ, ε and TPR, upper bounds for
    the solved σ, stay upper bounds for it), and the Report link of that run (no re-typing).

    >>> r = design_row({"noise_multiplier": 0.86312, "batch_size": 256, "dataset_size": 50000, "epochs": 60.0}, 1e-3)
    >>> r["sigma_text"], r["report"]
    ('0.8632', '/report?kind=dpsgd&noise_multiplier=0.8632&batch_size=256&epochs=60&dataset_size=50000&discretization=0.001')
    """
    sigma = safe_text(row["noise_multiplier"], up=True)
    spec = {"kind": "dpsgd", "noise_multiplier": float(sigma), "batch_size": row["batch_size"],
            "dataset_size": row["dataset_size"], "epochs": row["epochs"]}
    return {**row, "sigma_text": sigma, "report": "/report?" + urlencode(report_query(spec, discretization))}


#: the two forms (the ``task`` field)
TASKS = ("map", "design")


@router.get("/sweep", include_in_schema=False)
async def sweep_page(request: Request):
    """The forms; with query parameters (a permalink, e.g. ``/sweep?task=map&noise_multiplier=1,2``)
    the sweep or design table, rendered on the server."""
    if any(k in request.query_params for k in ("task", *MAP_FIELDS, *DESIGN_FIELDS)):
        return await _answer(request, request.query_params)
    return await render_page(request, "sweep.html", {"values": DEFAULTS, "errors": {}, "result": None})


@router.post("/sweep", include_in_schema=False)
async def sweep_submit(request: Request):
    return await _answer(request, await request.form())


async def _answer(request: Request, form):
    errors = FormErrors()
    task = first_value(form, "task", "map")  # given twice: the first form's (it answered the last's errors)
    # one schema per form, shared with the JSON API (SweepRequest, DesignTableRequest): every
    # error at once, beside its field
    parsed = None
    if task not in TASKS:  # an unknown task was swept as a map
        errors["form"] = f"task must be {' or '.join(TASKS)}, got {str(task)[:40]!r}"
    elif task == "design":
        parsed, found = parse_form(DesignTableRequest, form, fields=(*DESIGN_FIELDS, "delta"))
        errors.update(found)
    else:
        parsed, found = parse_form(SweepRequest, form, fields=MAP_FIELDS)
        errors.update(found)
    body = parsed.model_dump() if parsed is not None else {}
    if body:
        body["discretization"] = MIN_DISCRETIZATION
    result = figure = None
    if not errors:
        try:
            out = await (run_design if task == "design" else run_map)(request, body, True)
            result, figure = out["result"], out["figure"]
            if task == "design":
                result = {**result, "delta": body["delta"],
                          "rows": [design_row(r, body["discretization"]) for r in result["rows"]]}
        except (ValueError, TypeError) as exc:
            errors["form"] = str(exc)
    # one form never blanks the other: the other's fields keep what it sent along (hx-include), else the examples
    values = {**DEFAULTS, **{k: v for k, v in form.items() if isinstance(v, str)}}
    return await render_page(request, "sweep.html", {"values": values, "errors": errors, "task": task,
                                                     "result": finite(result) if result else None,
                                                     "figure": figure}, status=form_status(errors))


@router.post("/api/sweep", tags=["sweep"])
async def sweep_api(body: SweepRequest, request: Request) -> dict:
    """Account a small DP-SGD grid: one row per setting (mu, regret, epsilon at delta, TPR at
    FPR 1e-3, advantage)."""
    try:
        return finite((await run_map(request, body.model_dump(), False))["result"])
    except (ValueError, TypeError) as exc:
        return api_error(exc)


@router.post("/api/sweep/design", tags=["sweep"])
async def design_api(body: DesignTableRequest, request: Request) -> dict:
    """Smallest noise multiplier for each (batch size, epochs) pair at a target mu."""
    try:
        return finite((await run_design(request, body.model_dump(), False))["result"])
    except (ValueError, TypeError) as exc:
        return api_error(exc)
