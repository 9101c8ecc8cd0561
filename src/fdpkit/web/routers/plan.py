"""Plan page: privacy-first and utility-first guides with a power plot."""

from __future__ import annotations

import math

from fastapi import APIRouter, Request

import fdpkit as fp
from fdpkit.report import plots
from fdpkit.report.figures import svg_inline
from fdpkit.web.common import render_page, run_light, FormErrors, api_error, field_of, finite, page, parse_float
from fdpkit.web.models import PlanRequest

router = APIRouter()
FIELDS = ("effect", "n", "sd", "alpha", "data_range", "required_power", "max_relative_loss", "prior", "fpr",
          "max_relative_risk", "max_attack_power", "max_power", "max_risk")


def run_plan(p: dict):
    spec = fp.ZTestSpec(effect=p["effect"], n=p["n"], sd=p["sd"], alpha=p["alpha"], data_range=p["data_range"])
    if p["guide"] == "privacy_first":
        plan = fp.privacy_first(blatant_disclosure_ok=p["blatant_disclosure_ok"],
                                high_confidence_ok=p["high_confidence_ok"],
                                max_relative_risk=p.get("max_relative_risk"),
                                max_attack_power=p.get("max_attack_power"), fpr=p["fpr"], analysis=spec)
    else:
        plan = fp.utility_first(analysis=spec, required_power=p.get("required_power"),
                                max_relative_loss=p.get("max_relative_loss"), prior=p["prior"], fpr=p["fpr"])
    return plan, spec


def power_svg(spec) -> str:
    return svg_inline(lambda ax: plots.power_vs_mu(ax, lambda m: spec.power(mu=m),
                                                   nonprivate=spec.power(mu=math.inf), label=f"n = {spec.n:g}"))


@router.get("/plan", include_in_schema=False)
async def plan_page(request: Request):
    return await render_page(request, "plan.html", {"values": {"guide": "utility_first", "effect": 0.2, "n": 100, "sd": 0.25,
                                                   "alpha": 0.01, "data_range": 1, "max_relative_loss": 0.01,
                                                   "prior": 0.01, "fpr": 0.001, "high_confidence_ok": "on"},
                                        "errors": {}, "result": None})


@router.post("/plan", include_in_schema=False)
async def plan_submit(request: Request):
    form = await request.form()
    errors = FormErrors()
    p = {"guide": form.get("guide") or "utility_first",
         "blatant_disclosure_ok": form.get("blatant_disclosure_ok") == "on",
         "high_confidence_ok": form.get("high_confidence_ok") == "on"}
    for k, d in (("effect", None), ("n", None), ("sd", None), ("alpha", 0.05), ("data_range", 1.0),
                 ("prior", 0.01), ("fpr", 1e-3)):
        p[k] = parse_float(form, k, errors, default=d)
    for k in ("required_power", "max_relative_loss", "max_relative_risk", "max_attack_power"):
        p[k] = parse_float(form, k, errors, required=False)
    result = figure = None
    if not errors:
        try:
            plan, spec = await run_light(run_plan, p)
            result = finite(plan.to_dict())
            figure = await run_light(power_svg, spec)
        except ValueError as exc:
            errors[field_of(str(exc), FIELDS)] = str(exc)
    return await render_page(request, "plan.html", {"values": dict(form), "errors": errors, "result": result,
                                        "guide": p["guide"], "figure": figure})


@router.post("/api/plan", tags=["plan"])
async def plan_api(body: PlanRequest) -> dict:
    """Privacy-first or utility-first plan for a one-sample Z-test."""
    try:
        plan, _ = await run_light(run_plan, body.model_dump())
        return finite(plan.to_dict())
    except ValueError as exc:
        return api_error(str(exc))
