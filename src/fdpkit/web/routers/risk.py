"""Risk explorer: a guarantee read as attack risk, in plain language beside the numbers."""

from __future__ import annotations

from fastapi import APIRouter, Request

from fdpkit.report import plots
from fdpkit.report.build import failure_mode_words
from fdpkit.risk.grade import DEFINITIONS, LABELS, cap_for_failure, grade_for_tpr
from fdpkit.risk.reading import RANGE_NOTE, plain_risk_words, read_guarantee
from fdpkit.risk._range_bound import RangeBound
from fdpkit.report.figures import svg_inline
from fdpkit.web.common import form_status, render_page, run_light, FormErrors, api_error, field_of, finite
from fdpkit.web.forms import parse_form
from fdpkit.web.models import RiskRequest
from fdpkit.web.json_numbers import CheckedJSONRoute
from fdpkit.web.run_link import RUN, RUN_SIG, run_figures
from fdpkit.web.signed_links import app_key

router = APIRouter(route_class=CheckedJSONRoute)
FIELDS = ("mu", "epsilon", "delta", "rho", "prior", "fpr", "guarantee", "n")
#: A report's range of its fitted μ, carried by its Risk link (hidden in the form, no signature
#: needed: they can only add a warning and raise figures; a link without them reads μ alone).
RANGE = ("mu_fpr_min", "mu_tau")
#: Said where the page quotes a report's own figures for its run (:mod:`fdpkit.web.run_link`).
OWN_NOTE = ("These are the privacy report's own certified figures for this run (its accountant's trade-off curve, "
            "at FPR 0.001 and a 1% prior, carried by the report's link under this server's signature; this page does "
            "not recompute them): quote them for the run. Read through its μ alone, to compare it with other "
            "guarantees, it reads the same or more (below).")
SCALE = tuple(zip(LABELS, DEFINITIONS))


def reading(guarantee: str, mu, epsilon, delta, prior: float, fpr: float, rho=None, n=None, mu_fpr_min=None,
            mu_tau=None):
    """The library's reading (grade, sentences, warnings) and what its plots draw: with a fitted
    μ's range the run's certified bound (``certificate``, the curve of its numbers), else the curve."""
    r = read_guarantee(guarantee, mu=mu, epsilon=epsilon, delta=delta, prior=prior, fpr=fpr, rho=rho, n=n,
                       mu_fpr_min=mu_fpr_min, mu_tau=mu_tau)
    return r.to_dict(), (r.certificate if r.certificate is not None else r.curve)


@router.get("/risk", include_in_schema=False)
async def risk_page(request: Request):
    """The form; with query parameters (a permalink, e.g. ``/risk?guarantee=epsilon&epsilon=8``)
    the answer, rendered on the server."""
    if any(k in request.query_params for k in FIELDS):
        return await _answer(request, request.query_params)
    return await render_page(request, "risk.html", {"values": {"guarantee": "mu", "mu": 1, "prior": 0.01, "fpr": 0.001},
                                                    "errors": {}, "result": None, "scale": SCALE})


@router.post("/risk", include_in_schema=False)
async def risk_submit(request: Request):
    return await _answer(request, await request.form())


def links(values: dict) -> dict[str, str]:
    """Query strings of the same guarantee on the Convert and Calculator pages (permalinks)."""
    from urllib.parse import urlencode

    g = values.get("guarantee")
    eps, delta = values.get("epsilon"), values.get("delta")
    out = {}
    if g in ("epsilon", "epsilon_delta") and eps:
        conv = {"epsilon": eps, **({"delta": delta} if g == "epsilon_delta" and delta else {})}
        out["convert"] = "/convert?" + urlencode(conv)
        out["calculator"] = "/calculator?" + urlencode({"mode": "gaussian", "epsilon": eps,
                                                        "delta": delta if g == "epsilon_delta" and delta else 1e-5})
    elif g == "mu" and values.get("mu"):  # a report's range rides along (Convert's Risk link passes it back)
        out["convert"] = "/convert?" + urlencode({"mu": values["mu"], **{k: values[k] for k in RANGE if values.get(k)}})
    elif g == "zcdp" and values.get("rho"):
        out["convert"] = "/convert?" + urlencode({"rho": values["rho"]})
    return out


async def _answer(request: Request, form):
    errors = FormErrors()
    # one schema for the form and the JSON API (RiskRequest): every error at once, by field
    body, found = parse_form(RiskRequest, form, fields=FIELDS + RANGE)
    errors.update(found)
    if "n" in errors:
        errors["n"] = f"n (people in the data) must be a positive count, got {form.get('n')!r}"
    result = figs = None
    # the range applies to μ only: a reader who switches the guarantee reads it without
    rng = (body.mu_fpr_min, body.mu_tau) if body is not None and body.guarantee == "mu" else (None, None)
    if not errors and body is not None:
        try:
            result, curve = await run_light(reading, body.guarantee, body.mu, body.epsilon, body.delta, body.prior,
                                            body.fpr, body.rho, body.n, *rng)
            figs = await run_light(risk_figures, curve, body.prior)
        except ValueError as exc:
            errors[field_of(exc, FIELDS + RANGE)] = str(exc)
    carried = _carried(form, errors)
    own, signed = run_figures(app_key(request.app), form, *((body.mu, body.prior, body.fpr) if body is not None
                                                           and body.guarantee == "mu" else (None, None, None)))
    if result is not None and own is not None:
        result = _as_run(result, own)
    if signed:  # the run's fields ride along (a changed link's are dropped)
        carried.update({k: str(form.get(k)) for k in (*RUN, RUN_SIG)})
    values = dict(form)
    if body is not None:  # the prior and FPR the answer used, shown in the form (a report's link gives none)
        for key in ("prior", "fpr"):
            if str(values.get(key) or "").strip() == "":
                values[key] = f"{getattr(body, key):g}"
    return await render_page(request, "risk.html", {"values": values, "errors": errors, "result": result,
                                                    "figures": figs, "scale": SCALE,
                                                    "links": links({**{k: v for k, v in dict(form).items()
                                                                       if k not in RANGE}, **carried}),
                                                    "carried": carried, "run_unverified": signed is False},
                             status=form_status(errors))


def _as_run(result: dict, own: dict) -> dict:
    """The reading with the run's own figures (its report's, checked by the caller) in place of
    those read through μ, which stay in ``mu_alone`` beside them; the grade is the run's
    (:func:`fdpkit.risk.grade.grade` of its TPR and failure mode, as the report's)."""
    keys = ("attack_power", "posterior", "relative_risk_at_fpr", "relative_risk", "advantage")
    mu_alone = {k: result[k] for k in keys}
    mu_alone["failure"] = (result.get("range") or {}).get("failure") or result["failure_mode"]
    words = plain_risk_words(tpr=own["tpr"], posterior=own["posterior"], fpr=result["fpr"], prior=result["prior"],
                             relative_risk_at_fpr=own["relative_risk_at_fpr"], failure_mode=own["failure_mode"],
                             relative_risk=own["relative_risk"], disclosure=own["disclosure"])
    grade = cap_for_failure(grade_for_tpr(min(1.0, own["tpr"])), own["failure_mode"], own["disclosure"])
    notes = [OWN_NOTE, *(n for n in result["notes"] if n != RANGE_NOTE)]
    # a warning that the reading is outside μ's range is of the μ reading, not of the run's figures
    warnings = [w for w in result["warnings"] if not (result.get("range") and w == result["range"].get("note"))]
    return {**result, "attack_power": own["tpr"], "posterior": own["posterior"],
            "relative_risk_at_fpr": own["relative_risk_at_fpr"], "relative_risk": own["relative_risk"],
            "advantage": own["advantage"], "failure_mode": own["failure_mode"], "plain_language": list(words),
            "grade": grade.to_dict(), "notes": notes, "headline": f"{result['guarantee']}, the report's run: {grade.label}.", "warnings": warnings,
            "own": {"failure": failure_mode_words(own["failure_mode"], own["relative_risk"]), "mu_alone": mu_alone}}


def _carried(form, errors: FormErrors) -> dict[str, str]:
    """The range fields the form carries on (hidden): none when either is wrong, whose error is
    then the form's (422, said at the top: the fields are not shown), so that submitting again
    reads μ alone rather than failing on a field the reader cannot see or mend."""
    bad = [k for k in RANGE if k in errors]
    if bad:
        said = "; ".join(errors.pop(k) for k in bad)
        errors["form"] = ((errors["form"] + " ") if errors.get("form") else "") + (f"This link's range of the report's μ is not valid ({said}); it was dropped. "
                          "Open Risk again from the report, or submit to read μ alone.")
        return {}
    return {k: str(form.get(k)).strip() for k in RANGE if form.get(k) not in (None, "")}


def risk_figures(curve, prior: float) -> list[tuple[str, str]]:
    """Posterior against FPR, precision against recall and the log-log ROC of a guarantee, or of
    the run's certified bound (a fitted μ read with its range: the ROC adds μ-GDP alone, dashed)."""
    priors = (prior, 0.1, 0.5) if prior not in (0.1, 0.5) else (0.01, 0.1, 0.5)
    bound = isinstance(curve, RangeBound)
    name, of = ("the run's bound (μ, τ beyond its range)", ": the run's certified bound") if bound else ("guarantee", "")
    mu = curve.mu if bound else None
    return [(cap, svg_inline(draw, title=cap)) for cap, draw in (
        (f"Posterior after a positive attack against the attack's FPR (de Fondeville Fig. 2){of}",
         lambda ax: plots.posterior_vs_fpr(ax, curve, priors=priors)),
        (f"Worst-case attack precision against recall (Kulynych & Honkela Figs. 2a, 5a){of}",
         lambda ax: plots.precision_vs_recall(ax, {name: curve})),
        (f"Log-log ROC: attack TPR against FPR{of}", lambda ax: plots.roc_loglog(ax, {name: curve}, mu=mu)))]


@router.post("/api/risk", tags=["risk"])
async def risk_api(body: RiskRequest) -> dict:
    """Attack-risk reading of mu-GDP, epsilon-DP, (epsilon, delta)-DP or rho-zCDP. A fitted mu's
    range (mu_fpr_min and mu_tau, a privacy report's guarantee.alpha_min and tau) makes a reading
    outside it the run's bound TPR <= 1 - G_mu(FPR) + tau, said in "range" and "warnings"."""
    try:
        out, _ = await run_light(reading, body.guarantee, body.mu, body.epsilon, body.delta, body.prior, body.fpr,
                                 body.rho, body.n, body.mu_fpr_min, body.mu_tau)
        return finite(out)
    except ValueError as exc:
        return api_error(exc)
