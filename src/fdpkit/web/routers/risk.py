"""Risk explorer: a guarantee read as attack risk, in plain language beside the numbers."""

from __future__ import annotations

import math

from fastapi import APIRouter, Request

import fdpkit as fp
from fdpkit.report import plots
from fdpkit.report.figures import svg_inline
from fdpkit.web.common import FormErrors, api_error, field_of, finite, page, parse_float
from fdpkit.web.models import RiskRequest

router = APIRouter()
FIELDS = ("mu", "epsilon", "delta", "rho", "prior", "fpr", "guarantee")
MODES = {
    "none": "No blatant disclosure and bounded risk: a positive attack can raise an attacker's belief by "
            "at most a fixed factor.",
    "graceful": "No output reveals membership with certainty, but a lucky attacker can become very "
                "confident. Judge the risk at a realistic false-positive rate.",
    "catastrophic": "Some outputs reveal membership with certainty (blatant disclosure). Avoid for "
                    "releases to untrusted recipients.",
}


def reading(guarantee: str, mu, epsilon, delta, prior: float, fpr: float, rho=None) -> tuple[dict, object]:
    if guarantee == "zcdp":
        if rho is None:
            raise ValueError("rho is required for a rho-zCDP guarantee")
        curve, name = fp.tradeoff_curve(fp.ZCDP(rho)), f"ρ = {rho:g} zCDP"
    elif guarantee == "mu":
        if mu is None:
            raise ValueError("mu is required for a mu-GDP guarantee")
        curve, name = fp.GaussianCurve(mu), f"μ = {mu:g} Gaussian DP"
    else:
        if epsilon is None:
            raise ValueError("epsilon is required")
        d = 0.0 if guarantee == "epsilon" else (delta if delta is not None else 1e-5)
        curve, name = fp.EpsDeltaCurve(epsilon, d), f"(ε = {epsilon:g}, δ = {d:g})-DP"
    tpr = fp.attack_power(curve, fpr)
    post = fp.posterior(curve, prior, fpr)
    rho = fp.relative_risk(curve, fpr_min=fpr)
    mode = fp.failure_mode(curve)
    plain = [
        f"Among attacks that wrongly flag at most {fpr:.2%} of non-members, the best one correctly "
        f"flags at most {tpr:.2%} of members ({fp.multiplicative_advantage(curve, fpr):.1f} times the "
        "false-positive rate).",
        f"If an attacker starts {prior:.1%} sure that a person is in the data, a positive attack "
        f"can raise that to at most {post:.1%}.",
        MODES[mode],
    ]
    out = {"guarantee": name, "fpr": fpr, "prior": prior, "attack_power": tpr, "posterior": post,
           "relative_risk_at_fpr": rho, "relative_risk": fp.relative_risk(curve),
           "advantage": fp.advantage(curve), "failure_mode": mode, "plain_language": plain}
    return out, curve


@router.get("/risk", include_in_schema=False)
async def risk_page(request: Request):
    return page(request, "risk.html", {"values": {"guarantee": "mu", "mu": 1, "prior": 0.01, "fpr": 0.001},
                                        "errors": {}, "result": None})


@router.post("/risk", include_in_schema=False)
async def risk_submit(request: Request):
    form = await request.form()
    errors = FormErrors()
    guarantee = form.get("guarantee") or "mu"
    vals = {k: parse_float(form, k, errors, required=False) for k in ("mu", "epsilon", "delta", "rho")}
    prior = parse_float(form, "prior", errors, default=0.01)
    fpr = parse_float(form, "fpr", errors, default=1e-3)
    result = figs = None
    if guarantee not in ("mu", "epsilon", "epsilon_delta", "zcdp"):
        errors["guarantee"] = f"guarantee must be mu, epsilon, epsilon_delta or zcdp, got {guarantee!r}"
    if not errors:
        try:
            if fpr is not None and not 0 < fpr < 1:
                raise ValueError(f"fpr must be in (0, 1), got {fpr!r}")
            result, curve = reading(guarantee, vals["mu"], vals["epsilon"], vals["delta"], prior, fpr, vals["rho"])
            figs = [("Posterior after a positive attack", svg_inline(lambda ax: plots.posterior_vs_prior(ax, curve))),
                    ("Log-log ROC", svg_inline(lambda ax: plots.roc_loglog(ax, {"guarantee": curve})))]
        except ValueError as exc:
            errors[field_of(str(exc), FIELDS)] = str(exc)
    return page(request, "risk.html", {"values": dict(form), "errors": errors, "result": result, "figures": figs})


@router.post("/api/risk", tags=["risk"])
async def risk_api(body: RiskRequest) -> dict:
    """Attack-risk reading of mu-GDP, epsilon-DP, (epsilon, delta)-DP or rho-zCDP."""
    try:
        out, _ = reading(body.guarantee, body.mu, body.epsilon, body.delta, body.prior, body.fpr, body.rho)
        return finite(out)
    except ValueError as exc:
        return api_error(str(exc))
