"""Calculator page: classic formulas beside the exact Gaussian-DP answers (no maths here)."""

from __future__ import annotations

from fastapi import APIRouter, Query, Request

from fdpkit._numerics import safe_g, safe_text
from fdpkit.convert.classic import calculate
from fdpkit.report import csv_rows, plots
from fdpkit.report.figures import svg_inline
from fdpkit.report.pdf import render_tables_pdf
from fdpkit.web.common import FormErrors, api_error, download, field_of, finite, form_status, render_page, run_light
from fdpkit.web.forms import parse_form
from fdpkit.web.names import download_name
from fdpkit.web.models import CalculatorRequest
from fdpkit.web.json_numbers import CheckedJSONRoute

router = APIRouter(route_class=CheckedJSONRoute)
FIELDS = ("mode", "sensitivity", "epsilon", "delta", "scale", "sigma", "k", "delta_prime", "releases", "fpr",
          "standard_error")
EXAMPLES = [
    ("Laplace (compute ε)", {"mode": "laplace", "sensitivity": 1, "scale": 1}, "ε = 1 / 1 = 1"),
    ("Laplace (compute b)", {"mode": "laplace", "sensitivity": 1, "epsilon": 0.5}, "b = 1 / 0.5 = 2"),
    ("Gaussian (compute σ)", {"mode": "gaussian", "sensitivity": 1, "epsilon": 1, "delta": 1e-5},
     "classic σ ≈ 4.84; exact σ ≈ 3.73"),
    ("Composition", {"mode": "composition", "epsilon": 0.2, "delta": 0, "k": 50}, "basic ε_total = 10"),
    ("Different releases", {"mode": "composition", "releases": "0.5, 0; 1, 0; 0.25, 0"}, "basic ε_total = Σεᵢ = 1.75"),
]

#: The form starts with the mode and the settings that have a stated default (sensitivity 1, one
#: release, δ′ and the reference FPR); the budget or the noise is the user's (a prefilled ε would
#: fight a typed σ or b). The placeholders show EXAMPLE and "Load example" fills it in.
START = {"mode": "gaussian", "sensitivity": "1", "k": "1", "delta_prime": "1e-5", "fpr": "1e-3"}
EXAMPLE = {**START, "epsilon": "1", "delta": "1e-5"}

#: The form's numbers, read through the JSON API's schema; ``releases`` is the page's text
#: ("0.5, 0; 1, 0"), read by the library.
NUMBERS = tuple(k for k in FIELDS if k != "releases")
DEFAULTS = {name: f.default for name, f in CalculatorRequest.model_fields.items() if name != "releases"}


def _parse(form) -> tuple[dict, FormErrors]:
    """The form through CalculatorRequest (one schema with /api/calculator): every error at once."""
    data = {k: form.get(k) for k in NUMBERS}
    data["mode"] = data.get("mode") or "gaussian"
    body, found = parse_form(CalculatorRequest, data, fields=NUMBERS)
    errors = FormErrors(found)
    values = body.model_dump() if body is not None else {**DEFAULTS, "mode": data["mode"]}
    values["releases"] = str(form.get("releases") or "")
    return values, errors


#: The fields the form hides in some modes (``data-when-mode`` in calculator.html).
_MODE_FIELDS = {"delta": ("gaussian", "composition"), "scale": ("laplace",), "sigma": ("gaussian", "composition"),
                "k": ("composition",), "delta_prime": ("composition",), "releases": ("composition",),
                "standard_error": ("laplace", "gaussian")}


def _shown(mode: str) -> tuple[str, ...]:
    """The fields the form shows in ``mode``."""
    return tuple(f for f in FIELDS if mode in _MODE_FIELDS.get(f, (mode,)))


def _run(values: dict):
    return calculate(values["mode"], sensitivity=values["sensitivity"], epsilon=values["epsilon"],
                     delta=values["delta"], scale=values["scale"], sigma=values["sigma"], k=values["k"],
                     delta_prime=values["delta_prime"], releases=values.get("releases") or None,
                     fpr=values.get("fpr") if values.get("fpr") is not None else 1e-3,
                     standard_error=values.get("standard_error"))


@router.get("/calculator", include_in_schema=False)
async def calculator_page(request: Request):
    """The form; with query parameters (a permalink, e.g. ``/calculator?mode=composition&epsilon=0.2&k=50``)
    the answer, rendered on the server."""
    if any(k in request.query_params for k in FIELDS):
        return await _answer(request, request.query_params)
    return await render_page(request, "calculator.html", {"values": START, "errors": {}, "result": None,
                                                          "examples": EXAMPLES, "example": EXAMPLE})


@router.post("/calculator", include_in_schema=False)
async def calculator_submit(request: Request):
    return await _answer(request, await request.form())


def proposal(result) -> dict | None:
    """The mechanism a Gaussian or Laplace answer describes, as the ledger's proposal form takes
    it ("Propose this release"): the noise as the page prints it, rounded up (more noise, the
    safe side: the copied σ or b still meets the budget), with its sensitivity. None for a
    composition (several releases: each is proposed on its own).

    >>> proposal(calculate("gaussian", sensitivity=1.0, epsilon=1.0, delta=1e-6))
    {'kind': 'gaussian', 'sigma': 4.225, 'sensitivity': 1.0}
    """
    inputs, outputs = result.inputs, result.outputs
    if result.mode == "gaussian":
        sigma = inputs["sigma"] if "sigma" in inputs else float(safe_text(outputs["exact sigma (Gaussian DP)"], up=True))
        return {"kind": "gaussian", "sigma": float(sigma), "sensitivity": float(inputs["sensitivity"])}
    if result.mode == "laplace":
        scale = inputs["scale"] if "scale" in inputs else float(safe_text(outputs["scale b"], up=True))
        return {"kind": "laplace", "scale": float(scale), "sensitivity": float(inputs["sensitivity"])}
    return None


async def _answer(request: Request, form):
    values, errors = _parse(form)
    result = figure = None
    if not errors:
        try:
            result = await run_light(_run, values)
            figure = await run_light(noise_figure, values)
        except ValueError as exc:
            # said beside a field the mode shows, else above the form (a hidden field's
            # message would not be seen)
            errors[field_of(exc, _shown(values["mode"]))] = str(exc)
    return await render_page(request, "calculator.html", {"values": {k: form.get(k, v) for k, v in values.items()},
                                                          "errors": errors, "result": result, "examples": EXAMPLES,
                                                          "figure": figure, "example": EXAMPLE,
                                                          "proposal": proposal(result) if result else None},
                             status=form_status(errors))


def noise_figure(values: dict) -> str | None:
    """ε against the noise scale for the user's sensitivity and δ (Laplace and Gaussian)."""
    if values["mode"] == "composition":
        return None
    d = values.get("delta")
    d = d if d is not None and 0 < d < 1 else 1e-5
    s = values["sensitivity"]
    return svg_inline(lambda ax: plots.epsilon_vs_noise(ax, sensitivity=s, delta=d, scale_range=(0.2 * s, 20.0 * s)),
                      title=f"ε against the noise scale, sensitivity {s:g}, δ = {d:g}")


@router.post("/calculator/export", include_in_schema=False)
async def calculator_export(request: Request, format: str = Query("csv")):
    form = await request.form()
    values, errors = _parse(form)
    if errors:
        return api_error("; ".join(errors.values()))
    if format not in ("csv", "pdf"):
        return api_error(f"format must be csv or pdf, got {format!r}")
    try:
        result = await run_light(_run, values)
    except ValueError as exc:
        return api_error(exc)
    rows = [["section", "name", "value"]] + [list(r) for r in result.rows()]
    name = download_name({"kind": result.mode, **result.inputs}, format, "calculator")
    if format == "csv":
        return download(csv_rows(rows).encode(), name, "text/csv; charset=utf-8")
    tables = [("Inputs", ["name", "value"], [["mode", result.mode]] + [[k, str(v)] for k, v in result.inputs.items()]),
              ("Outputs", ["name", "value"], [[k, safe_g(v, 6, up=True)] for k, v in result.outputs.items()])]
    pdf = await run_light(render_tables_pdf, f"fdpkit calculator: {result.mode}", tables, list(result.warnings))
    return download(pdf, name, "application/pdf")


@router.post("/api/calculator", tags=["calculator"])
async def calculator_api(body: CalculatorRequest) -> dict:
    """Calculator (Laplace, Gaussian classic vs exact, composition) as JSON."""
    try:
        return await run_light(lambda: finite(_run(body.model_dump()).to_dict()))
    except ValueError as exc:
        return api_error(exc)
