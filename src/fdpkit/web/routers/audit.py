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
from pydantic import ConfigDict, Field

from fdpkit.accounting import DISCRETIZATION_DEFAULT
from fdpkit.accounting.work_limits import AUDIT_WORK_PER_SCORE, SIMULATION_WORK_PER_DRAW
from fdpkit._inputs import parse_decimal
from fdpkit.audit import read_scores_csv
from fdpkit.errors import ParameterError
from fdpkit.audit.io import MAX_SCORES_WEB
from fdpkit.mechanisms import Mechanism, fold, mechanism_from_dict, training_run
from fdpkit.report import FORMATS
from fdpkit.web.common import (MEDIA, FormErrors, Limits, api_error, check_limits, download, finite, form_status, render_page,
                               run_heavy, run_light, spec_from_text)
from fdpkit.web.forms import parse_form
from fdpkit.web.models import RequestModel
from fdpkit.web.jobs import audit_counts_job, audit_scores_job, prepare, simulate_job
from fdpkit.web.names import audit_download_name
from fdpkit.web.score_store import MAX_BYTES as STORE_BYTES, MAX_ENTRIES as STORE_ENTRIES, ScoreStore
from fdpkit.web.json_numbers import CheckedJSONRoute
from fdpkit.web.repeated_fields import first_value

router = APIRouter(route_class=CheckedJSONRoute)

#: Largest accepted upload per file (bytes) and whole request (both files and fields).
MAX_UPLOAD_BYTES = 16 * 1024 * 1024
MAX_REQUEST_BYTES = 2 * MAX_UPLOAD_BYTES + 256 * 1024
#: The routes that take score files, and the body they may send (the server's edge holds
#: every other request to ``Limits.max_body_bytes``, 1 MB: far below one file of 1,000,000 scores).
UPLOAD_BODY_LIMITS = {"/audit": MAX_REQUEST_BYTES, "/audit/download": MAX_REQUEST_BYTES,
                      "/api/audit/upload": MAX_REQUEST_BYTES}
#: Most scores per class, counts (thresholds), and simulated trials x releases per request.
MAX_SCORES = MAX_SCORES_WEB  # (set with the CLI's and the Python API's in fdpkit.audit.io)
MAX_THRESHOLDS = 10_000
MAX_TRIALS = 200_000
MAX_SIMULATED_DRAWS = 50_000_000
FIELDS = ("members", "nonmembers", "true_positives", "false_positives", "n_members", "n_nonmembers",
          "mechanism", "ran", "confidence", "delta", "trials", "seed")
DEFAULTS = {"mode": "scores", "confidence": 0.95, "delta": 1e-5, "trials": 20000, "seed": 0}
#: The simulation's example: a placeholder and a "Load example" control, never a live value
SIMULATION_EXAMPLE = {"ran": '{"kind": "gaussian", "sigma": 0.5}', "trials": "20000", "seed": "0"}
#: example of a certified mechanism, shown as a placeholder (never a live default: typed counts
#: are judged against a mechanism only when the user gives one)
MECHANISM_EXAMPLE = '{"kind": "gaussian", "sigma": 1.0}'

FiniteFloat = Annotated[float, Field(allow_inf_nan=False)]
Count = Annotated[int, Field(ge=0, le=10**15)]


class CountsBody(RequestModel):
    model_config = ConfigDict(extra="forbid")
    true_positives: list[Count] = Field(..., min_length=1, max_length=MAX_THRESHOLDS)
    false_positives: list[Count] = Field(..., min_length=1, max_length=MAX_THRESHOLDS)
    members: Union[Count, list[Count]] = Field(...)
    nonmembers: Union[Count, list[Count]] = Field(...)


class AuditSettings(RequestModel):
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
    ``ran_name`` is the field of the mechanism that runs ("ran" on the page, where an error of
    either spec names its field: the page said "mechanism kind must be one of ..." for
    ``ran={}`` beside the certified mechanism, and a spec beyond the server's limits atop the
    form). Cheap: run in a thread."""
    try:
        ran, ran_work = _mechanism(ran_spec, limits, ran_name)
    except ValueError as exc:
        raise _of_field(exc, ran_name) if ran_name != "mechanism" else exc from None
    if ran is None:
        raise ValueError(f"{ran_name} is required: the mechanism that runs, as a JSON spec")
    try:
        declared, declared_work = _mechanism(declared_spec, limits)
    except ValueError as exc:
        raise _of_field(exc, "mechanism") if ran_name != "mechanism" else exc from None
    if declared is None:
        declared, declared_work = ran, ran_work
    return ran, declared, _check_simulation(ran, trials) + declared_work


def _of_field(error: ValueError, name: str) -> ParameterError:
    """``error`` as the refusal of the form field ``name``, its message led by the field's name
    (which the page places it by: :func:`_field_of`)."""
    text = str(error)
    return ParameterError(text if text.split(" ", 1)[0].rstrip(",:") == name else f"{name}: {text}", name)


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
        return [parse_decimal(s, name) for s in items]  # not "1_000" or other scripts' digits
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


def _answer(result: Any, format: str, inputs: dict | None = None):
    """The job's answer: JSON (the result's dict), or the audit document rendered in another
    report format (bytes, made in the worker), named from its ``inputs``."""
    if format == "json":
        return finite(result)
    return download(result, audit_download_name(inputs or {}, format), MEDIA[format])


def _inputs(kind: str, data: tuple, mech: Mechanism | None, confidence: float, delta: float,
            digest: str | None = None) -> dict:
    """What an audit was given, for its download's name and its JSON download: the scores'
    counts (and digest) or the counts' shape, the certified mechanism, the settings."""
    def one(x: Any) -> Any:
        return int(x) if not isinstance(x, (list, tuple)) else (int(x[0]) if len(set(x)) == 1 else "varying")

    if kind == "scores":
        out: dict[str, Any] = {"kind": "scores", "members": len(data[0]), "nonmembers": len(data[1])}
        if digest:
            out["digest"] = f"sha256-{digest}"
    else:
        out = {"kind": "counts", "thresholds": len(data[0]), "members": one(data[2]), "nonmembers": one(data[3])}
    if mech is not None:
        out["mechanism"] = mech.to_dict()
    return {**out, "confidence": confidence, "delta": delta}


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
    return head if head in (*FIELDS, "mode") else "form"


# ------------------------------------------------------------------------------------ page
#: Longest permalink a result carries (a longer one is left out).
MAX_PERMALINK = 4000
#: Said next to a score-file result: its link lasts while the server holds the scores.
HELD_NOTE = (f"Files cannot travel in a link: this one names the scores' digest, and works while this server holds "
             f"them (the last {STORE_ENTRIES} uploads, at most {STORE_BYTES // (1024 * 1024)} MiB, until it "
             f"restarts). The downloads carry the inputs: the digest, the number of scores and the settings.")


def score_store(app: Any) -> ScoreStore:
    """The app's store of uploaded scores (created on first use)."""
    store = getattr(app.state, "score_store", None)
    if store is None:
        store = app.state.score_store = ScoreStore()
    return store


@router.get("/audit", include_in_schema=False)
async def audit_page(request: Request):
    """The form; with query parameters of the counts or simulate mode (a permalink, e.g.
    ``/audit?mode=counts&true_positives=900&...``), or of held scores (``mode=scores&scores=<digest>``)
    the audit, rendered on the server."""
    q = request.query_params
    mode = _mode(q)
    if mode in ("counts", "simulate") or (mode == "scores" and q.get("scores")):
        return await _page_answer(request, q)
    values = {**DEFAULTS, **{k: v for k, v in q.items() if k in (*FIELDS, "mode")}}
    # a field of the form given twice is refused beside it (it was shown without a word, 200)
    errors = {k: m for k, m in FormErrors().items() if k in (*FIELDS, "mode", "scores")}
    return await render_page(request, "audit.html", {"values": values, "errors": errors, "result": None,
                                                     "example": SIMULATION_EXAMPLE}, status=form_status(errors))


@router.post("/audit", include_in_schema=False)
async def audit_submit(request: Request):
    """Scores (file uploads) are audited in place; counts and simulations also, and the page
    carries their permalink (``data-permalink``: the browser puts it in the address bar, so
    reload keeps the answer); scores' permalink names their digest (see :data:`HELD_NOTE`)."""
    big = _too_large(request)
    if big is not None:
        return big
    form = await request.form(max_part_size=MAX_UPLOAD_BYTES)
    return await _page_answer(request, form)


@router.post("/audit/download", include_in_schema=False)
async def audit_download(request: Request, format: str = Query("pdf")):
    """The page's result as a file named from its inputs (the form's fields as hidden inputs;
    scores by their digest): JSON (the result with its ``inputs``) or a report format."""
    big = _too_large(request)
    if big is not None:
        return big
    try:
        _check_format(format)
    except ValueError as exc:
        return api_error(exc)
    form = await request.form(max_part_size=MAX_UPLOAD_BYTES)
    answer = await _audit_form(request, form, format)
    if answer["errors"]:
        return api_error("; ".join(answer["errors"].values()))
    result, inputs = answer["result"], answer["inputs"]
    if format == "json":
        return finite({**result, "inputs": inputs})
    return _answer(result, format, inputs)


def _mode(form) -> str:
    """The form's mode, its first value where it is given twice (refused beside the radios)."""
    return first_value(form, "mode", "scores")


def permalink(form, digest: str | None = None) -> str | None:
    """``/audit?mode=counts&...`` of a counts or simulate form (blank fields left out), or of
    held scores by their ``digest``; None for scores not held or a link longer than
    :data:`MAX_PERMALINK`."""
    mode = _mode(form)
    if mode not in ("counts", "simulate", "scores") or (mode == "scores" and not digest):
        return None
    keys = {"counts": ("true_positives", "false_positives", "n_members", "n_nonmembers"),
            "simulate": ("ran", "trials", "seed"), "scores": ()}[str(mode)]
    query = urlencode({"mode": mode, **({"scores": digest} if mode == "scores" else {}),
                       **{k: form.get(k) for k in (*keys, "mechanism", "confidence", "delta")
                          if isinstance(form.get(k), str) and form.get(k)}})
    return f"/audit?{query}" if len(query) <= MAX_PERMALINK else None


async def _page_answer(request: Request, form):
    answer = await _audit_form(request, form, "view")
    errors, digest = answer["errors"], answer["digest"]
    held = digest is not None and score_store(request.app).get(digest) is not None
    context = {"values": answer["values"], "errors": errors, "result": answer["result"],
               "simulation": answer["simulation"], "example": SIMULATION_EXAMPLE,
               "permalink": permalink(form, digest if held else None) if answer["result"] else None,
               "held": digest if held else None, "held_note": HELD_NOTE, "inputs": answer["inputs"],
               "formats": FORMATS}
    return await render_page(request, "audit.html", context, status=form_status(errors))


async def _held_or_uploaded(request: Request, form, errors: FormErrors) -> tuple[tuple | None, str | None]:
    """The scores of a scores-mode form: the uploaded files (then held by their digest), or,
    with no file chosen, the scores held under the form's ``scores`` digest."""
    store = score_store(request.app)
    m_up, n_up = form.get("members"), form.get("nonmembers")
    chosen = any(getattr(up, "filename", None) for up in (m_up, n_up))
    digest = str(form.get("scores") or "").strip()
    if digest and not chosen:
        pair = store.get(digest)
        if pair is None:
            errors["members"] = ("These scores are no longer held on this server (it keeps the last "
                                 f"{STORE_ENTRIES} uploads until it restarts): choose the two files again")
            return None, None
        return pair, digest
    scores = {}
    for name, up in (("members", m_up), ("nonmembers", n_up)):
        try:
            raw = await _read_upload(up, name)
            scores[name] = await run_light(_scores, raw, name, getattr(up, "filename", None))
        except ValueError as exc:
            errors[name] = str(exc)
    if errors:
        return None, None
    pair = (scores["members"], scores["nonmembers"])
    return pair, await run_light(store.put, *pair)


async def _audit_form(request: Request, form, fmt: str) -> dict:
    """The audit a page form asks for, in ``fmt`` ("view" for the page, "json" or a report
    format for a download): {result, simulation, errors, values, inputs, digest}."""
    limits: Limits = request.app.state.limits
    errors = FormErrors()
    mode = _mode(form)
    values = {k: v for k, v in form.items() if isinstance(v, str)}
    values.setdefault("mode", mode)
    # the settings through the JSON API's schema (AuditSettings, SimulateSettings): errors at once
    simulate = mode == "simulate"
    settings, found = parse_form(SimulateSettings if simulate else AuditSettings, form,
                                 fields=("confidence", "delta", *(("trials", "seed") if simulate else ())))
    errors.update(found)
    conf = settings.confidence if settings is not None else 0.95
    delta = settings.delta if settings is not None else 1e-5
    result = simulation = inputs = digest = None
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
                                         _discretization(limits), limits.budget, fmt, work=work)
                inputs = {"kind": "simulate", "ran": ran.to_dict(), "trials": trials, "seed": seed,
                          **({"mechanism": declared.to_dict()} if declared is not ran else {}),
                          "confidence": conf, "delta": delta}
                if fmt == "view":
                    simulation = {**result["simulated"], "tpr_1e3": result["tpr_1e3"], "tpr_1e2": result["tpr_1e2"]}
        elif mode == "counts":
            lists = {k: _counts_list(form, k, errors) for k in
                     ("true_positives", "false_positives", "n_members", "n_nonmembers")}
            mech, work = await run_light(_mechanism, form.get("mechanism"), limits)
            if not errors:
                data = (lists["true_positives"], lists["false_positives"], lists["n_members"], lists["n_nonmembers"])
                result = await _run_audit(request, "counts", data, conf, delta, mech, work, fmt)
                inputs = _inputs("counts", data, mech, conf, delta)
        else:
            pair, digest = await _held_or_uploaded(request, form, errors)
            mech, work = await run_light(_mechanism, form.get("mechanism"), limits)
            if not errors and pair is not None:
                result = await _run_audit(request, "scores", pair, conf, delta, mech, work, fmt)
                inputs = _inputs("scores", pair, mech, conf, delta, digest)
    except ValueError as exc:
        errors[_field_of(str(exc))] = str(exc)
        result = simulation = None
    return {"result": result, "simulation": simulation, "errors": errors, "values": values, "inputs": inputs,
            "digest": digest}


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
            return _answer(result, format, _inputs("counts", data, mech, body.confidence, body.delta))
        else:
            if body.member_scores is None or body.nonmember_scores is None:
                raise ValueError("give member_scores and nonmember_scores, or counts")
            data = (body.member_scores, body.nonmember_scores)
            result = await _run_audit(request, "scores", data, body.confidence, body.delta, mech, work, format)
            return _answer(result, format, _inputs("scores", data, mech, body.confidence, body.delta))
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
        return _answer(result, format, _inputs("scores", (m, n), mech, confidence, delta))
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
