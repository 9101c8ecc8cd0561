"""Arrange a :class:`fdpkit.guarantee.PrivacyReport` into a :class:`ReportDocument` for
people: the headline (mu, epsilon at delta, TPR at FPR 1e-3, grade) first, internal notes last
and collapsed. The document model is :mod:`fdpkit.report.model`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import math

from fdpkit._numerics import safe_g
from fdpkit.report import plots
from fdpkit.report.model import _INTERNAL, Figure, ReportDocument, Section, Table, _symbols, fmt, human_inputs
from fdpkit.report.paper import statement_section
from fdpkit.report.published import PUBLISHED, place_among
from fdpkit.report.representations_section import representation_figures, representation_section
from fdpkit.risk import posterior as _posterior, relative_risk as _relative_risk
from fdpkit.risk.grade import REFERENCE_FPR, REFERENCE_PRIOR
from fdpkit.risk.reading import plain_risk_words
from fdpkit.risk.disclosure import certainty_mass

if TYPE_CHECKING:  # annotations only
    from fdpkit.guarantee import PrivacyReport


def plain_figures(report: PrivacyReport) -> dict[str, Any]:
    """The run's own certified attack risk at the grade's reference point (FPR 0.1%, prior 1%):
    the arguments of :func:`fdpkit.risk.reading.plain_risk_words` (``tpr``, ``posterior``, ``fpr``,
    ``prior``, ``relative_risk_at_fpr``, ``failure_mode``, ``relative_risk``, ``disclosure``),
    unrounded. The report's "In plain words" reads them; the Report page's Risk link carries them.

    >>> import fdpkit as fp
    >>> f = plain_figures(fp.privacy_report(fp.Gaussian(1.0)))
    >>> f["fpr"], f["prior"], f["failure_mode"]
    (0.001, 0.01, 'graceful')
    """
    curve, a, prior = report.curve, REFERENCE_FPR, REFERENCE_PRIOR
    return {"tpr": float(curve.tpr(a)), "posterior": float(_posterior(curve, prior, a)), "fpr": a, "prior": prior,
            "relative_risk_at_fpr": float(_relative_risk(curve, fpr_min=a)), "failure_mode": report.failure_mode,
            "relative_risk": float(_relative_risk(curve)), "disclosure": certainty_mass(curve)}


def failure_mode_words(mode: str, relative_risk: float) -> str:
    """The report's "failure mode" cell (de Fondeville Thms. 1-2): also the Risk page's for a run
    its report's link carries. ``relative_risk``: the overall bound, said for "none" (rounded up).

    >>> failure_mode_words("graceful", float("inf"))
    'graceful: confidence can approach certainty but never reach it'
    """
    if mode == "none":
        return ("none: relative disclosure risk is bounded (de Fondeville Thm. 2): a positive attack "
                f"multiplies the attacker's odds by at most {fmt(relative_risk, up=True)}")
    return {"graceful": "graceful: confidence can approach certainty but never reach it",
            "catastrophic": "catastrophic: some outputs reveal membership with certainty"}[mode]


def plain_words(report: PrivacyReport) -> str:
    """The report's attack risk in words for a reader who does not read μ: the run's own
    certified TPR at FPR 0.1% and posterior for a 1% prior (the report's tables' figures, the
    grade's reference point) and its failure mode (:func:`plain_figures`), in the sentences the Risk page words a
    guarantee with (one rule: :func:`fdpkit.risk.reading.plain_risk_words`). Upper bounds, rounded up.

    >>> import fdpkit as fp
    >>> plain_words(fp.privacy_report(fp.Gaussian(1.0)))[:120]
    'In plain words: an attack that wrongly accuses 0.10% of the people who are not in the data (1 in 1,000) catches at most '
    """
    words = plain_risk_words(**plain_figures(report))
    first = words[0]
    return "In plain words: " + " ".join((first[0].lower() + first[1:],) + words[1:])


def build_document(report: PrivacyReport, *, representations: bool = True) -> ReportDocument:
    """Arrange a privacy report for people (see module docs): the headline (μ, ε at δ, TPR at
    FPR 1e-3, grade) first, internal notes last and collapsed. ``representations=False``
    leaves out the representations section and its figures (their Rényi accounting costs
    about a second per mechanism): for a page that fetches them afterwards."""
    d = report.to_dict(representations=representations)
    fit = report.fit
    mu_text = fmt(fit.mu, up=True)  # upper bounds print their last digit up (fmt's up=)
    g = report.grade
    # the report's first δ, as its statement and summary() lead with it (this preferred 1e-5 wherever
    # it was listed: deltas (2e-5, 1e-5) gave a headline at 1e-5 beside a statement at 2e-5)
    d5, eps5 = report.epsilons[0]
    tpr3 = float(report.curve.tpr(1e-3))
    placement = place_among(fit.mu) if math.isfinite(fit.mu) else \
        "No finite μ: not comparable with the published μ-GDP settings."
    # never a vacuous clause: "TPR ≤ 1" bounds nothing
    attack = (f"the best attack at FPR 0.001 reaches TPR ≤ {fmt(tpr3, up=True)}" if fmt(tpr3, up=True) != "1"
              else "at FPR 0.001 no attack is bounded below certainty")
    # a catastrophic failure's outright disclosures can fall in delta: eps then reads small (even 0)
    covered = report.failure_mode == "catastrophic" and math.isfinite(eps5) and \
        d5 >= certainty_mass(report.curve) > 0
    eps_note = " (δ covers the outputs that reveal membership outright; ε describes only the others)" \
        if covered else ""
    summary = (
        f"{report.mechanism.label()}: μ = {mu_text} Gaussian DP, ε = {fmt(eps5, up=True)} at δ = {fmt(d5)}{eps_note}; "
        f"{attack}. {g.headline}."
    )
    headline = Table(
        "Headline",
        ("quantity", "value"),
        (
            ("μ (tight, pessimistic)", mu_text),
            (f"ε at δ = {fmt(d5)}", fmt(eps5, up=True) + (" (outright disclosures fall in δ)" if covered else "")),
            ("best attack TPR at FPR 0.001", fmt(tpr3, up=True)),
            ("protection grade", f"{g.icon} {g.label} (level {g.level} of 0–3, 0 strongest)"),
        ),
    )
    glance = Section("At a glance", (f"{g.headline}. {g.definition}", plain_words(report), placement,
                                     _symbols(report.verdict)), (headline,), key="headline")
    fit_table = Table(
        "Tight μ-GDP fit",
        ("quantity", "value"),
        (
            ("μ (tight, pessimistic)", mu_text),
            ("regret Δ", fmt(fit.regret)),
            ("verdict", _symbols(report.verdict)),
            ("FPR range", "all FPR in [0, 1]" if fit.alpha_min == 0 else
             f"attacks with FPR and FNR ≥ {fmt(fit.alpha_min)}"),
            ("τ (left out by the range)", safe_g(fit.tau, 4, up=True)),
            ("curve", f"{report.curve.bound} bound ({report.method})"),
            ("statement", _symbols(fit.statement())),
        ),
    )
    eps = Table(
        "ε at standard δ (from the accountant's privacy profile)",
        ("δ", "ε"),
        tuple((fmt(r["delta"]), fmt(r["epsilon"] if r["epsilon"] != "inf" else math.inf, up=True)) for r in d["epsilon_at_delta"]),
    )
    tpr = Table(
        "Best attack at a given false-positive rate",
        ("FPR α", "certified TPR", "TPR / FPR", f"TPR under μ = {mu_text}"),
        tuple((fmt(r["fpr"]), fmt(r["tpr"], up=True), fmt(r["tpr_over_fpr"], up=True), fmt(r["tpr_gdp"], up=True))
              for r in d["tpr_at_fpr"]),
        "TPR is an upper bound on the power of any membership-inference attack at that FPR.",
    )
    post = Table(
        f"Posterior after a positive attack at FPR {fmt(d['posterior']['fpr'])}",
        ("prior", "posterior"),
        tuple((fmt(r["prior"]), fmt(r["posterior"], up=True)) for r in d["posterior"]["rows"]),
        "de Fondeville Eq. 4: how far a positive attack can raise belief in membership.",
    )
    risk = Table(
        "Risk summary",
        ("quantity", "value"),
        (("advantage (max TPR − FPR)", fmt(report.advantage, up=True)),
         ("failure mode", failure_mode_words(report.failure_mode, _relative_risk(report.curve))),
         ("protection grade", f"{g.icon} {g.label}: {g.definition}")),
    )
    # the references' mu and epsilon are upper bounds too (fdpkit's recomputations): rounded up
    # like this mechanism's, so that the headline run reads the same on its own row and the
    # published one (7.424 there beside 7.425 here, for one run)
    # the column's own δ, wherever the report lists it (its headline δ may be another)
    eps_1e5 = next((e for dd, e in report.epsilons if dd == 1e-5), None)
    refs = sorted([(r.mu, r.name, fmt(r.epsilon_at_1e5, up=True) if r.epsilon_at_1e5 else "-", r.source)
                   for r in PUBLISHED]
                  + ([(fit.mu, "▶ this mechanism", fmt(eps_1e5, up=True) if eps_1e5 is not None else "-", "this report")]
                     if math.isfinite(fit.mu) else []), key=lambda x: x[0])
    compare = Table("Published settings, most private first", ("setting", "μ", "ε at δ = 1e-5", "source"),
                    tuple((name, fmt(m, up=True), e, src) for m, name, e, src in refs))
    user_warn = tuple(_symbols(w) for w in report.warnings if not any(k in w for k in _INTERNAL))
    internal = tuple(_symbols(w) for w in report.warnings if any(k in w for k in _INTERNAL))
    inputs = Table("Inputs", ("input", "value"), tuple(human_inputs(report.mechanism.to_dict())))
    prov = Table("Provenance", ("field", "value"),
                 tuple((k.replace("_", " "), fmt(v) if not isinstance(v, str) else v) for k, v in d["provenance"].items()))
    sections = (
        glance,
        Section("Guarantee", (), (fit_table,), key="guarantee"),
        Section("Privacy profile", (), (eps,), key="profile"),
        Section("Attack risk", (), (tpr, post, risk), key="risk"),
        *((representation_section(report),) if representations else ()),
        Section("Comparison with published settings", (placement,), (compare,), key="comparison"),
        Section("Warnings", user_warn or ("None.",), key="warnings"),
        Section("Inputs", (report.mechanism.label(),), (inputs,), key="inputs"),
        _statement_section(report),
        Section("Technical notes", internal or ("None.",), (prov,), key="notes", collapsed=True),
    )
    curve, mu = report.curve, fit.mu
    figures = [
        Figure("tradeoff", "Trade-off curve (FNR β against FPR α) and the fitted Gaussian curve",
               lambda ax: plots.tradeoff(ax, {"mechanism": curve}, mu=mu)),
        Figure("roc", "Log-log ROC: attack TPR against FPR",
               lambda ax: plots.roc_loglog(ax, {"mechanism": curve}, mu=mu)),
    ]
    if math.isfinite(mu):
        figures.append(Figure("difference", "Numeric curve minus the fitted Gaussian curve, on a log FPR axis "
                              "(≥ 0 where μ holds; Gomez et al. Fig. 7)",
                              lambda ax: plots.curve_vs_gdp(ax, curve, mu)))
    figures.append(Figure("posterior", "Posterior after a positive attack against the attack's FPR "
                          "(de Fondeville Fig. 2)", lambda ax: plots.posterior_vs_fpr(ax, curve)))
    if representations:
        figures += representation_figures(report)
    data = dict(d)
    data.setdefault("grade", g.to_dict())
    data.setdefault("comparison", {"sentence": placement, "references": [r.to_dict() for r in PUBLISHED]})
    return ReportDocument(f"Privacy report: {report.mechanism.label()}", summary, sections, tuple(figures), data, g)


def _statement_section(report: PrivacyReport) -> Section:
    return statement_section(report)
