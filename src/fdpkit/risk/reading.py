"""One guarantee read as attack risk, for people: the numbers, a graded verdict, plain
sentences and plausibility warnings (Kulynych & Honkela Sec. 3; de Fondeville Sec. 3).

The guarantee is one of ``"mu"`` (mu-GDP), ``"epsilon"`` (pure eps-DP) or
``"epsilon_delta"`` ((eps, delta)-DP). Fields that do not belong to the chosen kind are
refused, naming them, rather than silently ignored or reinterpreted.

A mu fitted to a numeric curve (a privacy report's) holds on a range only: for every attack
with FPR and FNR >= ``mu_fpr_min`` (the fit's alpha_min); overall the run's certificate is
TPR <= 1 - G_mu(FPR) + ``mu_tau`` (:mod:`fdpkit.fit.mu`). Given both, a reading at an FPR outside
that range says so (``range``) and gives that sound bound instead of mu-GDP's TPR. The range
test is sound for a mu rounded up: the report certifies f >= G_mu on [alpha_min, a*] with
f(a*) = alpha_min, so G_mu(FPR) >= alpha_min (mu-GDP's TPR <= 1 - alpha_min) puts FPR <= a*.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field

from fdpkit._numerics import check_probability, check_real, check_scalar, json_safe, plain_percent, safe_g
from fdpkit.errors import ParameterError
from fdpkit.curves import EpsDeltaCurve, GaussianCurve, TradeOffCurve
from fdpkit._inputs import plausibility_warnings
from fdpkit.risk.bayes import advantage
from fdpkit.risk.attack import _risk_tpr, posterior
from fdpkit.risk.disclosure import failure_mode, relative_risk
from fdpkit.risk.grade import REFERENCE_FPR, SCALE_NOTE, WORST_CASE_NOTE, Grade, grade, grade_for_tpr
from fdpkit.risk._range_bound import RangeBound
from fdpkit.accounting import tradeoff_curve
from fdpkit.convert.gdp import mu_for_epsilon_delta
from fdpkit.mechanisms import ZCDP

GUARANTEES = ("mu", "epsilon", "epsilon_delta", "zcdp")
#: Which of mu, epsilon, delta, rho each kind of guarantee uses.
FIELDS_OF = {"mu": ("mu",), "epsilon": ("epsilon",), "epsilon_delta": ("epsilon", "delta"), "zcdp": ("rho",)}
_KIND = {"mu": "a mu-GDP", "epsilon": "a pure epsilon-DP", "epsilon_delta": "an (epsilon, delta)-DP",
         "zcdp": "a rho-zCDP"}
_HINT = {"mu": "give only mu, or choose guarantee 'epsilon' or 'epsilon_delta'",
         "epsilon": "give only epsilon, or choose guarantee 'epsilon_delta' or 'mu'",
         "epsilon_delta": "give only epsilon and delta, or choose guarantee 'mu'",
         "zcdp": "give only rho, or choose another guarantee"}
#: delta used when an (eps, delta) guarantee is read without a delta.
DEFAULT_DELTA = 1e-5
MODES = {
    "none": "No output reveals membership with certainty, and a positive attack can multiply an attacker's "
            "odds of membership by at most {factor} (de Fondeville Thm. 2).",
    "graceful": "No output reveals membership with certainty, but a lucky attacker can become very "
                "confident. Judge the risk at a realistic false-positive rate.",
    "catastrophic": "Some outputs can reveal a person in the data outright, whatever the attacker believed "
                    "before (a catastrophic failure, de Fondeville Thm. 1; with probability up to {mass}).",
}
#: A fitted mu read with its range (a privacy report's): why the report's own figures are smaller.
RANGE_NOTE = ("This μ comes from a privacy report: it summarises the run's certified trade-off curve from below, so "
              "the report's own figures for the run (its attack TPR at each FPR, posterior, advantage, ε) are the "
              "same or smaller, and its grade the same or better. Quote the report's figures for the run; these read "
              "the run through its μ, to compare it with other guarantees.")
#: The failure-mode sentence of a fitted mu read with its range (tau > 0): the run's bound.
RANGE_MODE = ("The run's certificate does not rule out blatant disclosure: beyond the range of its μ it allows "
              "outputs that reveal membership with certainty with probability up to τ = {tau} (TPR ≤ τ at FPR 0), "
              "which μ-GDP alone rules out. Whether the run has such outputs depends on its mechanism: the privacy "
              "report reads that from the run itself (its failure mode); the grade is read at FPR {ref:g}.")


def check_guarantee_fields(guarantee: str, *, mu: float | None = None, epsilon: float | None = None,
                           delta: float | None = None, rho: float | None = None) -> None:
    """Refuse fields that contradict the chosen kind of guarantee (a ValueError naming them).

    >>> check_guarantee_fields("mu", mu=1.0, epsilon=1.0)
    Traceback (most recent call last):
    fdpkit.errors.ParameterError: epsilon does not apply to a mu-GDP guarantee (guarantee='mu'); give only mu, or choose guarantee 'epsilon' or 'epsilon_delta'
    """
    if guarantee not in GUARANTEES:
        raise ParameterError(f"guarantee must be one of {', '.join(GUARANTEES)}, got {guarantee!r}", "guarantee")
    given = {"mu": mu, "epsilon": epsilon, "delta": delta, "rho": rho}
    extra = [k for k, v in given.items() if v is not None and k not in FIELDS_OF[guarantee]]
    if guarantee == "epsilon" and extra == ["delta"] and delta == 0:
        extra = []  # delta = 0 is pure epsilon-DP
    if extra:
        names = " and ".join(extra)
        kind, hint = _KIND[guarantee], _HINT[guarantee]
        raise ParameterError(f"{names} {'does' if len(extra) == 1 else 'do'} not apply to {kind} guarantee "
                             f"(guarantee={guarantee!r}); {hint}", extra[0], tuple(extra))
    missing = [k for k in FIELDS_OF[guarantee] if given[k] is None and k != "delta"]
    if missing:
        raise ParameterError(f"{missing[0]} is required for guarantee={guarantee!r}", missing[0])


def guarantee_curve(guarantee: str, *, mu: float | None = None, epsilon: float | None = None,
                    delta: float | None = None, rho: float | None = None) -> tuple[TradeOffCurve, str]:
    """The trade-off curve of a guarantee (exact, or a sound lower bound for zCDP) and its name."""
    check_guarantee_fields(guarantee, mu=mu, epsilon=epsilon, delta=delta, rho=rho)
    if guarantee == "zcdp":
        return tradeoff_curve(ZCDP(rho)), f"ρ = {rho:g} zCDP"
    if guarantee == "mu":
        return GaussianCurve(mu), f"μ = {mu:g} Gaussian DP"
    d = 0.0 if guarantee == "epsilon" else (DEFAULT_DELTA if delta is None else delta)
    name = f"pure ε = {epsilon:g} DP" if d == 0 else f"(ε = {epsilon:g}, δ = {d:g})-DP"
    return EpsDeltaCurve(epsilon, d), name


#: Largest number of people ``n`` a reading takes (as the web's and CLI's forms).
MAX_PEOPLE = 10**12
#: The smallest FPR read (the smallest normal float, about 2.2e-308): below it TPR / FPR
#: leaves the floats (FPR 5e-324 read "inf times its false-positive rate").
MIN_FPR = sys.float_info.min


@dataclass(frozen=True)
class RiskReading:
    """Attack risk of a guarantee at one FPR and prior, with its grade (see module docs)."""

    guarantee: str
    kind: str
    fpr: float
    prior: float
    attack_power: float
    posterior: float
    relative_risk_at_fpr: float
    relative_risk: float
    advantage: float
    failure_mode: str
    grade: Grade
    plain_language: tuple[str, ...]
    notes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    curve: TradeOffCurve | None = field(default=None, repr=False, compare=False)
    #: the plain first sentence (the manager's question): the grade, and for a worst-case
    #: guarantee what a Gaussian mechanism with the same guarantee would get
    headline: str = ""
    #: the grade of the Gaussian mechanism that meets the same guarantee (None for mu-GDP)
    gaussian_grade: Grade | None = None
    #: a mu's certified range when one was given (``mu_fpr_min``, ``mu_tau``): ``{"fpr_min",
    #: "tau", "outside", "note", "failure"}`` ("failure": the failure mode in words, for tau > 0);
    #: where ``outside``, attack_power, posterior and
    #: relative_risk_at_fpr are the run's bound 1 - G_mu(FPR) + tau, not mu-GDP's
    range: dict | None = None
    #: with a range: the run's certified TPR bound over every FPR, which advantage,
    #: relative_risk, failure_mode and the plots describe (``curve`` stays mu-GDP's)
    certificate: RangeBound | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict:
        """The object as JSON-ready data (dicts, lists, numbers and strings)."""
        d = {k: getattr(self, k) for k in ("guarantee", "kind", "fpr", "prior", "attack_power", "posterior",
                                           "relative_risk_at_fpr", "relative_risk", "advantage", "failure_mode")}
        d["grade"] = self.grade.to_dict()
        d["plain_language"] = list(self.plain_language)
        d["notes"] = list(self.notes)
        d["warnings"] = list(self.warnings)
        d["headline"] = self.headline
        d["gaussian_grade"] = self.gaussian_grade.to_dict() if self.gaussian_grade is not None else None
        d["range"] = dict(self.range) if self.range is not None else None
        return json_safe(d)


def _times(ratio: float) -> str:
    """The multiplicative advantage TPR / FPR in the plain sentence: the digits of the table's
    "relative risk for FPR >= ..." (the same quantity, ``fmt(x, up=True)``: 4 significant digits,
    the last rounded up), whole numbers grouped ("12,350", not "1.235e+04"). It read
    ``ceil``'s "721" beside the table's 720.3.

    >>> _times(720.2158), _times(18.2734), _times(12345.6), _times(3.1e20)
    ('720.3', '18.28', '12,350', '3.1e+20')
    """
    text = safe_g(ratio, 4, up=True)  # an upper bound: rounded up
    v = float(text)
    if 1000.0 <= v < 1e15 and v == int(v):
        return f"{int(v):,}"
    return text


def _one_in(fpr: float) -> str:
    """" (1 in 1,000)" for an FPR that is one in a whole number of people, else ""."""
    k = round(1.0 / fpr)
    return f" (1 in {k:,})" if 2 <= k <= 10**6 and abs(k * fpr - 1.0) <= 1e-9 else ""


def plain_risk_words(*, tpr: float, posterior: float, fpr: float, prior: float, relative_risk_at_fpr: float,
                     failure_mode: str, relative_risk: float = math.inf,
                     disclosure: float = 0.0) -> tuple[str, str, str]:
    """An attack risk at one FPR and prior in three plain sentences: the one rule of every surface
    (the Risk page, ``/api/risk``, ``fdpkit risk``, and the privacy report's "In plain words" in
    text, HTML, Markdown, PDF and on the Report page), so that the same numbers read the same.

    Parameters
    ----------
    tpr, posterior : float
        Certified upper bounds on the best attack's TPR at ``fpr`` and on the posterior after a
        positive attack for ``prior`` (de Fondeville Eq. 4): rounded up.
    fpr, prior : float
        The attack's false-positive rate and the attacker's prior (echoed, rounded to nearest).
    relative_risk_at_fpr : float
        sup over FPR ≥ ``fpr`` of TPR / FPR (de Fondeville Def. 7): rounded up.
    failure_mode : {"none", "graceful", "catastrophic"}
        The third sentence's (de Fondeville Thms. 1-2).
    relative_risk, disclosure : float
        The overall relative risk (said for "none") and the probability 1 - f(0) of an output
        that reveals membership (said for "catastrophic"): both rounded up.

    Returns
    -------
    tuple of str
        The TPR sentence, the posterior sentence and the failure-mode sentence.

    Examples
    --------
    >>> s = plain_risk_words(tpr=0.0074, posterior=0.0696, fpr=1e-3, prior=0.01, relative_risk_at_fpr=7.4,
    ...                      failure_mode="graceful")
    >>> s[0][:96]
    'An attack that wrongly accuses 0.10% of the people who are not in the data (1 in 1,000) catches '
    >>> s[1]
    'An attacker who starts 1% sure that a person is in the data can become at most 7.0% sure after a positive attack.'
    """
    if failure_mode not in MODES:
        raise ParameterError(f"failure_mode must be one of {', '.join(MODES)}, got {failure_mode!r}", "failure_mode")
    a = plain_percent(fpr, 2, up=None)
    caught = plain_percent(tpr, 2, up=True)
    caught = ("can catch every one of those who are" if caught == "100.00%" else
              f"catches at most {caught} of those who are ({_times(tpr / fpr)} times its false-positive rate)")
    # the prior is echoed: 1% read "1.0%" on the Risk page beside the report's "1%"
    start = plain_percent(prior, 2, up=None)
    start = start.rstrip("%").rstrip("0").rstrip(".") + "%" if "." in start else start
    return (
        f"An attack that wrongly accuses {a} of the people who are not in the data{_one_in(fpr)} {caught}; no "
        f"attack with a false-positive rate of {a} or more does better than {_times(relative_risk_at_fpr)} times "
        "its false-positive rate.",
        f"An attacker who starts {start} sure that a person is in the data can become at most "
        f"{plain_percent(posterior, 1, up=True)} sure after a positive attack.",
        MODES[failure_mode].format(factor=safe_g(relative_risk, up=True), mass=safe_g(disclosure, 3, up=True)),
    )


def read_guarantee(guarantee: str = "mu", *, mu: float | None = None, epsilon: float | None = None,
                   delta: float | None = None, prior: float = 0.01, fpr: float = 1e-3,
                   n: int | None = None, rho: float | None = None, mu_fpr_min: float | None = None,
                   mu_tau: float | None = None) -> RiskReading:
    """Read a guarantee as attack risk with a graded verdict.

    Parameters
    ----------
    guarantee : {"mu", "epsilon", "epsilon_delta", "zcdp"}
    mu, epsilon, delta, rho : float, optional
        Only the fields of the chosen kind (others raise ``ValueError`` naming them).
    prior : float
        Attacker's prior probability of membership, in [0, 1].
    fpr : float
        The attack's false-positive rate, in (0, 1).
    n : int, optional
        Number of people in the data (for the δ ≥ 1/n warning): a whole number in
        [1, 10¹²].
    mu_fpr_min, mu_tau : float, optional
        The range of a fitted μ (a privacy report's ``guarantee.alpha_min`` and ``tau``; give
        both or neither, ``guarantee="mu"`` only): μ holds for attacks with FPR and FNR ≥
        ``mu_fpr_min`` in (0, 0.5); elsewhere TPR ≤ 1 − G_μ(FPR) + ``mu_tau`` (``mu_tau`` in
        [0, 1]). At an FPR outside the range the reading gives that bound and says so in
        ``range["note"]`` (also the first warning); inside it, the TPR, posterior and grade are
        μ's. Either way ``advantage``, ``relative_risk``, ``relative_risk_at_fpr`` and
        ``failure_mode`` are those of the run's bound over every FPR (``certificate``, sound upper
        bounds: :mod:`fdpkit.risk._range_bound`): the advantage exceeds μ-GDP's by at most τ,
        and blatant disclosure with probability up to τ is not ruled out ("catastrophic").

    Examples
    --------
    >>> r = read_guarantee("epsilon", epsilon=10.0)
    >>> r.grade.label, r.notes[0].startswith("This is the worst case")
    ('no meaningful protection', True)
    >>> r = read_guarantee("mu", mu=1.567, fpr=1e-12, mu_fpr_min=1e-10, mu_tau=8.159e-07)
    >>> r.range["outside"], r.attack_power >= 8.159e-07, r.failure_mode
    (True, True, 'catastrophic')
    """
    curve, name = guarantee_curve(guarantee, mu=mu, epsilon=epsilon, delta=delta, rho=rho)
    p = check_scalar("prior", check_probability("prior", prior))
    a = check_scalar("fpr", check_probability("fpr", fpr, open_low=True, open_high=True))
    if a < MIN_FPR:
        raise ParameterError(f"fpr must be at least {MIN_FPR:.3g} (the smallest normal float: below it the "
                             f"attack's TPR / FPR leaves the floats), got {a:g}", "fpr")
    # -0.0 read "μ = -0" in the headline: the checked values are the ones shown
    mu, epsilon, delta, rho = (None if x is None else float(x) + 0.0 for x in (mu, epsilon, delta, rho))
    if n is not None:  # a count of people: 0.5 skipped the delta >= 1/n warning silently
        n = int(check_real("n", n, low=1, high=MAX_PEOPLE, integer=True, scalar=True))
    given = _check_range(guarantee, mu_fpr_min, mu_tau)
    tpr = float(_risk_tpr(curve, a))
    post = float(posterior(curve, p, a))
    rr_at = float(relative_risk(curve, fpr_min=a))
    rng = None if given is None else _range_reading(curve, mu, a, *given)
    adv, rr_all, mode = float(advantage(curve)), float(relative_risk(curve)), failure_mode(curve)
    g = grade(curve, failure_mode=mode)
    cert = None if given is None else RangeBound(float(mu), *given)  # type: ignore[arg-type]
    if cert is not None and rng is not None:
        # every figure of the run's bound (module docs of fdpkit.risk._range_bound)
        if rng["outside"]:  # the run's bound there: never below mu-GDP's (tau >= 0)
            tpr = float(cert.tpr(a))
            post = _posterior_of(tpr, p, a)
        rr_at = max(rr_at, cert.relative_risk(a))
        adv, rr_all = cert.advantage(adv), cert.relative_risk()
        if cert.tau > 0:  # B(0+) = tau: not ruled out (the grade keeps mu's mode, as the report's)
            rng["failure"] = (f"blatant disclosure not ruled out (probability ≤ τ = {safe_g(cert.tau, 4, up=True)}): "
                              f"catastrophic by the bound; μ-GDP alone: {mode}")
            mode = "catastrophic"
        if bool(cert.outside(REFERENCE_FPR)):
            g = grade_for_tpr(float(cert.tpr(REFERENCE_FPR)))
    words = plain_risk_words(tpr=tpr, posterior=post, fpr=a, prior=p, relative_risk_at_fpr=rr_at,
                             failure_mode=mode, relative_risk=rr_all, disclosure=1.0 - float(curve.f0))
    if cert is not None and cert.tau > 0:  # the run's bound: its own failure-mode sentence
        words = words[:2] + (RANGE_MODE.format(tau=safe_g(cert.tau, 4, up=True), ref=REFERENCE_FPR),)
    plain = words
    notes = [SCALE_NOTE]
    if guarantee != "mu":
        notes.insert(0, WORST_CASE_NOTE)
    if cert is not None:
        notes.insert(0, RANGE_NOTE)
    warnings = plausibility_warnings(mu=mu, epsilon=epsilon, delta=delta if guarantee == "epsilon_delta" else None,
                                     prior=p, n=n)
    if guarantee == "epsilon_delta" and delta is None:
        warnings = [f"δ was left blank: read at δ = {DEFAULT_DELTA:g}. Give the δ of your guarantee."] + list(warnings)
    if rng is not None and rng["outside"]:
        warnings = [rng["note"]] + list(warnings)
    headline, g_gauss = _headline(guarantee, g, mu=mu, epsilon=epsilon, delta=delta, rho=rho)
    return RiskReading(name, guarantee, a, p, tpr, post, rr_at, rr_all, adv, mode, g, plain,
                       tuple(notes), tuple(warnings), curve, headline, g_gauss, rng, cert)


def _check_range(guarantee: str, fpr_min: float | None, tau: float | None) -> tuple[float, float] | None:
    """(mu_fpr_min, mu_tau) checked, or None when neither is given."""
    if fpr_min is None and tau is None:
        return None
    if guarantee != "mu":
        name = "mu_fpr_min" if fpr_min is not None else "mu_tau"
        raise ParameterError(f"{name} (the range of a fitted mu) applies to a mu-GDP guarantee only "
                             f"(guarantee={guarantee!r})", name)
    if fpr_min is None or tau is None:
        missing = "mu_fpr_min" if fpr_min is None else "mu_tau"
        raise ParameterError(f"{missing} is required with {'mu_tau' if fpr_min is None else 'mu_fpr_min'}: "
                             "a mu's range is its smallest FPR and FNR with the slack tau beyond it", missing)
    lo = float(check_real("mu_fpr_min", fpr_min, low=0, high=0.5, low_open=True, high_open=True, scalar=True))
    return lo, float(check_real("mu_tau", tau, low=0, high=1, scalar=True))


def _range_reading(curve: TradeOffCurve, mu: float | None, a: float, fpr_min: float, tau: float) -> dict:
    """Whether FPR ``a`` lies outside the range of a fitted mu, and the sentence that says so."""
    beta = float(curve.beta(a))  # G_mu(a): mu-GDP's FNR
    low, high = a < fpr_min, beta < fpr_min
    note = ""
    if low or high:
        where = (f"this attack's FPR, {a:g}, is below {fpr_min:g}" if low else
                 f"at this FPR μ-GDP's best attack has an FNR below {fpr_min:g} (TPR above 1 − {fpr_min:g})")
        note = (f"The report certifies μ = {mu:g} only for attacks with FPR and FNR ≥ {fpr_min:g}, and {where}. There the run's certificate is TPR ≤ 1 − G_μ(FPR) + τ with "
                f"τ = {safe_g(tau, 4, up=True)}: the attack TPR, posterior and relative risk here are that "
                "bound, larger than μ-GDP's (which would understate the run's risk here).")
    return {"fpr_min": fpr_min, "tau": tau, "outside": bool(low or high), "note": note, "failure": ""}


def _posterior_of(tpr: float, prior: float, fpr: float) -> float:
    """prior TPR / ((1 - prior) FPR + prior TPR) (de Fondeville Eq. 4) for a TPR bound."""
    if prior == 0.0 or tpr == 0.0:
        return 0.0
    return 1.0 / (1.0 + (1.0 - prior) / prior * (fpr / tpr))


def gaussian_equivalent(guarantee: str, *, epsilon: float | None = None, delta: float | None = None,
                        rho: float | None = None) -> tuple[float, str]:
    """mu of the Gaussian mechanism that meets a worst-case guarantee exactly, and how it was read.

    (epsilon, delta) and pure epsilon: mu(epsilon, delta) of Gomez et al. Table 3 (a blank or zero
    delta is read at :data:`DEFAULT_DELTA`, which the text states: no Gaussian mechanism is pure
    epsilon-DP); rho-zCDP: mu = sqrt(2 rho), the Gaussian mechanism that is exactly rho-zCDP.

    >>> round(gaussian_equivalent("epsilon", epsilon=8.0)[0], 3)
    1.666
    """
    if guarantee == "zcdp":
        return math.sqrt(2.0 * float(rho)), f"= √(2ρ) at ρ = {rho:g}"
    d = delta if delta else DEFAULT_DELTA
    how = f"at δ = {d:g}" + (", as no Gaussian mechanism is pure ε-DP" if guarantee == "epsilon" or delta == 0 else "")
    return float(mu_for_epsilon_delta(float(epsilon), d)), how


def _headline(guarantee: str, g: Grade, *, mu=None, epsilon=None, delta=None, rho=None) -> tuple[str, Grade | None]:
    """The plain first sentence: the worst-case grade and, beside it, a Gaussian mechanism's."""
    if guarantee == "mu":
        return f"μ = {mu:g} Gaussian DP: {g.label}.", None
    if guarantee == "zcdp":
        what = f"ρ = {rho:g} zCDP"
    elif guarantee == "epsilon" or delta is None:  # δ = 0 given is read at 0, and said so (it read "as δ was blank")
        what = f"ε = {epsilon:g}" if guarantee == "epsilon" else f"(ε = {epsilon:g}, δ = {DEFAULT_DELTA:g} as δ was blank)"
    else:
        what = f"(ε = {epsilon:g}, δ = {delta:g})"
    worst = "no meaningful protection" if g.level == 3 else f"'{g.label}' protection"
    m, how = gaussian_equivalent(guarantee, epsilon=epsilon, delta=delta, rho=rho)
    if not math.isfinite(m):  # delta = 1: every mechanism meets it, none is compared
        return (f"{what} alone: {worst} in the worst case; δ = 1 allows any mechanism, even one that publishes "
                "the data.", None)
    gg = grade(GaussianCurve(m))
    also = "also " if gg.level == g.level else ""
    return (f"{what} alone: {worst} in the worst case; ask for the mechanism — as a Gaussian mechanism it "
            # the digits of the Convert and Calculator tables beside it (1.67 read beside their 1.667)
            f"would {also}be '{gg.label}' (μ = {safe_g(m, 4, up=True)} {how}).", gg)


__all__ = ["DEFAULT_DELTA", "GUARANTEES", "RiskReading", "check_guarantee_fields", "gaussian_equivalent",
           "guarantee_curve", "plain_risk_words", "read_guarantee"]
