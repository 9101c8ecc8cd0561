"""Plan page: privacy-first and utility-first guides with a power plot."""

from __future__ import annotations

import math

from fastapi import APIRouter, Request

import fdpkit as fp
from fdpkit._inputs import parse_decimal
from fdpkit._numerics import safe_g
from fdpkit.errors import ParameterError
from fdpkit.report import plots
from fdpkit.report.figures import svg_inline
from fdpkit.web.common import (FormErrors, api_error, field_of, finite, parse_float, parse_int, form_status, render_page,
                                run_light)
from fdpkit.web.forms import conflicts, labels_of
from fdpkit.web.models import PlanRequest
from fdpkit.web.json_numbers import CheckedJSONRoute

router = APIRouter(route_class=CheckedJSONRoute)
GUIDANCE = fp.planning.GUIDANCE
FIELDS = ("statistic", "alternative", "groups", "tests", "correction", "effect", "n", "sd", "level", "data_range",
          "required_power", "max_relative_loss", "prior", "fpr", "max_relative_risk", "max_attack_power", "compare_n",
          "delta")
#: Old names of fields (permalinks made before the renames) -> the public names: deprecated,
#: still read (the public name wins where a link has both); the form shows the public names.
#: The library's own messages may also name ``max_power``/``max_risk`` (fdpkit.risk.privacy_first).
ALIASES = {"alpha": "level", "max_power": "max_attack_power", "max_risk": "max_relative_risk"}


def public_names(form) -> dict[str, str]:
    """The form's text fields with each old name (:data:`ALIASES`) read as its public name."""
    values = {k: v for k, v in form.items() if isinstance(v, str)}
    for old, new in ALIASES.items():
        value = values.pop(old, None)
        if value and not values.get(new):
            values[new] = value
    return values
#: The form starts with the choices and the settings that have a stated default (data range 1, one
#: test, the risk reading's prior and FPR); the analysis and the criterion are the user's (a
#: prefilled "Max relative power loss" would fight a typed "Required power"). The placeholders
#: show EXAMPLE and "Load example" fills it in (de Fondeville's worked example).
DEFAULTS = {"guide": "utility_first", "data_range": "1", "prior": "0.01", "fpr": "0.001", "high_confidence_ok": "on",
            "statistic": "mean", "alternative": "larger", "groups": "1", "tests": "1", "correction": "bonferroni"}
EXAMPLE = {"guide": "utility_first", "effect": "0.2", "n": "100", "sd": "0.25", "level": "0.01", "data_range": "1",
           "tests": "1", "max_relative_loss": "0.01", "prior": "0.01", "fpr": "0.001"}
#: Most sample sizes the Fig. 5 plots compare (the paper shows three).
MAX_COMPARE_N = 4


def parse_sizes(text: str, errors: FormErrors) -> tuple[float, ...]:
    """Other sample sizes to compare, "15, 500" (empty: none)."""
    parts = [x.strip() for x in str(text or "").replace(";", ",").split(",") if x.strip()]
    if len(parts) > MAX_COMPARE_N:
        errors["compare_n"] = f"compare n takes at most {MAX_COMPARE_N} sample sizes, got {len(parts)}"
        return ()
    out = []
    for x in parts:
        try:
            v = parse_decimal(x, "compare n")  # not "1_000" or other scripts' digits
        except ValueError:
            v = float("nan")
        if not (v > 0 and math.isfinite(v) and v <= 1e12):
            errors["compare_n"] = f"compare n must list positive sample sizes such as 15, 500, got {x!r}"
            return ()
        out.append(v)
    return tuple(out)


def run_plan(p: dict):
    spec = fp.ZTestSpec(effect=p["effect"], n=p["n"], sd=p["sd"], alpha=p["level"], data_range=p["data_range"],
                        statistic=p.get("statistic") or "mean", alternative=p.get("alternative") or "larger",
                        groups=int(p.get("groups") or 1), tests=int(p.get("tests") or 1),
                        correction=p.get("correction") or "bonferroni")
    if p["guide"] == "privacy_first":
        plan = fp.privacy_first(blatant_disclosure_ok=p["blatant_disclosure_ok"],
                                high_confidence_ok=p["high_confidence_ok"],
                                max_relative_risk=p.get("max_relative_risk"),
                                max_attack_power=p.get("max_attack_power"), fpr=p["fpr"], analysis=spec)
    else:
        plan = fp.utility_first(analysis=spec, required_power=p.get("required_power"),
                                max_relative_loss=p.get("max_relative_loss"), prior=p["prior"], fpr=p["fpr"])
    return plan, spec


def plan_answer(plan, delta: float | None) -> dict:
    """The plan's JSON, with ε at the release's budget's ``delta`` beside 1e-5's (utility first:
    ``epsilon_at_delta``, the shape of a report's, which ``fdpkit ledger propose -m`` reads)."""
    out = finite(plan.to_dict())
    if delta is not None and hasattr(plan, "epsilon_for_delta"):
        out["epsilon_at_delta"] = finite([{"delta": delta, "epsilon": plan.epsilon_for_delta(delta)}])
    return out


def power_svg(spec, marks: dict[float, str] | None = None) -> str:
    """Power of the planned test against μ, with the plan's own μ marked (``marks``)."""
    return svg_inline(lambda ax: plots.power_vs_mu(ax, lambda m: spec.power(mu=m),
                                                   nonprivate=spec.power(mu=math.inf), label=f"n = {spec.n:g}",
                                                   marks=marks),
                      title="Power of the planned test against μ")


@router.get("/plan", include_in_schema=False)
async def plan_page(request: Request):
    """The form; with query parameters (a permalink) the plan, rendered on the server."""
    if any(k in request.query_params for k in (*FIELDS, *ALIASES, "guide")):
        return await _answer(request, request.query_params)
    return await render_page(request, "plan.html", {"values": DEFAULTS, "errors": {}, "result": None,
                                                    "guidance": GUIDANCE, "example": EXAMPLE})


@router.post("/plan", include_in_schema=False)
async def plan_submit(request: Request):
    return await _answer(request, await request.form())


#: A yes/no box's values: the form sends "on" when it is ticked; the page's hidden field "off"
#: when not (a box left unticked sends nothing); hand-made links may spell them otherwise.
YES, NO = ("on", "true", "1", "yes"), ("off", "false", "0", "no", "")


def flag(form, name: str, default: bool, errors: FormErrors) -> bool:
    """A yes/no answer of the form: the last value sent (a ticked box's "on" comes after the
    hidden "off"); absent, the default of :class:`fdpkit.web.models.PlanRequest` (the
    library's and the CLI's), so that a link without the field means what the CLI does."""
    values = form.getlist(name) if hasattr(form, "getlist") else [form.get(name)] if name in form else []
    if not values:
        return default
    v = str(values[-1]).strip().lower()
    if v in YES:
        return True
    if v not in NO:
        errors["form"] = f"{name} must be on or off, got {values[-1]!r}"
    return False


async def _answer(request: Request, sent):
    errors = FormErrors()
    form = public_names(sent)
    p = {"guide": form.get("guide") or "utility_first",
         "blatant_disclosure_ok": flag(form, "blatant_disclosure_ok",
                                       PlanRequest.model_fields["blatant_disclosure_ok"].default, errors),
         "high_confidence_ok": flag(form, "high_confidence_ok",
                                    PlanRequest.model_fields["high_confidence_ok"].default, errors),
         "statistic": form.get("statistic") or "mean", "alternative": form.get("alternative") or "larger",
         "groups": form.get("groups") or "1", "correction": form.get("correction") or "bonferroni"}
    p["tests"] = parse_int(form, "tests", errors, required=False, default=1)
    if p["groups"] not in ("1", "2"):
        errors["groups"] = f"groups must be 1 or 2, got {p['groups']!r}"
    for k, d in (("effect", None), ("n", None), ("sd", None), ("data_range", 1.0), ("prior", 0.01), ("fpr", 1e-3)):
        p[k] = parse_float(form, k, errors, default=d)
    p["level"] = parse_float(form, "level", errors, default=0.05)
    for k in ("required_power", "max_relative_loss", "max_relative_risk", "max_attack_power"):
        p[k] = parse_float(form, k, errors, required=False)
    p["compare_n"] = parse_sizes(form.get("compare_n"), errors)
    p["delta"] = parse_float(form, "delta", errors, required=False, percent=False)
    if p["delta"] is not None and not 0 < p["delta"] < 1:
        errors["delta"] = f"δ of the release's budget must be between 0 and 1 (exclusive), got {p['delta']:g}"
    if p["guide"] == "utility_first":  # one criterion: both at once is answered on both fields, at once
        labels = labels_of(PlanRequest)
        for name, message in conflicts({k: form.get(k) for k in ("required_power", "max_relative_loss")},
                                       labels).items():
            errors.setdefault(name, message)
        if p["required_power"] is None and p["max_relative_loss"] is None and "required_power" not in errors \
                and "max_relative_loss" not in errors:
            errors["required_power"] = (f"Give {labels['required_power']} or {labels['max_relative_loss']} "
                                        "(one criterion)")
    result = figure = None
    figures = []
    if not errors:
        try:
            plan, spec = await run_light(run_plan, p)
            result = plan_answer(plan, p["delta"] if p["guide"] == "utility_first" else None)
            figure, figures = await run_light(plan_figures, plan, spec, p["compare_n"])
        except ValueError as exc:
            name = field_of(exc, (*FIELDS, *ALIASES))
            errors[ALIASES.get(name, name)] = str(exc)
    # the boxes as answered (a hidden "off" is no tick; a missing field is the default)
    values = {**form, **{k: "on" if p[k] else "" for k in ("blatant_disclosure_ok", "high_confidence_ok")}}
    return await render_page(request, "plan.html", {"values": values, "errors": errors, "result": result,
                                                    "guide": p["guide"], "figure": figure, "figures": figures,
                                                    "guidance": GUIDANCE, "example": EXAMPLE}, status=form_status(errors))


def planned_releases(plan) -> tuple[dict[float, str], dict[float, str]]:
    """The plan's own releases for its plots, each test's share, with the text the page prints
    for it: ``({μ: "1.142"}, {ε: "2.302"})``. Utility first: μ of the noise it prints
    (:attr:`~fdpkit.planning.UtilityFirstPlan.mu_of_noise`, rounded up as the page states it);
    privacy first: the noise of every option whose limit binds, μ for Gaussian noise and ε for
    Laplace noise (rounded up, as its options table states them)."""
    mus: dict[float, str] = {}
    epsilons: dict[float, str] = {}
    per_test = " per test" if plan.analysis is not None and plan.analysis.tests > 1 else ""
    if hasattr(plan, "mu_of_noise"):
        if plan.reachable and math.isfinite(plan.mu_min):
            mus[plan.mu_of_noise] = safe_g(plan.mu_of_noise, up=True) + per_test
        return mus, epsilons
    for o in plan.options:
        value = o.noise_value_per_test
        if value is not None and math.isfinite(o.value) and math.isfinite(value) and value > 0:
            (mus if o.parameter == "mu" else epsilons)[value] = o.value_text(total=False) + per_test
    return mus, epsilons


def plan_figures(plan, spec, compare_n: tuple = ()) -> tuple[str, list[tuple[str, str]]]:
    """The power-against-μ plot and the two planning figures (de Fondeville Fig. 5), each
    drawing the plan's own releases (:func:`planned_releases`, named as the page prints them)
    beside the reference μ = 0.1, 0.5 and 1 (at most four series in all), each legend naming
    them ``μ = 1.142 (planned)``; with ``compare_n`` one
    set of series per sample size (the plan's n first), the plan's releases alone."""
    own_mus, own_eps = planned_releases(plan)
    labels = {v: f"{text} (planned)" for v, text in {**own_mus, **own_eps}.items()}
    room = max(0, 4 - len(labels))
    refs = [m for m in (0.1, 0.5, 1.0) if f"{m:g}" not in own_mus.values()][:room]
    mus = tuple(own_mus) + tuple(refs)
    ns = None
    if compare_n:
        ns = (spec.n, *[n for n in compare_n if n != spec.n])
        mus = tuple(own_mus) or (() if own_eps else (1.0,))
    figures = [(cap, svg_inline(draw, title=cap)) for cap, draw in (
        ("Power against the true shift of the mean (de Fondeville Fig. 5)",
         lambda ax: plots.power_vs_effect(ax, spec, mus=mus, epsilons=tuple(own_eps), ns=ns, labels=labels)),
        ("ROC of the planned test under DP noise: power against the test level",
         lambda ax: plots.ztest_roc(ax, spec, mus=mus, epsilons=tuple(own_eps), ns=ns, labels=labels)))]
    return power_svg(spec, {m: f"planned μ = {text}" for m, text in own_mus.items()}), figures


@router.post("/api/plan", tags=["plan"])
async def plan_api(body: PlanRequest) -> dict:
    """Privacy-first or utility-first plan for a one-sample Z-test."""
    try:
        if body.delta is not None and body.guide == "privacy_first":
            raise ParameterError("delta applies to the utility-first guide (privacy first plans its options by "
                                 "attack risk)", "delta")
        plan, _ = await run_light(run_plan, body.model_dump())
        return plan_answer(plan, body.delta)
    except ValueError as exc:
        return api_error(exc)
