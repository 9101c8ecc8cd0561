"""Audit page: upload an attack's scores (CSV) or type published counts, optionally with the
certified mechanism, or simulate the optimal canary attack; see the verdict and the
log-log ROC. JSON twins under /api/audit. No maths here: fdpkit.audit does it all."""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Optional, Union

from fastapi import APIRouter, File, Form, Query, Request, UploadFile
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from fdpkit.accounting import DISCRETIZATION_DEFAULT
from fdpkit.audit import audit, audit_from_counts, read_scores_csv, simulate_attack
from fdpkit.mechanisms import Composed, Mechanism, Repeated, mechanism_from_dict
from fdpkit.privacy import privacy_report
from fdpkit.report.audit import audit_roc, audit_tables
from fdpkit.report.figures import svg_inline
from fdpkit.report.render import table_html
from fdpkit.report import FORMATS, render_document
from fdpkit.web.common import (MEDIA, FormErrors, Limits, api_error, download, finite, page, parse_float, parse_int,
                               run_bounded)
from fdpkit.web.routers.report import check_limits

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
            "ran": '{"kind": "gaussian", "sigma": 0.5}', "mechanism": '{"kind": "gaussian", "sigma": 1.0}'}

FiniteFloat = Annotated[float, Field(allow_inf_nan=False)]
Count = Annotated[int, Field(ge=0, le=10**15)]


class CountsBody(BaseModel):
    model_config = ConfigDict(extra="forbid")
    true_positives: list[Count] = Field(..., min_length=1, max_length=MAX_THRESHOLDS)
    false_positives: list[Count] = Field(..., min_length=1, max_length=MAX_THRESHOLDS)
    members: Union[Count, list[Count]] = Field(...)
    nonmembers: Union[Count, list[Count]] = Field(...)


class AuditRequest(BaseModel):
    """Scores (higher = member) or counts, and optionally the certified mechanism."""

    model_config = ConfigDict(extra="forbid")
    member_scores: Optional[list[FiniteFloat]] = Field(None, max_length=MAX_SCORES)
    nonmember_scores: Optional[list[FiniteFloat]] = Field(None, max_length=MAX_SCORES)
    counts: Optional[CountsBody] = None
    mechanism: Optional[dict[str, Any]] = None
    confidence: float = Field(0.95, gt=0, lt=1, allow_inf_nan=False)
    delta: float = Field(1e-5, ge=0, lt=1, allow_inf_nan=False)


class SimulateRequest(BaseModel):
    """The optimal canary attack against ``mechanism``, audited against ``declared`` (default:
    the same mechanism)."""

    model_config = ConfigDict(extra="forbid")
    mechanism: dict[str, Any]
    declared: Optional[dict[str, Any]] = None
    trials: int = Field(10_000, ge=1, le=MAX_TRIALS)
    seed: int = Field(0, ge=0, le=2**63 - 1)
    confidence: float = Field(0.95, gt=0, lt=1, allow_inf_nan=False)
    delta: float = Field(1e-5, ge=0, lt=1, allow_inf_nan=False)


# ------------------------------------------------------------------------------------ helpers
def _releases(m: Mechanism) -> int:
    """Number of elementary releases (bounds the simulation's work)."""
    if isinstance(m, Composed):
        return sum(_releases(p) for p in m.parts)
    if isinstance(m, Repeated):
        return m.times * _releases(m.inner)
    if hasattr(m, "phases"):  # DP-SGD: one release per step
        return int(m.steps)
    inner = getattr(m, "inner", None)
    return _releases(inner) if inner is not None else 1


def _mechanism(spec: Any, limits: Limits, name: str = "mechanism") -> Mechanism | None:
    if spec is None or (isinstance(spec, str) and not spec.strip()):
        return None
    if isinstance(spec, str):
        try:
            spec = json.loads(spec)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{name} is not valid JSON: {exc.msg}") from None
    mech = mechanism_from_dict(spec)
    check_limits(mech, max(DISCRETIZATION_DEFAULT, limits.min_discretization), limits)
    return mech


def _certified(mech: Mechanism | None, limits: Limits) -> Any:
    """The privacy report to audit against, at this server's discretization (None stays None)."""
    if mech is None:
        return None
    return privacy_report(mech, discretization=max(DISCRETIZATION_DEFAULT, limits.min_discretization))


def _check_simulation(mech: Mechanism, trials: int) -> None:
    draws = trials * _releases(mech)
    if draws > MAX_SIMULATED_DRAWS:
        raise ValueError(f"trials x releases must be at most {MAX_SIMULATED_DRAWS:,} on this server, got {draws:,}")


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
    """JSON (the result's dict), or the audit document in another report format."""
    if format == "json":
        return finite(result.to_dict())
    return download(render_document(result.document(), format), f"fdpkit-audit.{format}", MEDIA[format])


def _check_format(format: str) -> None:
    if format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {format!r}")


def _view(result: Any) -> dict:
    return {"data": result.to_dict(), "verdict": result.verdict, "violation": result.violation,
            "tables": [table_html(t) for t in audit_tables(result)],
            "figure": svg_inline(lambda ax: audit_roc(ax, result))}


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
@router.get("/audit", include_in_schema=False)
async def audit_page(request: Request):
    return page(request, "audit.html", {"values": DEFAULTS, "errors": {}, "result": None})


@router.post("/audit", include_in_schema=False)
async def audit_submit(request: Request):
    big = _too_large(request)
    if big is not None:
        return big
    limits: Limits = request.app.state.limits
    form = await request.form(max_part_size=MAX_UPLOAD_BYTES)
    errors = FormErrors()
    mode = str(form.get("mode") or "scores")
    values = {k: v for k, v in form.items() if isinstance(v, str)}
    values.setdefault("mode", mode)
    conf = parse_float(form, "confidence", errors, default=0.95)
    delta = parse_float(form, "delta", errors, default=1e-5)
    result = simulation = None
    try:
        if mode not in ("scores", "counts", "simulate"):
            raise ValueError(f"mode must be scores, counts or simulate, got {mode!r}")
        if mode == "simulate":
            ran = _mechanism(form.get("ran"), limits, "ran")
            if ran is None:
                errors["ran"] = "ran is required: the mechanism that runs, as a JSON spec"
            trials = parse_int(form, "trials", errors, default=20000)
            seed = parse_int(form, "seed", errors, default=0)
            declared = _mechanism(form.get("mechanism"), limits)
            if not errors:
                if not 1 <= trials <= MAX_TRIALS:
                    raise ValueError(f"trials must be in [1, {MAX_TRIALS:,}] on this server, got {trials}")
                _check_simulation(ran, trials)

                def work():
                    sim = simulate_attack(ran, trials=trials, seed=seed)
                    return sim, sim.audit(confidence=conf, delta=delta, mechanism=_certified(declared or ran, limits))

                sim, result = await run_bounded(work, limits)
                simulation = {"label": ran.label(), "score": sim.score, "trials": trials,
                              "tpr_1e3": result.empirical_tpr_at(1e-3), "tpr_1e2": result.empirical_tpr_at(1e-2)}
        elif mode == "counts":
            lists = {k: _counts_list(form, k, errors) for k in
                     ("true_positives", "false_positives", "n_members", "n_nonmembers")}
            mech = _mechanism(form.get("mechanism"), limits)
            if not errors:
                result = await run_bounded(lambda: audit_from_counts(
                    lists["true_positives"], lists["false_positives"], lists["n_members"], lists["n_nonmembers"],
                    confidence=conf, delta=delta, mechanism=_certified(mech, limits)), limits)
        else:
            m_up, n_up = form.get("members"), form.get("nonmembers")
            data = {}
            for name, up in (("members", m_up), ("nonmembers", n_up)):
                try:
                    data[name] = _scores(await _read_upload(up, name), name, getattr(up, "filename", None))
                except ValueError as exc:
                    errors[name] = str(exc)
            mech = _mechanism(form.get("mechanism"), limits)
            if not errors:
                result = await run_bounded(lambda: audit(data["members"], data["nonmembers"], confidence=conf,
                                                         delta=delta, mechanism=_certified(mech, limits)), limits)
    except ValueError as exc:
        errors[_field_of(str(exc))] = str(exc)
    context = {"values": values, "errors": errors, "result": _view(result) if result is not None else None,
               "simulation": simulation}
    return page(request, "audit.html", context, status=422 if errors else 200)


# ------------------------------------------------------------------------------------ API
@router.post("/api/audit", tags=["audit"])
async def audit_api(request: Request, body: AuditRequest, format: str = Query("json", description="json, csv, md, html or pdf")):
    """Audit scores (``member_scores`` and ``nonmember_scores``) or published ``counts``,
    optionally against a certified ``mechanism``: lower bounds on mu and epsilon at delta,
    and the violation verdict."""
    limits: Limits = request.app.state.limits
    try:
        _check_format(format)
        mech = _mechanism(body.mechanism, limits)
        if body.counts is not None:
            if body.member_scores is not None or body.nonmember_scores is not None:
                raise ValueError("give either member_scores and nonmember_scores, or counts, not both")
            c = body.counts
            result = await run_bounded(lambda: audit_from_counts(
                c.true_positives, c.false_positives, c.members, c.nonmembers,
                confidence=body.confidence, delta=body.delta, mechanism=_certified(mech, limits)), limits)
        else:
            if body.member_scores is None or body.nonmember_scores is None:
                raise ValueError("give member_scores and nonmember_scores, or counts")
            result = await run_bounded(lambda: audit(body.member_scores, body.nonmember_scores,
                                                     confidence=body.confidence, delta=body.delta,
                                                     mechanism=_certified(mech, limits)), limits)
        return _answer(result, format)
    except ValueError as exc:
        return api_error(str(exc))


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
        m = _scores(await _read_upload(members, "members"), "members", members.filename)
        n = _scores(await _read_upload(nonmembers, "nonmembers"), "nonmembers", nonmembers.filename)
        mech = _mechanism(mechanism, limits)
        result = await run_bounded(lambda: audit(m, n, confidence=confidence, delta=delta,
                                                 mechanism=_certified(mech, limits)), limits)
        return _answer(result, format)
    except ValueError as exc:
        return api_error(str(exc))


@router.post("/api/audit/simulate", tags=["audit"])
async def audit_simulate_api(request: Request, body: SimulateRequest) -> dict:
    """Simulate the optimal canary attack against ``mechanism`` and audit it against
    ``declared`` (default: the mechanism itself)."""
    limits: Limits = request.app.state.limits
    try:
        ran = _mechanism(body.mechanism, limits)
        declared = _mechanism(body.declared, limits) or ran
        _check_simulation(ran, body.trials)

        def work():
            sim = simulate_attack(ran, trials=body.trials, seed=body.seed)
            out = sim.audit(confidence=body.confidence, delta=body.delta,
                            mechanism=_certified(declared, limits)).to_dict()
            out["simulated"] = {"mechanism": ran.to_dict(), "trials": sim.trials, "seed": sim.seed,
                                "score": sim.score}
            return out

        return finite(await run_bounded(work, limits))
    except ValueError as exc:
        return api_error(str(exc))
