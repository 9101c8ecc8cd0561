"""Report page: DP-SGD or a composed mechanism -> the privacy report with plots and
downloads in every format (no maths here)."""

from __future__ import annotations

from fastapi import APIRouter, Query, Request

import fdpkit as fp
from fdpkit.mechanisms import DPSGD, Mechanism, dpsgd_from_training, leaves, mechanism_from_dict, walk
from fdpkit.report import FORMATS
from fdpkit.vocabulary import RELATIONS, SAMPLINGS, UNITS
from fdpkit.web.common import (
    MEDIA, FormErrors, Limits, api_error, download, field_of, parse_float, parse_int, render_page, run_heavy,
    run_light, spec_from_text,
)
from fdpkit.web.jobs import prepare, report_job
from fdpkit.web.models import DPSGDRequest, MechanismRequest, PointsRequest, UniformSamplingRequest

router = APIRouter()
FIELDS = ("noise_multiplier", "sample_rate", "batch_size", "dataset_size", "steps", "epochs",
          "discretization", "mechanism", "times", "sampling_mu", "sampling_n", "sampling", "relation",
          "max_batch_size", "unit", "examples_per_user", "points", "points_bound", "drop_last")
CHOICES = {"sampling": SAMPLINGS, "relation": RELATIONS, "unit": UNITS}  # fdpkit.vocabulary
DEFAULTS = {"kind": "dpsgd", "noise_multiplier": 9.4, "sample_rate": 0.32768, "steps": 2000,
            "discretization": 1e-4, "mechanism": "", "sampling_mu": 1.0, "sampling_n": 100}


def _size(m: Mechanism) -> tuple[int, int]:
    """(number of leaf mechanisms, largest repetition count): what bounds the work (nesting
    multiplies: Repeated(Repeated(M, a), b) is a*b steps; a DP-SGD run is its phases)."""
    parts, times = 0, 0
    for leaf, t in leaves(m):
        phases = leaf.phases if isinstance(leaf, DPSGD) else None
        parts += len(phases) if phases else 1
        times = max(times, t * leaf.steps if phases else t)
    return parts, times


def _noise(m: Mechanism) -> float:
    """Noise per unit of sensitivity of one node (inf where it adds none itself)."""
    if isinstance(m, DPSGD):
        return min(p.noise_multiplier for p in m.phases) / m.sensitivity
    if isinstance(m, fp.Gaussian):
        return m.sigma / m.sensitivity
    if isinstance(m, fp.Laplace):
        return m.scale / m.sensitivity
    return float("inf")


def _min_noise(m: Mechanism) -> float:
    return min(_noise(n) for n, _ in walk(m))


def check_limits(m: Mechanism, discretization: float, limits: Limits) -> None:
    noise = _min_noise(m)
    if noise < limits.min_noise:
        raise ValueError(f"noise (sd or scale per unit of sensitivity) must be at least {limits.min_noise:g} "
                         f"on this server, got {noise:g}")
    parts, times = _size(m)
    if times > limits.max_steps:
        raise ValueError(f"steps must be at most {limits.max_steps:,} on this server, got {times:,}")
    if parts > limits.max_parts:
        raise ValueError(f"a composed mechanism may have at most {limits.max_parts} parts here, got {parts}")
    if discretization < limits.min_discretization:
        raise ValueError(f"discretization must be at least {limits.min_discretization:g} on this server, "
                         f"got {discretization:g}")


def _from_form(form) -> tuple[Mechanism | None, float | None, dict, FormErrors]:
    errors = FormErrors()
    values = {k: form.get(k, "") for k in ("kind", *FIELDS)}
    for c, options in CHOICES.items():
        values[c] = values[c] or options[0]
    disc = parse_float(form, "discretization", errors, default=1e-4)
    mech = None
    try:
        kind = form.get("kind") or "dpsgd"
        if kind == "uniform-sampling":
            # form names differ from the library's (mu, n): the page shows the report's mu
            mu = parse_float(form, "sampling_mu", errors)
            n = parse_int(form, "sampling_n", errors)
            if not errors:
                try:
                    mech = fp.UniformSampling(mu, n)
                except ValueError as exc:
                    name = {"mu": "sampling_mu", "n": "sampling_n"}.get(str(exc).split(" ", 1)[0], "form")
                    errors[name] = str(exc)
        elif kind == "points":
            text = str(form.get("points") or "").strip()
            if not text:
                errors["points"] = "points are required: one 'fpr,fnr' pair per line, FPR 0 included"
            else:
                try:
                    mech = points_mechanism(text, str(form.get("points_bound") or "lower"))
                except ValueError as exc:
                    errors["points"] = str(exc)
        elif kind == "mechanism":
            text = str(form.get("mechanism") or "").strip()
            if not text:
                errors["mechanism"] = "mechanism is required: a JSON mechanism spec"
            else:
                try:
                    mech = mechanism_from_dict(spec_from_text(text))
                except ValueError as exc:
                    errors["mechanism"] = str(exc)
        else:
            nm = parse_float(form, "noise_multiplier", errors)
            q = parse_float(form, "sample_rate", errors, required=False)
            b = parse_int(form, "batch_size", errors, required=False)
            n = parse_int(form, "dataset_size", errors, required=False)
            t = parse_int(form, "steps", errors, required=False)
            e = parse_float(form, "epochs", errors, required=False)
            mb = parse_int(form, "max_batch_size", errors, required=False)
            k = parse_int(form, "examples_per_user", errors, required=False)
            opts = {c: (form.get(c) or CHOICES[c][0]) for c in CHOICES}
            if not errors:
                mech = dpsgd_from_training(nm, sample_rate=q, batch_size=b, dataset_size=n, steps=t, epochs=e,
                                           max_batch_size=mb, examples_per_user=k,
                                           drop_last=form.get("drop_last") == "on", **opts)
    except ValueError as exc:
        errors[field_of(str(exc), FIELDS)] = str(exc)
    return mech, disc, values, errors


def points_mechanism(text: str, bound: str = "lower") -> Mechanism:
    """The mechanism whose curve is the lower convex hull of CSV error points."""
    from fdpkit.curves.points import points_from_csv

    if bound not in ("lower", "exact"):
        raise ValueError(f"bound must be lower or exact (an upper curve certifies nothing), got {bound!r}")
    fpr, fnr = points_from_csv(text)
    return fp.CurveMechanism.from_curve(fp.curve_from_points(fpr, fnr, bound=bound))


def _checked(spec, disc: float, limits: Limits) -> tuple[Mechanism, float]:
    """Parse, apply the server's limits and the cost budget (cheap; run in a thread)."""
    mech = mechanism_from_dict(spec)
    check_limits(mech, disc, limits)
    return prepare(mech, disc, limits.budget)


async def _report(request: Request, mech, disc: float, fmt: str):
    """Refuse over-budget work at once (422), then run it in a worker process."""
    limits: Limits = request.app.state.limits
    mech, work = await run_light(_checked, mech, disc, limits)
    return await run_heavy(request, report_job, mech, disc, fmt, limits.budget, work=work)


@router.get("/report", include_in_schema=False)
async def report_page(request: Request):
    """The form; with query parameters (a permalink) the report, rendered on the server."""
    if any(k in request.query_params for k in ("kind", *FIELDS)):
        return await _answer(request, request.query_params)
    return await render_page(request, "report.html", {"values": DEFAULTS, "errors": {}, "doc": None,
                                                      "choices": CHOICES})


@router.post("/report", include_in_schema=False)
async def report_submit(request: Request):
    return await _answer(request, await request.form())


async def _answer(request: Request, form):
    mech, disc, values, errors = await run_light(_from_form, form)
    doc = tables = figures = details = statement = None
    if not errors:
        try:
            parts = await _report(request, mech, disc, "page")
            doc, tables, figures, details = parts["doc"], parts["tables"], parts["figures"], parts["details"]
            statement = parts["statement"]
        except ValueError as exc:
            errors[field_of(str(exc), FIELDS)] = str(exc)
    return await render_page(request, "report.html", {"values": values, "errors": errors, "doc": doc,
                                                      "choices": CHOICES, "tables": tables, "figures": figures,
                                                      "details": details, "formats": FORMATS,
                                                      "statement": statement})


@router.post("/report/download", include_in_schema=False)
async def report_download(request: Request, format: str = Query("html")):
    form = await request.form()
    mech, disc, _, errors = await run_light(_from_form, form)
    if errors:
        return api_error("; ".join(errors.values()))
    if format not in FORMATS:
        return api_error(f"format must be one of {', '.join(FORMATS)}, got {format!r}")
    try:
        data = await _report(request, mech, disc, format)
    except ValueError as exc:
        return api_error(str(exc))
    return download(data, f"fdpkit-report.{format}", MEDIA[format])


@router.post("/api/report/dpsgd", tags=["report"])
async def report_dpsgd_api(request: Request, body: DPSGDRequest,
                           format: str = Query("json", description="json, csv, md, html or pdf")):
    """Privacy report of DP-SGD (sample rate or batch/dataset size; steps or epochs)."""
    try:
        mech = dpsgd_from_training(body.noise_multiplier, sample_rate=body.sample_rate,
                                   batch_size=body.batch_size, dataset_size=body.dataset_size,
                                   steps=body.steps, epochs=body.epochs, sampling=body.sampling,
                                   relation=body.relation, max_batch_size=body.max_batch_size,
                                   unit=body.unit, examples_per_user=body.examples_per_user,
                                   drop_last=body.drop_last)
        return await _api_answer(request, mech, body.discretization, format)
    except ValueError as exc:
        return api_error(str(exc))


@router.post("/api/report/uniform-sampling", tags=["report"])
async def report_uniform_api(request: Request, body: UniformSamplingRequest,
                             format: str = Query("json", description="json, csv, md, html or pdf")):
    """Privacy report of de Fondeville's uniform random sampling (Example 3), the worked
    example of catastrophic failure."""
    try:
        mech = fp.UniformSampling(body.mu, body.n)
        return await _api_answer(request, mech, body.discretization, format)
    except ValueError as exc:
        return api_error(str(exc))


@router.post("/api/report/points", tags=["report"])
async def report_points_api(request: Request, body: PointsRequest,
                            format: str = Query("json", description="json, csv, md, html or pdf")):
    """Privacy report of a curve given by (FPR, FNR) error points as CSV (R fdp's fdp() of a
    data frame: the points' lower convex hull; its mu is R's est_gdp)."""
    try:
        mech = await run_light(points_mechanism, body.points, body.bound)
        return await _api_answer(request, mech, body.discretization, format)
    except ValueError as exc:
        return api_error(str(exc))


@router.post("/api/report", tags=["report"])
async def report_api(request: Request, body: MechanismRequest,
                     format: str = Query("json", description="json, csv, md, html or pdf")):
    """Privacy report of any mechanism spec (the library's mechanism dicts)."""
    try:
        return await _api_answer(request, body.mechanism, body.discretization, format)
    except ValueError as exc:
        return api_error(str(exc))


async def _api_answer(request: Request, mech, disc: float, format: str):
    if format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {format!r}")
    result = await _report(request, mech, disc, "dict" if format == "json" else format)
    if format == "json":
        return result
    return download(result, f"fdpkit-report.{format}", MEDIA[format])
