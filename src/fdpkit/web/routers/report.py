"""Report page: DP-SGD or a composed mechanism -> the privacy report with plots and
downloads in every format (no maths here).

The JSON routes answer with ``fdpkit.privacy_report(...).to_dict()`` for the same inputs
(an empty discretization is the library's rule, stated in ``provenance``), except that the
representations section -- whose Rényi accounting costs about a second per new mechanism,
often more than the report itself (issue 27) -- is deferred: its entry names the route and
body that compute it (``POST /api/report/representations``), unless the request asks for it
inline with ``?representations=true``. The downloads and the page carry it."""

from __future__ import annotations

import math
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request

import fdpkit as fp
from fdpkit._numerics import safe_text
from fdpkit.guarantee.setting import comparison_work
from fdpkit.mechanisms import Mechanism, mechanism_from_dict
from fdpkit.report import FORMATS
from fdpkit.web.common import (
    CHOICES, MEDIA, FormErrors, Limits, api_error, check_limits, checked,  # noqa: F401  (check_limits: re-exported)
    download, field_of, parse_float, parse_int,
    form_status, render_page, run_heavy, run_light, spec_from_text,
)
from fdpkit.web.forms import DPSGD_FIELDS, dpsgd_from_form, dpsgd_of, in_words, labels_of  # noqa: F401
from fdpkit.web.jobs import deltas_led_by, report_job
from fdpkit.web.names import download_name
from fdpkit.web.routers.convert import CARRIED
from fdpkit.web.run_link import run_query
from fdpkit.web.signed_links import SIG_FIELD, app_key, sign
from fdpkit.web.models import DPSGDRequest, MechanismReportRequest, MechanismRequest, PointsRequest, UniformSamplingRequest
from fdpkit.web.json_numbers import CheckedJSONRoute
from fdpkit.web.repeated_fields import first_value

router = APIRouter(route_class=CheckedJSONRoute)
FIELDS = ("noise_multiplier", "sample_rate", "batch_size", "dataset_size", "steps", "epochs",
          "discretization", "mechanism", "times", "sampling_mu", "sampling_n", "sampling", "relation",
          "max_batch_size", "unit", "examples_per_user", "points", "points_bound", "drop_last", "delta")
#: The DP-SGD inputs (fdpkit.web.forms.DPSGD_FIELDS): read through the JSON API's schema
#: (DPSGDRequest), labels from its titles; the proposal forms read them the same way.
LABELS = {**labels_of(DPSGDRequest), "sampling_mu": "Sampling parameter μ", "sampling_n": "Dataset size n",
          "mechanism": "Mechanism spec", "points": "Error points", "delta": "δ of the headline's ε"}
#: The form starts empty; the placeholders show this example and "Load example" fills it in
#: (the README's DP-SGD run, Gomez et al. Sec. 5).
EXAMPLE = {"noise_multiplier": "9.4", "sample_rate": "0.32768", "steps": "2000"}
#: Other placeholders (not filled by "Load example").
HINTS = {"batch_size": "256", "dataset_size": "60000", "epochs": "60", "sampling_mu": "1", "sampling_n": "100",
         "max_batch_size": "512", "examples_per_user": "1"}
DEFAULTS = {"kind": "dpsgd"}
#: What ran: the form's radios (``kind``)
KINDS = ("dpsgd", "uniform-sampling", "mechanism", "points")

#: (kept for callers of the former names) the server's limits live in fdpkit.web.common
_checked = checked


def _dpsgd_from_form(form, errors: FormErrors) -> tuple[Mechanism | None, float | None]:
    """Every error of the DP-SGD inputs at once, beside its field, in the labels' words."""
    mech, disc, found = dpsgd_from_form(form, LABELS)
    errors.update(found)
    return mech, disc


def _deltas_of(form, errors: FormErrors) -> tuple[float, ...] | None:
    """The report's δ led by the form's ``delta`` (Calibrate's link carries its target's): None
    for the library's. Said beside the field when it is not a probability in (0, 1)."""
    delta = parse_float(form, "delta", errors, required=False, percent=False)
    if delta is None:
        return None
    if not 0 < delta < 1:
        errors["delta"] = f"δ of the headline's ε must be between 0 and 1 (exclusive), got {delta:g}"
        return None
    return deltas_led_by(delta)


def _from_form(form) -> tuple[Mechanism | None, float | None, dict, FormErrors]:
    """(mechanism, discretization or None for the library's rule, the form's values, errors)."""
    errors = FormErrors()
    values = {k: form.get(k, "") for k in ("kind", *FIELDS)}
    # given twice: the first kind's fields, as its radio shows (the last's were read: "mechanism is
    # required" for kind=dpsgd&kind=mechanism)
    kind = first_value(form, "kind", "dpsgd")
    values["kind"] = kind
    if str(form.get("delta") or "").strip():
        _deltas_of(form, errors)  # its error beside its field, with every other
    if kind not in KINDS:  # was read as a mechanism spec ("mechanism is required")
        errors.setdefault("kind", f"kind must be one of {', '.join(KINDS)}, got {kind[:40]!r}")
        return None, None, values, errors
    if kind == "dpsgd":
        mech, disc = _dpsgd_from_form(form, errors)
        return mech, disc, values, errors
    disc = parse_float(form, "discretization", errors, required=False)  # empty: the library's rule
    mech = None
    try:
        if kind == "uniform-sampling":
            # form names differ from the library's (mu, n): the page shows the report's mu
            mu = parse_float(form, "sampling_mu", errors)
            n = parse_int(form, "sampling_n", errors)
            if not errors:
                try:
                    mech = fp.UniformSampling(mu, n)
                except ValueError as exc:
                    name = {"mu": "sampling_mu", "n": "sampling_n"}.get(field_of(exc, ("mu", "n")), "form")
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
        else:
            text = str(form.get("mechanism") or "").strip()
            if not text:
                errors["mechanism"] = "mechanism is required: a JSON mechanism spec"
            else:
                try:
                    mech = mechanism_from_dict(spec_from_text(text))
                except ValueError as exc:
                    errors["mechanism"] = str(exc)
    except ValueError as exc:
        errors[field_of(exc, FIELDS)] = str(exc)
    return mech, disc, values, errors


def next_links(data: dict, key: bytes | None = None, run: dict | None = None) -> dict[str, str] | None:
    """The report's μ carried on to the Convert and Risk pages (no re-typing): rounded up, the
    safe side (:func:`fdpkit._numerics.safe_text`), to Risk with its range (:func:`_mu_range`), with the accountant's ε at each δ of the
    report's privacy profile (also rounded up, comma-separated in the order of the report),
    which Convert quotes beside the ε that μ-GDP alone implies (larger at the headline δ, but
    possibly smaller at a δ below the τ that μ leaves out). The profile is carried only under
    the server's signature of μ, ε and δ (``key``, see :mod:`fdpkit.web.signed_links`):
    Convert quotes nothing a hand-made link claims. With ``key`` and ``run`` (the run's own
    attack risk, :func:`fdpkit.report.build.plain_figures`), both links also carry those, signed
    (:func:`fdpkit.web.run_link.run_query`): the Risk page quotes them as the run's. None without a finite μ.

    >>> next_links({"guarantee": {"mu": 0.62053}, "epsilon_at_delta": [{"delta": 1e-5, "epsilon": 2.00342}]},
    ...            key=b"k")["convert"]
    '/convert?mu=0.6206&profile_epsilon=2.004&profile_delta=1e-05&profile_sig=...'
    >>> next_links({"guarantee": {"mu": 0.62053}, "epsilon_at_delta": [{"delta": 1e-5, "epsilon": 2.00342}]})["convert"]
    '/convert?mu=0.6206'
    """
    try:
        mu = float(data["guarantee"]["mu"])
    except (KeyError, TypeError, ValueError):
        return None
    if not (math.isfinite(mu) and mu > 0):
        return None
    mu_text = safe_text(mu, up=True)
    carried = []
    for row in data.get("epsilon_at_delta") or []:
        try:
            eps, delta = float(row["epsilon"]), float(row["delta"])
        except (KeyError, TypeError, ValueError):
            continue
        if math.isfinite(eps):
            carried.append((safe_text(eps, up=True), f"{delta:g}"))
    query = {"mu": mu_text}
    if key and carried:
        query.update(profile_epsilon=",".join(e for e, _ in carried), profile_delta=",".join(d for _, d in carried))
        query[SIG_FIELD] = sign(key, query, CARRIED)
    # the range and the run's own figures (as Risk's): Convert's own Risk link carries them on
    rng = _mu_range(data["guarantee"])
    own = run_query(key, mu_text, run, rng) if key else {}
    query.update({**rng, **own})
    return {"mu": mu_text, "convert": "/convert?" + urlencode(query, safe=","),
            "risk": "/risk?" + urlencode({"guarantee": "mu", "mu": mu_text, **rng, **own})}


def _mu_range(guarantee: dict) -> dict[str, str]:
    """The range of the report's μ for the Risk link (``mu_fpr_min``, ``mu_tau``; none for a μ
    fitted on all of [0, 1]): μ holds for attacks with FPR and FNR >= alpha_min, elsewhere TPR
    <= 1 - G_μ(FPR) + τ. alpha_min rounded up and τ rounded up (the safe side: a wider gap,
    a larger slack). Unsigned: they can only add a warning and raise the Risk page's figures.

    >>> _mu_range({"alpha_min": 1e-10, "tau": 8.158440057443426e-07})
    {'mu_fpr_min': '1e-10', 'mu_tau': '8.159e-07'}
    """
    try:
        lo, tau = float(guarantee["alpha_min"]), float(guarantee["tau"])
    except (KeyError, TypeError, ValueError):
        return {}
    if not (math.isfinite(tau) and 0 < lo < 0.5 and tau >= 0):
        return {}
    return {"mu_fpr_min": safe_text(lo, up=True), "mu_tau": safe_text(min(tau, 1.0), up=True)}


def points_mechanism(text: str, bound: str = "lower") -> Mechanism:
    """The mechanism whose curve is the lower convex hull of CSV error points."""
    from fdpkit.curves.points import points_from_csv

    if bound not in ("lower", "exact"):
        raise ValueError(f"bound must be lower or exact (an upper curve certifies nothing), got {bound!r}")
    fpr, fnr = points_from_csv(text)
    return fp.CurveMechanism.from_curve(fp.curve_from_points(fpr, fnr, bound=bound))


def _checked_report(spec, disc: float | None, limits: Limits) -> tuple[Mechanism, float]:
    """:func:`checked` for a report: the mechanism and its estimated work, to which a
    shuffled run adds its Poisson comparison's (its guarantee is free, the comparison, not
    a guarantee, is not: :func:`fdpkit.guarantee.setting.comparison_work`)."""
    mech, work = checked(spec, disc, limits)
    return mech, work + comparison_work(mech, disc, limits.budget)


async def _report(request: Request, mech, disc: float | None, fmt: str, representations: bool = True,
                  deltas: tuple[float, ...] | None = None):
    """Refuse over-budget work at once (422), then run it in a worker process. ``disc`` None:
    the library's rule, as ``fp.privacy_report`` applies it (the same numbers); ``deltas`` None:
    the library's δ."""
    limits: Limits = request.app.state.limits
    mech, work = await run_light(_checked_report, mech, disc, limits)
    return await run_heavy(request, report_job, mech, disc, fmt, limits.budget, representations, deltas, work=work)


@router.get("/report", include_in_schema=False)
async def report_page(request: Request):
    """The form; with query parameters (a permalink) the report, rendered on the server."""
    if any(k in request.query_params for k in ("kind", *FIELDS)):
        return await _answer(request, request.query_params)
    return await render_page(request, "report.html", {"values": DEFAULTS, "errors": {}, "doc": None,
                                                      "choices": CHOICES, "example": EXAMPLE, "hints": HINTS})


@router.post("/report", include_in_schema=False)
async def report_submit(request: Request):
    return await _answer(request, await request.form())


def _htmx(request: Request) -> bool:
    return request.headers.get("HX-Request") == "true"


async def _answer(request: Request, form):
    """The page with the report. In the browser (an htmx request) the figures and the
    representations section are fetched right after (``POST /report/extras``): the result
    costs about what ``privacy_report`` costs; a plain request gets the whole page."""
    mech, disc, values, errors = await run_light(_from_form, form)
    doc = tables = figures = details = statement = links = None
    extras = False
    if not errors:
        try:
            parts = await _report(request, mech, disc, "page-first" if _htmx(request) else "page",
                                  deltas=_deltas_of(form, errors))
            doc, tables, figures, details = parts["doc"], parts["tables"], parts["figures"], parts["details"]
            statement, extras = parts["statement"], parts["extras"]
            links = next_links(doc.data, app_key(request.app), parts.get("run_risk"))
        except ValueError as exc:
            kind = values.get("kind") or "dpsgd"
            own = {"mechanism": "mechanism", "points": "points", "uniform-sampling": "sampling_mu"}.get(kind)
            name = field_of(exc, FIELDS if kind == "dpsgd" else ("discretization",), default=own or "form")
            errors[name] = in_words(str(exc), LABELS) if kind == "dpsgd" else str(exc)
    return await render_page(request, "report.html", {"values": values, "errors": errors, "doc": doc,
                                                      "choices": CHOICES, "tables": tables, "figures": figures,
                                                      "details": details, "formats": FORMATS,
                                                      "statement": statement, "example": EXAMPLE, "hints": HINTS,
                                                      "extras": extras, "links": links}, status=form_status(errors))


@router.post("/report/extras", include_in_schema=False)
async def report_extras(request: Request):
    """The figures and the representations section of the report the form describes (the
    page fetches them after the result); without script, the whole page."""
    form = await request.form()
    if not _htmx(request):
        return await _answer(request, form)
    mech, disc, _, errors = await run_light(_from_form, form)
    context: dict = {"tables": [], "figures": [], "error": "; ".join(errors.values()) if errors else None}
    if not errors:
        try:
            context.update(await _report(request, mech, disc, "page-extras", deltas=_deltas_of(form, FormErrors())))
        except ValueError as exc:
            context["error"] = str(exc)
    return await render_page(request, "_report_extras.html", context)


@router.post("/report/download", include_in_schema=False)
async def report_download(request: Request, format: str = Query("html")):
    form = await request.form()
    mech, disc, _, errors = await run_light(_from_form, form)
    if errors:
        return api_error("; ".join(errors.values()))
    if format not in FORMATS:
        return api_error(f"format must be one of {', '.join(FORMATS)}, got {format!r}")
    try:
        data = await _report(request, mech, disc, format, deltas=_deltas_of(form, FormErrors()))
    except ValueError as exc:
        return api_error(exc)
    return download(data, download_name(mech, format), MEDIA[format])


#: The query parameter of the report routes that asks for the representations section inline.
REPRESENTATIONS_QUERY = Query(False, description=(
    "include the representations section (regret of (ε, δ), ρ-zCDP, the RDP curve and μ-GDP; Gomez et al. "
    "Fig. 1c) in this answer. Its Rényi accounting costs about a second per new mechanism, often more than "
    "the report, so by default the answer gives instead where to fetch it: POST the \"body\" of its "
    "\"representations\" entry to /api/report/representations"))


@router.post("/api/report/dpsgd", tags=["report"])
async def report_dpsgd_api(request: Request, body: DPSGDRequest,
                           format: str = Query("json", description="json, csv, md, html or pdf"),
                           representations: bool = REPRESENTATIONS_QUERY):
    """Privacy report of DP-SGD (sample rate or batch/dataset size; steps or epochs), as
    ``fdpkit.privacy_report(...)`` gives it (empty discretization: the library's rule)."""
    try:
        mech = dpsgd_of(body)
        return await _api_answer(request, mech, body.discretization, format, representations, body.deltas)
    except ValueError as exc:
        return api_error(exc)


@router.post("/api/report/uniform-sampling", tags=["report"])
async def report_uniform_api(request: Request, body: UniformSamplingRequest,
                             format: str = Query("json", description="json, csv, md, html or pdf"),
                             representations: bool = REPRESENTATIONS_QUERY):
    """Privacy report of de Fondeville's uniform random sampling (Example 3), the worked
    example of catastrophic failure."""
    try:
        mech = fp.UniformSampling(body.mu, body.n)
        return await _api_answer(request, mech, body.discretization, format, representations, body.deltas)
    except ValueError as exc:
        return api_error(exc)


@router.post("/api/report/points", tags=["report"])
async def report_points_api(request: Request, body: PointsRequest,
                            format: str = Query("json", description="json, csv, md, html or pdf"),
                            representations: bool = REPRESENTATIONS_QUERY):
    """Privacy report of a curve given by (FPR, FNR) error points as CSV (R fdp's fdp() of a
    data frame: the points' lower convex hull; its mu is R's est_gdp)."""
    try:
        mech = await run_light(points_mechanism, body.points, body.bound)
        return await _api_answer(request, mech, body.discretization, format, representations, body.deltas)
    except ValueError as exc:
        return api_error(exc)


@router.post("/api/report", tags=["report"])
async def report_api(request: Request, body: MechanismReportRequest,
                     format: str = Query("json", description="json, csv, md, html or pdf"),
                     representations: bool = REPRESENTATIONS_QUERY):
    """Privacy report of any mechanism spec (the library's mechanism dicts)."""
    try:
        return await _api_answer(request, body.mechanism, body.discretization, format, representations, body.deltas)
    except ValueError as exc:
        return api_error(exc)


@router.post("/api/report/representations", tags=["report"])
async def report_representations_api(request: Request, body: MechanismRequest):
    """The representations section of a report (``PrivacyReport.representations()``: the
    regret of (ε, δ), ρ-zCDP, the RDP curve and μ-GDP, and the advice of Gomez et al. Sec. 4):
    what the report routes defer by default. The body is the one their answer names."""
    try:
        return {"representations": await _report(request, body.mechanism, body.discretization, "representations")}
    except ValueError as exc:
        return api_error(exc)


def deferred_representations(mech: Mechanism | dict, disc: float | None) -> dict:
    """Where a report answer's representations section is fetched from (module docs of
    :mod:`fdpkit.web.routers.report`): the route and the body to POST to it."""
    spec = mech.to_dict() if isinstance(mech, Mechanism) else mech
    return {"deferred": True, "href": "/api/report/representations", "method": "POST",
            "body": {"mechanism": spec, "discretization": disc},
            "note": "computed on request (Rényi accounting: about a second per mechanism); or ask the report "
                    "route with ?representations=true"}


async def _api_answer(request: Request, mech, disc: float | None, format: str, representations: bool = False,
                      deltas: list[float] | None = None):
    """A report route's answer; ``deltas`` (the body's, checked by its model): the report's δ,
    the first the headline's, as ``fdpkit report --delta`` (None: the library's)."""
    if format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {format!r}")
    led = tuple(deltas) if deltas else None
    if format != "json":
        result = await _report(request, mech, disc, format, deltas=led)
        return download(result, download_name(mech, format), MEDIA[format])
    result = await _report(request, mech, disc, "dict", representations, deltas=led)
    if not representations:
        result["representations"] = deferred_representations(result["mechanism"], disc)
    return result
