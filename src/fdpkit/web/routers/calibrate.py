"""Calibrate page: DP-SGD solved for the one training parameter left empty, to meet one
target (mu, epsilon at delta, TPR at FPR, advantage, posterior); its JSON twin. The
calibration runs in a worker process (``run_heavy``: heavy lane, killed at the time limit).
No maths here."""

from __future__ import annotations

from urllib.parse import urlencode

from fastapi import APIRouter, Request

from fdpkit._inputs import plausibility_warnings
from fdpkit.vocabulary import ADD_REMOVE, EXAMPLE, POISSON
from fdpkit.web.common import (CHOICES, FormErrors, Limits, api_error, field_of, finite, form_status, render_page,
                               run_heavy)
from fdpkit.calibrate.outcome import SAFE_ROUNDING
from fdpkit.web.forms import in_words, labels_of, parse_form, report_query
from fdpkit.web.jobs import calibrate_job, deltas_led_by
from fdpkit.web.models import CalibrateRequest
from fdpkit.web.json_numbers import CheckedJSONRoute

router = APIRouter(route_class=CheckedJSONRoute)
TARGETS = ("epsilon", "mu", "tpr", "advantage", "posterior")
NUMBERS = ("target_value", "delta", "fpr", "prior", "noise_multiplier", "sample_rate", "batch_size", "dataset_size",
           "steps", "epochs", "max_batch_size", "examples_per_user", "discretization")
FIELDS = ("target", *NUMBERS, "sampling", "relation", "unit", "mu", "epsilon", "tpr", "advantage", "posterior",
          "drop_last")
#: The form starts with the choices and the accounting setting only: the target and the training
#: run are the user's (a prefilled batch size or epoch count would fight a typed sample rate or
#: steps). The placeholders show EXAMPLE_RUN and "Load example" fills it in. The discretization
#: starts empty, the library's rule, as ``fdpkit calibrate`` and ``fdpkit.calibrate_dpsgd`` use it:
#: a prefilled 1e-3 gave another sigma than the CLI for the same target (2.768 against 2.753).
DEFAULTS = {"target": "epsilon", "sampling": POISSON, "relation": ADD_REMOVE, "unit": EXAMPLE}
EXAMPLE_RUN = {"target": "epsilon", "target_value": "3", "delta": "1e-5", "batch_size": "256",
               "dataset_size": "60000", "epochs": "1"}
#: The form's labels (the schema's titles), used to word the library's errors.
LABELS = {**labels_of(CalibrateRequest), "noise_multiplier": "Noise multiplier σ"}


def _check(kwargs: dict, limits: Limits) -> None:
    steps = kwargs.get("steps")
    if steps is not None and steps > limits.max_steps:
        raise ValueError(f"steps must be at most {limits.max_steps:,} on this server, got {steps:,}")
    nm = kwargs.get("noise_multiplier")
    if nm is not None and nm < limits.min_noise:
        raise ValueError(f"noise_multiplier must be at least {limits.min_noise:g} on this server, got {nm:g}")
    if kwargs.get("discretization") is not None and kwargs["discretization"] < limits.min_discretization:
        raise ValueError(f"discretization must be at least {limits.min_discretization:g} on this server, "
                         f"got {kwargs['discretization']:g}")


def _warnings(kwargs: dict) -> list[str]:
    """Plausibility warnings of the target and the data size (delta >= 1/n), from the library."""
    delta = kwargs.get("delta") if kwargs.get("epsilon") is not None else None
    return plausibility_warnings(epsilon=kwargs.get("epsilon"), mu=kwargs.get("mu"), delta=delta,
                                 prior=kwargs.get("prior") if kwargs.get("posterior") is not None else None,
                                 n=kwargs.get("dataset_size"))


async def _calibrate(request: Request, kwargs: dict, with_report: bool):
    """(CalibrationResult, statement or None, grade or None), computed in a worker process. A
    calibration runs many accountings: always the heavy lane."""
    limits: Limits = request.app.state.limits
    _check(kwargs, limits)
    return await run_heavy(request, calibrate_job, kwargs, limits.max_steps, limits.min_noise, with_report,
                           limits.budget)


@router.get("/calibrate", include_in_schema=False)
async def calibrate_page(request: Request):
    """The form; with query parameters (a permalink) the calibration, rendered on the server."""
    if any(key in request.query_params for key in FIELDS):
        return await _answer(request, request.query_params)
    return await render_page(request, "calibrate.html", {"values": DEFAULTS, "errors": {}, "result": None,
                                                         "choices": CHOICES, "targets": TARGETS,
                                                         "example": EXAMPLE_RUN})


@router.post("/calibrate", include_in_schema=False)
async def calibrate_submit(request: Request):
    return await _answer(request, await request.form())


#: The inputs read through the JSON API's schema (CalibrateRequest), besides the target.
TRAINING = ("delta", "fpr", "prior", "noise_multiplier", "sample_rate", "batch_size", "dataset_size", "steps", "epochs",
            "max_batch_size", "examples_per_user", "discretization", "sampling", "relation", "unit")


async def _answer(request: Request, form):
    errors = FormErrors()
    values = {k: form.get(k, "") for k in FIELDS}
    target = form.get("target") or "epsilon"
    data = {k: form.get(k, "") for k in TRAINING}
    if target not in TARGETS:
        errors["target"] = f"target must be one of {', '.join(TARGETS)}, got {target!r}"
    else:
        data[target] = form.get("target_value", "")
    # one schema for the form and the JSON API: every error at once, in the labels' words
    body, found = parse_form(CalibrateRequest, data, fields=(*TRAINING, *([target] if target in TARGETS else [])))
    for name, message in found.items():
        if name == target and message.startswith(target):  # the target's bound, worded for its field
            message = "Target value" + message[len(target):]
        errors.setdefault("target_value" if name == target else name, message)
    if str(form.get("target_value") or "").strip() == "" and "target_value" not in errors:
        errors["target_value"] = f"target value is required: the largest {target} allowed"
    result = statement = grade = None
    warnings: list[str] = []
    if not errors and body is not None:
        kwargs = body.model_dump()
        kwargs["drop_last"] = form.get("drop_last") in ("on", "true", "1")
        try:
            warnings = _warnings(kwargs)
            result, statement, grade = await _calibrate(request, kwargs, True)
        except ValueError as exc:
            name = field_of(exc, FIELDS)
            errors["target_value" if name == target else name] = in_words(str(exc), LABELS)
    data = solved = None
    if result is not None:
        # the page quotes the solved value as a user copies it (rounded to the safe side, as the
        # CLI prints it); the achieved figures, the statement, the report link and the proposal
        # are all of that run (calibrate_job re-accounts it)
        data = finite(result.to_dict())
        exact = result.exact_value if result.exact_value is not None else result.value
        solved = {"value": result.rounded_value(), "up": SAFE_ROUNDING.get(result.unknown), "exact": exact}
        if result.unknown in SAFE_ROUNDING:
            data[result.unknown] = solved["value"]
        run = result.rounded_mechanism()
        if run is not None:
            solved["spec"] = run.to_dict()
            # with the calibration's δ, which the report then leads with (its headline said ε at 1e-5)
            query = report_query(solved["spec"], body.discretization)
            if deltas_led_by(body.delta):
                query["delta"] = repr(float(body.delta))
            solved["report"] = "/report?" + urlencode(query)
    return await render_page(request, "calibrate.html", {
        "values": values, "errors": errors, "choices": CHOICES, "targets": TARGETS, "result": result,
        "data": data, "solved": solved, "statement": statement, "grade": grade,
        "warnings": warnings, "example": EXAMPLE_RUN}, status=form_status(errors))


@router.post("/api/calibrate/dpsgd", tags=["calibrate"])
async def calibrate_api(request: Request, body: CalibrateRequest):
    """Calibrate DP-SGD: give one target (mu; epsilon with delta; tpr with fpr; advantage;
    posterior with prior) and every training parameter except the one to solve for. Returns
    the solved value as the page proposes it (a noise multiplier rounded up, a sample rate
    down, to 4 significant digits: the safe side), that run's parameters and every achieved
    metric of it (always on the safe side of the target); ``exact_value``: the value the
    search found, before that rounding."""
    try:
        kwargs = body.model_dump()
        r, _, _ = await _calibrate(request, kwargs, False)
        return finite({**r.to_dict(), "warnings": _warnings(kwargs)})
    except ValueError as exc:
        return api_error(exc)
