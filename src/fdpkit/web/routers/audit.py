"""Audit page: upload an attack's scores (CSV) or type published counts, optionally with the
certified mechanism, or simulate the optimal canary attack; see the verdict and the
log-log ROC. JSON twins under /api/audit. No maths here: fdpkit.audit does it all.

Parsing (specs, CSV uploads), the server's limits and the cost estimate run in a thread;
the audit itself (and the certified report it is read against) in a worker process
(``run_heavy``: killed at the time limit, never a thread that outlives its request)."""

from __future__ import annotations

import re
from urllib.parse import urlencode
from typing import Annotated, Any, Optional, Union

from fastapi import APIRouter, File, Form, Query, Request, UploadFile
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from fdpkit.accounting import DISCRETIZATION_DEFAULT
from fdpkit.accounting.work_limits import AUDIT_WORK_PER_SCORE, SIMULATION_WORK_PER_DRAW
from fdpkit.audit import read_scores_csv
from fdpkit.mechanisms import Mechanism, fold, mechanism_from_dict, training_run
from fdpkit.report import FORMATS
from fdpkit.web.common import (MEDIA, FormErrors, Limits, api_error, check_limits, download, finite, render_page,
                               run_heavy, run_light, spec_from_text)
from fdpkit.web.forms import parse_form
from fdpkit.web.jobs import audit_counts_job, audit_scores_job, prepare, simulate_job

router = APIRouter()

#: Largest accepted upload per file (bytes) and whole request (both files and fields).
MAX_UPLOAD_BYTES = 16 * 1024 * 1024
MAX_REQUEST_BYTES = 2 * MAX_UPLOAD_BYTES + 256 * 1024
#: Most scores per class, counts (thresholds), and simulated trials x releases per request.
MAX_SCORES = 1_000_000
MAX_THRESHOLDS = 10_000
MAX_TRIALS = 200_000
MAX_SIMULATED_DRAWS = 50_000_000
FIELDS = ("members", "nonmembers", "true_positives", "false_positives", "n_members", "n_nonmembers",
          "mechanism", "ran", "confidence", "delta", "trials", "seed")
DEFAULTS = {"mode": "scores", "confidence": 0.95, "delta": 1e-5, "trials": 20000, "seed": 0,
            "ran": '{"kind": "gaussian", "sigma": 0.5}'}
#: example of a certified mechanism, shown as a placeholder (never a live default: typed counts
#: are judged against a mechanism only when the user gives one)
MECHANISM_EXAMPLE = '{"kind": "gaussian", "sigma": 1.0}'

FiniteFloat = Annotated[float, Field(allow_inf_nan=False)]
Count = Annotated[int, Field(ge=0, le=10**15)]


class CountsBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    true_positives: list[Count] = Field(..., min_length=1, max_length=MAX_THRESHOLDS)
    false_positives: list[Count] = Field(..., min_length=1, max_length=MAX_THRESHOLDS)
    members: Union[Count, list[Count]] = Field(...)
    nonmembers: Union[Count, list[Count]] = Field(...)


class AuditSettings(BaseModel):
    """The audit's settings, shared by its requests and its page's form (``parse_form``)."""

    model_config = ConfigDict(extra="forbid")
    confidence: float = Field(0.95, gt=0, lt=1, allow_inf_nan=False)
    delta: float = Field(1e-5, ge=0, lt=1, allow_inf_nan=False)


class AuditRequest(AuditSettings):
    """Scores (higher = member) or counts, and optionally the certified mechanism."""

    member_scores: Optional[list[FiniteFloat]] = Field(None, max_length=MAX_SCORES)
    nonmember_scores: Optional[list[FiniteFloat]] = Field(None, max_length=MAX_SCORES)
    counts: Optional[CountsBody] = None
    mechanism: Optional[dict[str, Any]] = None


class SimulateSettings(AuditSettings):
    """The simulation's settings beside its mechanisms (the page's simulate form reads them)."""

    trials: int = Field(10_000, ge=1, le=MAX_TRIALS)
    seed: int = Field(0, ge=0, le=2**63 - 1)


class SimulateRequest(SimulateSettings):
    """The optimal canary attack against ``mechanism``, audited against ``declared`` (default:
    the same mechanism)."""

    mechanism: dict[str, Any]
    declared: Optional[dict[str, Any]] = None


# ------------------------------------------------------------------------------------ helpers
def _releases(m: Mechanism) -> int:
    """Number of elementary releases (bounds the simulation's work)."""
    return fold(m, _leaf_releases, repeat=lambda inner, times: times * inner, compose=sum,
                through=lambda node: True)  # a subsampled mechanism: its inner one's releases


def _leaf_releases(m: Mechanism) -> int:
    run = training_run(m)
    return int(run.steps) if run is not None else 1  # DP-SGD: one release per step


def _discretization(limits: Limits) -> float:
    """The discretization certified guarantees are accounted at on this server."""
    return max(DISCRETIZATION_DEFAULT, limits.min_discretization)


def _mechanism(spec: Any, limits: Limits, name: str = "mechanism") -> tuple[Mechanism | None, float]:
    """Parse a spec (JSON text or dict), apply the server's limits and the cost budget of
    certifying it (ValueError, HTTP 422); return it with its estimated work (None, 0 for an
    empty spec). Cheap: run in a thread."""
    if spec is None or (isinstance(spec, str) and not spec.strip()):
        return None, 0.0
    if isinstance(spec, str):
        spec = spec_from_text(spec, name)
    mech = mechanism_from_dict(spec)
    disc = _discretization(limits)
    check_limits(mech, disc, limits)
    return prepare(mech, disc, limits.budget)


def _check_simulation(mech: Mechanism, trials: int) -> float:
    """Refuse a simulation beyond MAX_SIMULATED_DRAWS; return its estimated work."""
    draws = trials * _releases(mech)
    if draws > MAX_SIMULATED_DRAWS:
        raise ValueError(f"trials x releases must be at most {MAX_SIMULATED_DRAWS:,} on this server, got {draws:,}")
    return 2.0 * draws * SIMULATION_WORK_PER_DRAW


def _simulation_inputs(ran_spec: Any, declared_spec: Any, trials: int, limits: Limits,
                       ran_name: str = "mechanism") -> tuple[Mechanism, Mechanism, float]:
    """(mechanism that runs, mechanism declared, estimated work) of a simulation request;
    ``ran_name`` is the field of the mechanism that runs ("ran" on the page). Cheap: run in
    a thread."""
    ran, ran_work = _mechanism(ran_spec, limits, ran_name)
    if ran is None:
        raise ValueError(f"{ran_name} is required: the mechanism that runs, as a JSON spec")
    declared, declared_work = _mechanism(declared_spec, limits)
    if declared is None:
        declared, declared_work = ran, ran_work
    return ran, declared, _check_simulation(ran, trials) + declared_work


async def _run_audit(request: Request, kind: str, data: tuple, confidence: float, delta: float, mech: Mechanism | None,
                     mech_work: float, fmt: str) -> Any:
    """Run a scores or counts audit in a worker process."""
    limits: Limits = request.app.state.limits
    if kind == "scores":
        work = mech_work + AUDIT_WORK_PER_SCORE * (len(data[0]) + len(data[1]))
        return await run_heavy(request, audit_scores_job, *data, confidence, delta, mech, _discretization(limits),
                               limits.budget, fmt, work=work)
    work = mech_work + AUDIT_WORK_PER_SCORE * len(data[0])
    return await run_heavy(request, audit_counts_job, *data, confidence, delta, mech, _discretization(limits),
                           limits.budget, fmt, work=work)


def _counts_list(form: Any, name: str, errors: FormErrors) -> list[float] | None:
    raw = str(form.get(name) or "").strip()
    if not raw:
        errors[name] = f"{name.replace('_', ' ')} is required: one count per threshold, comma-separated"
        return None
    items = [s for s in re.split(r"[,\s;]+", raw) if s]
    if len(items) > MAX_THRESHOLDS:
        errors[name] = f"{name.replace('_', ' ')}: at most {MAX_THRESHOLDS:,} thresholds"
        return None
    try:
        return [float(s) for s in items]
    except ValueError:
        errors[name] = f"{name.replace('_', ' ')} must be comma-separated numbers, got {raw[:60]!r}"
        return None


async def _read_upload(upload: Any, name: str) -> bytes:
    if upload is None or isinstance(upload, str) or not getattr(upload, "filename", None):
        raise ValueError(f"{name} is required: a CSV file of scores")
    data = await upload.read(MAX_UPLOAD_BYTES + 1)
    if len(data) > MAX_UPLOAD_BYTES:
        raise ValueError(f"{name} file is larger than {MAX_UPLOAD_BYTES // (1024 * 1024)} MiB")
    return data


def _scores(data: bytes, name: str, filename: str | None):
    label = f"{name} file {filename}" if filename else name
    return read_scores_csv(data, label, max_rows=MAX_SCORES)


def _too_large(request: Request) -> JSONResponse | None:
    try:
        size = int(request.headers.get("content-length") or 0)
    except ValueError:
        size = 0
    if size > MAX_REQUEST_BYTES:
        return JSONResponse({"detail": f"upload is larger than {MAX_REQUEST_BYTES // (1024 * 1024)} MiB"},
                            status_code=413)
    return None


def _answer(result: Any, format: str):
    """The job's answer: JSON (the result's dict), or the audit document rendered in another
    report format (bytes, made in the worker)."""
    if format == "json":
        return finite(result)
    return download(result, f"fdpkit-audit.{format}", MEDIA[format])


def _check_format(format: str) -> None:
    if format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {format!r}")


def _field_of(message: str) -> str:
    head = message.split(" ", 1)[0].rstrip(",:")
    aliases = {"member_scores": "members", "nonmember_scores": "nonmembers", "members": "n_members",
               "nonmembers": "n_nonmembers"}
    if message.startswith(("members file", "nonmembers file")):
        return head
    if head in aliases:
        return aliases[head]
    return head if head in FIELDS else "form"


# ------------------------------------------------------------------------------------ page
#: Longest permalink a result carries (a longer one is left out).
MAX_PERMALINK = 4000


@router.get("/audit", include_in_schema=False)
async def audit_page(request: Request):
    """The form; with query parameters of the counts or simulate mode (a permalink, e.g.
    ``/audit?mode=counts&true_positives=900&...``) the audit, rendered on the server."""
    q = request.query_params
    if q.get("mode") in ("counts", "simulate"):
        return await _page_answer(request, q)
    values = {**DEFAULTS, **{k: v for k, v in q.items() if k in (*FIELDS, "mode")}}
    return await render_page(request, "audit.html", {"values": values, "errors": {}, "result": None})


@router.post("/audit", include_in_schema=False)
async def audit_submit(request: Request):
    """Scores (file uploads) are audited in place; counts and simulations also, and the page
    carries their permalink (``data-permalink``: the browser puts it in the address bar, so
    reload keeps the answer)."""
    big = _too_large(request)
    if big is not None:
        return big
    form = await request.form(max_part_size=MAX_UPLOAD_BYTES)
    return await _page_answer(request, form)


def permalink(form) -> str | None:
    """``/audit?mode=counts&...`` of a counts or simulate form (blank fields left out), or None
    (scores need files; a link longer than :data:`MAX_PERMALINK`)."""
    mode = form.get("mode")
    if mode not in ("counts", "simulate"):
        return None
    keys = {"counts": ("true_positives", "false_positives", "n_members", "n_nonmembers"),
            "simulate": ("ran", "trials", "seed")}[str(mode)]
    query = urlencode({"mode": mode, **{k: form.get(k) for k in (*keys, "mechanism", "confidence", "delta")
                                        if isinstance(form.get(k), str) and form.get(k)}})
    return f"/audit?{query}" if len(query) <= MAX_PERMALINK else None


async def _page_answer(request: Request, form):
    limits: Limits = request.app.state.limits
    errors = FormErrors()
    mode = str(form.get("mode") or "scores")
    values = {k: v for k, v in form.items() if isinstance(v, str)}
    values.setdefault("mode", mode)
    # the settings through the JSON API's schema (AuditSettings, SimulateSettings): errors at once
    simulate = mode == "simulate"
    settings, found = parse_form(SimulateSettings if simulate else AuditSettings, form,
                                 fields=("confidence", "delta", *(("trials", "seed") if simulate else ())))
    errors.update(found)
    conf = settings.confidence if settings is not None else 0.95
    delta = settings.delta if settings is not None else 1e-5
    result = simulation = None
    try:
        if mode not in ("scores", "counts", "simulate"):
            raise ValueError(f"mode must be scores, counts or simulate, got {mode!r}")
        if mode == "simulate":
            if not str(form.get("ran") or "").strip():
                errors["ran"] = "ran is required: the mechanism that runs, as a JSON spec"
            # the page's default trials (20,000) where the field is blank; the API's is 10,000
            trials = settings.trials if settings is not None and str(form.get("trials") or "").strip() else 20000
            seed = settings.seed if settings is not None else 0
            if not errors:
                ran, declared, work = await run_light(_simulation_inputs, form.get("ran"), form.get("mechanism"),
                                                      trials, limits, "ran")
                result = await run_heavy(request, simulate_job, ran, declared, trials, seed, conf, delta,
                                         _discretization(limits), limits.budget, "view", work=work)
                simulation = {**result["simulated"], "tpr_1e3": result["tpr_1e3"], "tpr_1e2": result["tpr_1e2"]}
        elif mode == "counts":
            lists = {k: _counts_list(form, k, errors) for k in
                     ("true_positives", "false_positives", "n_members", "n_nonmembers")}
            mech, work = await run_light(_mechanism, form.get("mechanism"), limits)
            if not errors:
                data = (lists["true_positives"], lists["false_positives"], lists["n_members"], lists["n_nonmembers"])
                result = await _run_audit(request, "counts", data, conf, delta, mech, work, "view")
        else:
            m_up, n_up = form.get("members"), form.get("nonmembers")
            scores = {}
            for name, up in (("members", m_up), ("nonmembers", n_up)):
                try:
                    raw = await _read_upload(up, name)
                    scores[name] = await run_light(_scores, raw, name, getattr(up, "filename", None))
                except ValueError as exc:
                    errors[name] = str(exc)
            mech, work = await run_light(_mechanism, form.get("mechanism"), limits)
            if not errors:
                result = await _run_audit(request, "scores", (scores["members"], scores["nonmembers"]), conf, delta,
                                          mech, work, "view")
    except ValueError as exc:
        errors[_field_of(str(exc))] = str(exc)
        result = simulation = None
    context = {"values": values, "errors": errors, "result": result, "simulation": simulation,
               "permalink": permalink(form) if result else None}
    return await render_page(request, "audit.html", context, status=422 if errors else 200)


# ------------------------------------------------------------------------------------ API
@router.post("/api/audit", tags=["audit"])
async def audit_api(request: Request, body: AuditRequest, format: str = Query("json", description="json, csv, md, html or pdf")):
    """Audit scores (``member_scores`` and ``nonmember_scores``) or published ``counts``,
    optionally against a certified ``mechanism``: lower bounds on mu and epsilon at delta,
    and the violation verdict."""
    limits: Limits = request.app.state.limits
    try:
        _check_format(format)
        mech, work = await run_light(_mechanism, body.mechanism, limits)
        if body.counts is not None:
            if body.member_scores is not None or body.nonmember_scores is not None:
                raise ValueError("give either member_scores and nonmember_scores, or counts, not both")
            c = body.counts
            data = (c.true_positives, c.false_positives, c.members, c.nonmembers)
            result = await _run_audit(request, "counts", data, body.confidence, body.delta, mech, work, format)
        else:
            if body.member_scores is None or body.nonmember_scores is None:
                raise ValueError("give member_scores and nonmember_scores, or counts")
            result = await _run_audit(request, "scores", (body.member_scores, body.nonmember_scores),
                                      body.confidence, body.delta, mech, work, format)
        return _answer(result, format)
    except ValueError as exc:
        return api_error(exc)


@router.post("/api/audit/upload", tags=["audit"])
async def audit_upload_api(request: Request, members: UploadFile = File(...), nonmembers: UploadFile = File(...),
                           mechanism: Optional[str] = Form(None), confidence: float = Form(0.95),
                           delta: float = Form(1e-5), format: str = Query("json", description="json, csv, md, html or pdf")):
    """The page's JSON twin: two CSV files of scores (multipart), optionally a mechanism
    spec (JSON text)."""
    big = _too_large(request)
    if big is not None:
        return big
    limits: Limits = request.app.state.limits
    try:
        _check_format(format)
        m = await run_light(_scores, await _read_upload(members, "members"), "members", members.filename)
        n = await run_light(_scores, await _read_upload(nonmembers, "nonmembers"), "nonmembers", nonmembers.filename)
        mech, work = await run_light(_mechanism, mechanism, limits)
        result = await _run_audit(request, "scores", (m, n), confidence, delta, mech, work, format)
        return _answer(result, format)
    except ValueError as exc:
        return api_error(exc)


@router.post("/api/audit/simulate", tags=["audit"])
async def audit_simulate_api(request: Request, body: SimulateRequest) -> dict:
    """Simulate the optimal canary attack against ``mechanism`` and audit it against
    ``declared`` (default: the mechanism itself)."""
    limits: Limits = request.app.state.limits
    try:
        ran, declared, work = await run_light(_simulation_inputs, body.mechanism, body.declared, body.trials, limits)
        out = await run_heavy(request, simulate_job, ran, declared, body.trials, body.seed, body.confidence,
                              body.delta, _discretization(limits), limits.budget, "json", work=work)
        out["simulated"] = {k: out["simulated"][k] for k in ("mechanism", "trials", "seed", "score")}
        return finite(out)
    except ValueError as exc:
        return api_error(exc)
