"""Convert page: epsilon -> mu under each semantics, (epsilon, delta) <-> mu, seed tables."""

from __future__ import annotations

import math

from fastapi import APIRouter, Request

import fdpkit as fp
from fdpkit._inputs import plausibility_warnings
from fdpkit.report import plots
from fdpkit.report.figures import svg_inline
from fdpkit.web.common import FormErrors, api_error, field_of, finite, parse_levels, form_status, render_page, run_light
from fdpkit.web.forms import parse_form
from fdpkit.web.models import ConvertRequest
from fdpkit.web.run_link import RUN, RUN_SIG
from fdpkit.web.signed_links import app_key, check
from fdpkit.web.json_numbers import CheckedJSONRoute

router = APIRouter(route_class=CheckedJSONRoute)
FIELDS = ("epsilon", "delta", "mu", "rho")
#: The form starts empty (a prefilled δ would turn a typed pure ε into (ε, δ), a prefilled μ would
#: add an answer nobody asked for); the placeholders show EXAMPLE and "Load example" fills it in.
EXAMPLE = {"epsilon": "1", "delta": "1e-5", "mu": "1"}
#: A report's own epsilon at one delta (its accountant's privacy profile), carried by the Report
#: page's "Convert this μ" link: quoted beside the epsilon that mu-GDP alone implies, and only
#: when the link's signature (``profile_sig``, :mod:`fdpkit.web.signed_links`) of the CARRIED
#: texts is the server's: a hand-made link's figure is never shown as the run's.
PROFILE_FIELDS = ("profile_epsilon", "profile_delta")
CARRIED = ("mu", *PROFILE_FIELDS)
#: The range of a report's fitted μ (unsigned: it can only add a warning and raise Risk's figures),
#: carried on to the Risk page as the report's own Risk link carries it.
RANGE = ("mu_fpr_min", "mu_tau")
#: The mu-vs-epsilon plot's level fields (Kulynych & Honkela Figs. 1-3 b/c), comma-separated lists.
RUN_CARRIED = (*RUN, RUN_SIG)
LEVEL_FIELDS = ("fpr_levels", "recall_levels", "delta_levels")


def conversions(epsilon: float | None, delta: float | None, mu: float | None, rho: float | None = None) -> dict:
    """All conversions the inputs allow (library calls only)."""
    out: dict = {}
    warnings = plausibility_warnings(mu=mu, epsilon=epsilon, delta=delta)
    if rho is not None:
        out["rho"] = {
            "rho": rho,
            "gaussian_mu": fp.gaussian_mu_from_rho(rho),
            "mu_bound": fp.mu_bound_from_rho(rho),
            "epsilon_at_delta": [{"delta": d, "epsilon": fp.epsilon_for_delta_from_rho(rho, d),
                                  "epsilon_classic": fp.classic_epsilon_for_delta_from_rho(rho, d)}
                                 for d in ((delta,) if delta else (1e-5, 1e-6, 1e-9))],
        }
    if mu is not None:
        out["mu_to_rho"] = {"mu": mu, "rho": fp.rho_from_gaussian_mu(mu)}
    if epsilon is not None:
        out["recommended_mu"] = fp.recommend_mu(epsilon, delta).to_dict()
        out["pure_epsilon_to_mu"] = [
            {"semantics": "any epsilon-DP mechanism (Gomez et al. Prop. 6.1)", "mu": fp.mu_from_pure_epsilon(epsilon)},
            *[{"semantics": f"multiplicative advantage at FPR {a:g} (K&H Prop. 3.1)",
               "mu": fp.mu_from_pure_epsilon(epsilon, fpr=a)} for a in (1e-2, 1e-3, 1e-5)],
            *[{"semantics": f"precision at recall {b:g} (K&H Prop. 3.2)",
               "mu": fp.mu_from_pure_epsilon(epsilon, recall=b)} for b in (1e-2, 1e-3, 1e-5)],
            {"semantics": "rule of thumb epsilon/5 (conservative, general purpose)", "mu": fp.mu_rule_of_thumb(epsilon, 5)},
            {"semantics": "rule of thumb epsilon/3 (low-probability events ignored)", "mu": fp.mu_rule_of_thumb(epsilon, 3)},
        ]
        if delta is not None:
            out["epsilon_delta_to_mu"] = {"epsilon": epsilon, "delta": delta,
                                          "mu": fp.mu_for_epsilon_delta(epsilon, delta)}
    if mu is not None:
        out["recommended_epsilon"] = fp.recommend_epsilon(mu, delta).to_dict()
        out["mu_to_epsilon"] = [{"delta": d, "epsilon": fp.epsilon_for_delta_from_mu(mu, d)}
                                for d in ((delta,) if delta else (1e-5, 1e-6, 1e-9))]
        if epsilon is not None:
            out["mu_to_delta"] = {"mu": mu, "epsilon": epsilon, "delta": fp.delta_for_epsilon_from_mu(mu, epsilon)}
    if epsilon is not None or mu is not None or rho is not None:
        out["verdict"] = verdict(epsilon, delta, mu, rho)
    out["warnings"] = warnings
    return out


def verdict(epsilon, delta, mu, rho) -> dict:
    """The same grade as the Risk explorer: worst case and, beside it, as a Gaussian mechanism
    (one plain sentence), with the Risk explorer's permalink."""
    from urllib.parse import urlencode

    from fdpkit.risk.reading import read_guarantee

    if epsilon is not None:
        kind, q = ("epsilon_delta", {"epsilon": epsilon, "delta": delta}) if delta else ("epsilon", {"epsilon": epsilon})
    elif mu is not None:
        kind, q = "mu", {"mu": mu}
    else:
        kind, q = "zcdp", {"rho": rho}
    r = read_guarantee(kind, **q)
    return {"headline": r.headline, "grade": r.grade.to_dict(),
            "gaussian_grade": r.gaussian_grade.to_dict() if r.gaussian_grade else None,
            "risk_link": "/risk?" + urlencode({"guarantee": kind, **q})}


@router.get("/convert", include_in_schema=False)
async def convert_page(request: Request):
    """The form; with query parameters (a permalink, e.g. ``/convert?epsilon=8``) the answer."""
    if any(k in request.query_params for k in FIELDS):
        return await _answer(request, request.query_params)
    return await render_page(request, "convert.html", {"values": {}, "errors": {}, "result": None,
                                                       "tables": await run_light(fp.seed_tables), "example": EXAMPLE})


@router.post("/convert", include_in_schema=False)
async def convert_submit(request: Request):
    return await _answer(request, await request.form())


async def _answer(request: Request, form):
    errors = FormErrors()
    # one schema for the form and the JSON API (ConvertRequest): every error at once, by field;
    # the plot's level lists are the page's own (no JSON twin)
    body, found = parse_form(ConvertRequest, form, fields=FIELDS)
    errors.update(found)
    eps, delta, mu, rho = (getattr(body, k, None) for k in FIELDS)
    levels = {k: parse_levels(form, k, errors) for k in LEVEL_FIELDS}
    result = figure = None
    if not errors:
        if eps is None and mu is None and rho is None and not any(levels.values()):
            errors["form"] = "give epsilon, mu or rho (or levels for the μ–ε plot)"
        else:
            try:
                if eps is not None or mu is not None or rho is not None:
                    result = await run_light(conversions, eps, delta, mu, rho)
                if any(levels.values()) or (eps is not None and not delta):
                    figure = await run_light(mu_vs_epsilon_figure, eps if eps is not None else 8.0, **levels)
            except ValueError as exc:
                errors[field_of(exc, FIELDS)] = str(exc)
    if result and result.get("verdict") and mu is not None and eps is None and rho is None:
        result["verdict"]["risk_link"] += _range_query(form)  # a report's μ: its range on to Risk
    signed = check(app_key(request.app), form, CARRIED)  # None: no signature; False: a changed link
    profile = profile_note(form, mu, delta, result) if signed else None
    return await render_page(request, "convert.html", {"values": dict(form), "errors": errors, "result": result,
                                                       "tables": await run_light(fp.seed_tables), "figure": figure,
                                                       "example": EXAMPLE, "profile": profile,
                                                       "profile_unverified": signed is False}, status=form_status(errors))


def _range_query(form) -> str:
    """``&mu_fpr_min=..&mu_tau=..`` of a report's link (the range of its fitted μ), for the Risk
    link; "" unless both are given as plain numbers (the Risk page checks their values). The run's
    own figures and their signature ride along as given (the Risk page checks the signature:
    :mod:`fdpkit.web.run_link`)."""
    from urllib.parse import urlencode

    texts = {k: str(form.get(k) or "").strip() for k in RANGE}
    try:
        [float(v) for v in texts.values()]
    except ValueError:
        return ""
    run = {k: str(form.get(k) or "").strip() for k in RUN_CARRIED}
    return "&" + urlencode({**texts, **(run if all(run.values()) else {})}) if all(texts.values()) else ""


def _carried_profile(form) -> dict[float, float]:
    """The report's privacy profile carried in the link: ``profile_epsilon`` and
    ``profile_delta``, one value or comma-separated lists of the same length; {} where they
    are not valid (epsilon >= 0, 0 < delta < 1)."""
    texts = [str(form.get(k) or "").split(",") for k in PROFILE_FIELDS]
    try:
        pairs = [(float(e.strip()), float(d.strip())) for e, d in zip(*texts, strict=True)]
    except ValueError:
        return {}
    if not pairs or not all(math.isfinite(e) and e >= 0 and 0 < d < 1 for e, d in pairs):
        return {}
    return {d: e for e, d in pairs}


def profile_note(form, mu: float | None, delta: float | None, result: dict | None) -> dict | None:
    """The report's own epsilon (its accountant's privacy profile, carried in the link as
    ``profile_epsilon`` at ``profile_delta``; the caller has checked the link's signature) beside the epsilon that mu-GDP alone implies at
    each delta the page shows: ``{"epsilon", "delta", "mu_epsilon", "relation", "recommended",
    "rows", "below"}``, or None where the page shows no epsilon for mu at a carried delta.
    The first five are of the page's headline delta (else the first carried one); ``rows``
    maps each shown delta to its pair; ``below`` lists the deltas where mu-GDP alone gives
    less than the run's own epsilon (a report's mu holds on its FPR range only: at a delta
    below the tau it leaves out, mu alone understates the run). ``relation`` words the
    report's epsilon against mu's ("the tighter": the usual case)."""
    if mu is None or result is None or not result.get("mu_to_epsilon"):
        return None
    carried = _carried_profile(form)
    rows = {}
    for r in result["mu_to_epsilon"]:
        eps = carried.get(r["delta"])
        if eps is not None:
            relation = "the tighter" if eps < r["epsilon"] else "the same" if eps == r["epsilon"] else "a larger"
            rows[r["delta"]] = {"epsilon": eps, "delta": r["delta"], "mu_epsilon": r["epsilon"], "relation": relation}
    if not rows:
        return None
    head = rows.get(delta or 1e-5)
    return {**(head or next(iter(rows.values()))), "recommended": head is not None, "rows": rows,
            "below": [d for d, r in rows.items() if r["relation"] == "a larger"]}


def mu_vs_epsilon_figure(eps: float, fpr_levels: tuple = (), recall_levels: tuple = (),
                         delta_levels: tuple = ()) -> str:
    """μ against ε up to ``eps``; with any levels given, one series per level and no defaults
    (K&H Figs. 1–3 b/c), else K&H's FPR 1e-2, 1e-3, 1e-5 and recall 1e-2, 1e-5."""
    top = max(8.0, 1.2 * eps) if eps <= 40 else 1.2 * eps
    chosen = {"fprs": fpr_levels, "recalls": recall_levels, "deltas": delta_levels} \
        if fpr_levels or recall_levels or delta_levels else {}
    return svg_inline(lambda ax: plots.mu_vs_epsilon(ax, epsilons=[x * top / 120 for x in range(1, 121)], **chosen),
                      title="μ against pure ε under each semantics (Kulynych & Honkela Figs. 1–3)")


@router.post("/api/convert", tags=["convert"])
async def convert_api(body: ConvertRequest) -> dict:
    """epsilon -> mu (all semantics), (epsilon, delta) -> mu, mu -> epsilon(delta) / delta(epsilon),
    rho-zCDP -> mu and epsilon(delta), mu -> rho."""
    if body.epsilon is None and body.mu is None and body.rho is None:
        return api_error("give epsilon, mu or rho")
    try:
        return await run_light(lambda: finite(conversions(body.epsilon, body.delta, body.mu, body.rho)))
    except ValueError as exc:
        return api_error(exc)


@router.get("/api/tables", tags=["convert"])
async def tables_api() -> dict:
    """The seed tables (Kulynych & Honkela Fig. 4b/5b/6b, Gomez et al. Tables 2 and 3): cells,
    the papers' printed numbers, and each cell at the paper's precision ("formatted")."""
    return await run_light(lambda: finite({"tables": [t.to_dict() for t in fp.seed_tables()]}))
