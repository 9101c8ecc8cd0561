"""The two decision workflows of de Fondeville Sec. 5.

Privacy-first (Sec. 5.1): three questions decide which mechanism families are admissible
(Table 1) and which parameter meets the risk limit; then the planned analysis' power.

1. Is blatant disclosure acceptable? No -> exclude mechanisms with f(0) < 1 (catastrophic:
   uniform sampling, (eps, delta)-DP with delta > 0).
2. Is arbitrarily high attacker confidence acceptable? No -> only bounded relative risk
   (pure eps-DP, e.g. Laplace); yes -> graceful mechanisms too (Gaussian / mu-GDP), judged at
   an FPR floor alpha0.
3. The limit: a maximum relative disclosure risk R, or a maximum attack power at alpha0.

Utility-first (Sec. 5.2): the planned analysis and a required power (or a maximum relative
loss of power) give mu_min, read back as risk: posterior for a prior, rho_alpha0, attack power
at alpha0 and epsilon at delta = 1e-5.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from fdpkit._numerics import EPSILON_MAX, check_probability, check_real, json_safe, round_safe, safe_g
from fdpkit.convert import epsilon_for_delta_from_mu
from fdpkit.curves import EpsDeltaCurve, GaussianCurve, LaplaceCurve
from fdpkit.errors import ParameterError
from fdpkit._inputs import plausibility_warnings
from fdpkit.planning.guidance import FAMILIES, GUIDANCE, MU_MIN_NOTE  # noqa: F401  (GUIDANCE: still importable here)
from fdpkit.planning.spec import ZTestSpec, noise_spec
from fdpkit.planning.plan_words import budget_split, noise_sentences
from fdpkit.risk import (
    laplace_epsilon_for_attack_power,
    laplace_epsilon_for_relative_risk,
    mu_for_attack_power,
    mu_for_relative_risk,
    posterior,
    pure_epsilon_for_attack_power,
    relative_risk,
)
from fdpkit.utility import mu_min_for_power_loss, solve_ztest, split_epsilon, split_mu
from fdpkit.risk.grade import grade, grade_for_tpr

@dataclass(frozen=True)
class MechanismOption:
    """One admissible mechanism and its parameter meeting the limit."""

    family: str
    mechanism: str
    parameter: str
    value: float
    #: the planned test's power (per test) with the noise the plan prints (``noise_value_per_test``:
    #: the noise rounded up, so never above the power at the limit's own noise); None without an analysis
    power: float | None
    #: the best attack's TPR at the plan's FPR (1 for value = inf: no noise)
    attack_power: float
    #: Gaussian: rho at FPR >= the plan's FPR (1/FPR when no noise is needed); Laplace: over all FPRs (e^epsilon)
    relative_risk: float
    #: noise to add for one release: Gaussian sd sigma, or Laplace scale b (None without an analysis)
    noise_parameter: str = ""
    noise_scale: float | None = None
    #: tests sharing the budget ``value`` and each test's share (mu / sqrt(k) or epsilon / k)
    tests: int = 1
    value_per_test: float | None = None
    #: sensitivity of the released statistic (None without an analysis)
    sensitivity: float | None = None

    @property
    def noise_value_per_test(self) -> float | None:
        """μ or ε per test of the noise the plan prints (rounded up: what a user adds and a ledger
        proposal accounts), at most ``value_per_test``; None without noise."""
        noise, sens = self.planned_noise, self.sensitivity
        if noise is None or sens is None or not (math.isfinite(noise) and noise > 0 and sens > 0):
            return None
        return sens / round_safe(noise, up=True)

    @property
    def noise_value(self) -> float | None:
        """μ or ε of all the tests together for that noise (√k·μᵢ, k·εᵢ); None without noise."""
        v = self.noise_value_per_test
        return None if v is None else v * (math.sqrt(self.tests) if self.parameter == "mu" else self.tests)

    def value_text(self, total: bool = True) -> str:
        """The μ or ε the plan prints: of the printed noise, rounded up (ε 2.30234 read "2.302"
        here, "2.303" in the ledger); without noise, the limit rounded down."""
        noise = self.noise_value if total else self.noise_value_per_test
        if noise is not None:
            return safe_g(noise, up=True)
        return safe_g(self.value if total else self.value_per_test, up=False)

    @property
    def grade(self):
        """The grade (:func:`fdpkit.risk.grade`) of the mechanism this option plans: the Gaussian
        curve at μ, the Laplace curve at ε (any ε-DP mechanism when tests share it)."""
        if not math.isfinite(self.value):
            return grade_for_tpr(1.0)
        if self.parameter == "mu":
            return grade(GaussianCurve(self.value))
        return grade(LaplaceCurve(self.value) if self.tests == 1 else EpsDeltaCurve(self.value, 0.0))

    @property
    def planned_noise(self) -> float | None:
        """The noise this option plans: ``noise_scale``, None where the limit does not bind
        (``value`` = ∞: "none needed", as the plan's text says; a scale of 0 read as a plan)."""
        return self.noise_scale if math.isfinite(self.value) else None

    def to_dict(self) -> dict:
        """The object as JSON-ready data (dicts, lists, numbers and strings), with its grade."""
        return json_safe({**self.__dict__, "noise_scale": self.planned_noise, "grade": self.grade.to_dict(),
                          "noise_value": self.noise_value, "noise_value_per_test": self.noise_value_per_test,
                          "value_text": self.value_text(), "value_per_test_text": self.value_text(total=False)})


@dataclass(frozen=True)
class PrivacyFirstPlan:
    """A privacy-first plan (de Fondeville Sec. 5.1): which mechanism families the two
    questions admit, and for each admissible one the parameter that meets the risk cap.

    Attributes
    ----------
    admissible_families : tuple of str
        Families left by the answers ("catastrophic", "graceful", "bounded").
    excluded : dict
        Each excluded family with the reason (which answer ruled it out).
    options : tuple of MechanismOption
        One mechanism per admissible family with its parameter (μ or ε), the power of the
        planned test, the attack power it allows and the noise scale to add.
    fpr : float
        The false-positive rate at which the attack power is capped.
    analysis : ZTestSpec or None
        The planned test, if one was given (then the options carry power and noise).
    notes : tuple of str
        Extra guidance (e.g. on multiple tests).
    """

    admissible_families: tuple[str, ...]
    excluded: dict[str, str]
    options: tuple[MechanismOption, ...]
    fpr: float
    analysis: ZTestSpec | None
    notes: tuple[str, ...] = field(default=())

    @property
    def sigma(self) -> float | None:
        """Gaussian noise sd of the Gaussian option (None if no Gaussian option or analysis, or
        where the limit does not bind it: μ = ∞, no noise planned)."""
        return next((o.planned_noise for o in self.options if o.noise_parameter == "sigma"), None)

    @property
    def laplace_scale(self) -> float | None:
        """Laplace scale b of the Laplace option (None without an analysis or where the limit
        does not bind it)."""
        return next((o.planned_noise for o in self.options if o.noise_parameter == "b"), None)

    @property
    def recommended(self) -> MechanismOption | None:
        """The option to follow: the first whose limit binds (a finite μ or ε), in the order of
        ``options`` (the Gaussian option first where it is admissible). Where the limit does
        not bind the Gaussian option (a relative-risk limit R ≥ 1/FPR: μ = ∞, no noise), it is
        the Laplace option; its ``grade`` is the plan's and ``mechanism`` its spec."""
        return next((o for o in self.options if math.isfinite(o.value)), self.options[0] if self.options else None)

    def headline(self) -> str:
        """What to do, first: the recommended option, its noise and grade, and where the limit
        does not bind the Gaussian option, why and what would make it bind."""
        rec = self.recommended
        if rec is None:
            return "No mechanism is admissible."
        name = "Gaussian" if rec.parameter == "mu" else "Laplace"
        sym = "μ" if rec.parameter == "mu" else "ε"
        value = f"{sym} = {rec.value_text()}" + (" in total" if rec.tests > 1 else "")
        noise = ""
        if rec.noise_scale is not None and math.isfinite(rec.value):
            scale = round_safe(rec.noise_scale, up=True)
            noise = (f", noise {'sd σ' if rec.parameter == 'mu' else 'scale b'} = {scale!r}"
                     + (" in each test" if rec.tests > 1 else ""))
        text = f"Recommended: the {name} option ({value}{noise}; protection: {rec.grade.label})."
        if not math.isfinite(rec.value):
            return "The limit does not bind any admissible mechanism: by this criterion no noise is needed."
        if any(not math.isfinite(o.value) for o in self.options):
            r_limit = rec.relative_risk  # the Laplace option meets R exactly: e^epsilon = R
            text += (f" The relative-risk limit does not bind Gaussian noise at FPR ≥ {self.fpr:.4g} (no attack "
                     f"there has relative risk above 1/FPR = {safe_g(1.0 / self.fpr, up=True)}), so the Gaussian option plans "
                     f"none; for a Gaussian plan, lower the FPR floor below 1/R = {safe_g(1.0 / r_limit, up=False)} or limit "
                     f"the attack TPR instead.")
        return text

    def mechanisms(self) -> list[dict | None]:
        """Each option's mechanism spec (:func:`noise_spec`), None where no noise is planned; its
        noise scale as the plan prints it (rounded up: the noise a user copies and adds)."""
        sens = self.analysis.sensitivity if self.analysis else None
        return [noise_spec(o.noise_parameter, None if o.noise_scale is None or not math.isfinite(o.noise_scale)
                           else round_safe(o.noise_scale, up=True), sens, o.tests) for o in self.options]

    @property
    def mechanism(self) -> dict | None:
        """The recommended option's mechanism spec with its sensitivity (what the ledger's
        proposal form and ``/api/plan``'s ``"mechanism"`` carry); None without an analysis."""
        rec = self.recommended
        return None if rec is None else self.mechanisms()[self.options.index(rec)]

    def to_dict(self) -> dict:
        """The plan as JSON data (the CLI's and ``/api/plan``'s shape), with the noise to add
        in words (``noise``), the planned ``mechanism`` spec and plausibility warnings."""
        rec = self.recommended
        return {
            "headline": self.headline(),
            # the option to follow (its index in "options"): "grade" and "mechanism" are its
            "recommended": None if rec is None else self.options.index(rec),
            "mechanism": self.mechanism,
            "sigma": json_safe(self.sigma),
            "laplace_scale": json_safe(self.laplace_scale),
            "sensitivity": self.analysis.sensitivity if self.analysis else None,
            "noise": noise_sentences(self),
            "warnings": plausibility_warnings(mu=next((o.value for o in self.options if o.parameter == "mu"
                                                        and math.isfinite(o.value)), None)),
            "admissible_families": list(self.admissible_families),
            "family_descriptions": {f: FAMILIES[f] for f in self.admissible_families},
            "excluded": dict(self.excluded),
            # each option's spec (``mechanism``: what the ledger takes) and its name in words
            "options": [{**o.to_dict(), "name": o.mechanism, "mechanism": m}
                        for o, m in zip(self.options, self.mechanisms())],
            "fpr": self.fpr,
            "analysis": self.analysis.to_dict() if self.analysis else None,
            "notes": list(self.notes),
            "budget_split": budget_split(self),
            "grade": rec.grade.to_dict() if rec is not None else None,
        }


#: Largest ``max_relative_risk`` a privacy-first plan takes: e^EPSILON_MAX (about 1.01e304),
#: where the Laplace option's epsilon = log R reaches the largest epsilon of a Laplace curve.
RELATIVE_RISK_MAX = math.exp(EPSILON_MAX)


def _no_release(limit: str, value: float, fpr: float) -> ParameterError:
    """The error for a limit so close to no information at all that only mu = 0 or
    epsilon = 0 (releasing nothing) meets it, under its public name."""
    return ParameterError(f"{limit}={value!r} is too close to no attack advantage at fpr={fpr!r}: only a release "
                          f"of no information (μ = 0, ε = 0) meets it; allow a larger {limit}", limit,
                          (limit, "fpr"))


def privacy_first(*, blatant_disclosure_ok: bool, high_confidence_ok: bool,
                  max_relative_risk: float | None = None, max_attack_power: float | None = None,
                  fpr: float = 1e-3, analysis: ZTestSpec | None = None) -> PrivacyFirstPlan:
    """Privacy-first guide (de Fondeville Sec. 5.1): answers to the three questions ->
    admissible families, the parameter meeting the limit, and the analysis' power.

    Examples
    --------
    >>> plan = privacy_first(blatant_disclosure_ok=False, high_confidence_ok=True,
    ...                      max_attack_power=0.05, fpr=1e-3)
    >>> [o.mechanism for o in plan.options]
    ['Gaussian (mu-GDP)', 'Laplace']
    """
    if (max_relative_risk is None) == (max_attack_power is None):
        raise ParameterError("give exactly one limit: max_relative_risk or max_attack_power", "max_relative_risk", ("max_relative_risk", "max_attack_power"))
    # validated here, under the public names (the solvers below name their own arguments)
    for flag, value in (("blatant_disclosure_ok", blatant_disclosure_ok), ("high_confidence_ok", high_confidence_ok)):
        if not isinstance(value, (bool, np.bool_)):
            raise ParameterError(f"{flag} must be True or False (the answer to a yes/no question), got {value!r}", flag)
    if max_relative_risk is not None:
        # 1 would allow no information at all (mu = 0: no release meets it); above
        # RELATIVE_RISK_MAX the Laplace option's epsilon = log R is beyond any Laplace curve
        max_relative_risk = check_real("max_relative_risk", max_relative_risk, low=1.0, low_open=True, scalar=True)
        if max_relative_risk > RELATIVE_RISK_MAX:
            raise ParameterError(f"max_relative_risk must be in (1, {RELATIVE_RISK_MAX:.6g}] (the Laplace option's "
                                 f"epsilon = log R is at most {EPSILON_MAX:g}), got {max_relative_risk!r}",
                                 "max_relative_risk")
    if max_attack_power is not None:
        max_attack_power = check_real("max_attack_power", max_attack_power, low=0.0, high=1.0, low_open=True,
                                      scalar=True)
    fpr = check_real("fpr", fpr, low=0.0, high=1.0, low_open=True, high_open=True, scalar=True)
    if max_attack_power is not None:
        # a limit of 1 bounds nothing (no largest finite mu or epsilon meets it); one at or
        # below the FPR allows no release at all (a random guess already has TPR = FPR)
        if max_attack_power >= 1.0:
            raise ParameterError(f"max_attack_power must be below 1 (a limit of 1 allows every attack and "
                                 f"bounds no mechanism), got {max_attack_power!r}", "max_attack_power")
        if max_attack_power <= fpr:
            raise ParameterError(f"max_attack_power must be above fpr (a random guess already reaches TPR = FPR, "
                                 f"so a lower limit allows no release), got max_attack_power={max_attack_power!r} "
                                 f"<= fpr={fpr!r}", "max_attack_power", ("max_attack_power", "fpr"))
    limit = "max_relative_risk" if max_relative_risk is not None else "max_attack_power"
    excluded: dict[str, str] = {}
    families = ["bounded"]
    if high_confidence_ok:
        families.insert(0, "graceful")
    else:
        excluded["graceful"] = "attacker confidence must stay bounded (question 2: no)"
    if blatant_disclosure_ok:
        families.append("catastrophic")
    else:
        excluded["catastrophic"] = "blatant disclosure is not acceptable (question 1: no)"
    options = []
    notes = []
    # k tests about the same people share the budget that meets the limit (the worst case)
    k = analysis.tests if analysis is not None else 1
    if "graceful" in families:
        if max_relative_risk is not None and 1.0 / fpr <= max_relative_risk:
            # at FPR >= fpr no attack reaches a relative risk above TPR/FPR <= 1/fpr: the limit
            # cannot bind, and the Gaussian option is the release without noise, whose
            # relative risk rho_fpr = 1/fpr (finite, within the limit) is what it reports
            mu = math.inf
            notes.append(f"The relative-risk limit R = {max_relative_risk:.4g} does not bind the Gaussian option "
                         f"at FPR ≥ {fpr:.4g}: no attack there has relative risk above 1/FPR = {1.0 / fpr:.4g}, "
                         f"so by this criterion no Gaussian noise is needed (μ = ∞). A release without noise still "
                         f"reveals members to attacks with a lower FPR: lower the FPR floor below 1/R = "
                         f"{1.0 / max_relative_risk:.4g} for the limit to bind, or choose μ for the analysis "
                         f"(utility first).")
        elif max_relative_risk is not None:
            mu = mu_for_relative_risk(max_relative_risk, fpr)
            if not math.isfinite(mu):  # R * fpr rounded up to 1: the largest TPR below 1 instead
                mu = mu_for_attack_power(math.nextafter(1.0, 0.0), fpr)
        else:
            mu = mu_for_attack_power(max_attack_power, fpr)
        if not mu > 0:
            raise _no_release(limit, max_relative_risk if max_attack_power is None else max_attack_power, fpr)
        g = GaussianCurve(mu) if math.isfinite(mu) else None
        mu_i = split_mu(mu, k)
        options.append(MechanismOption(
            "graceful", "Gaussian (mu-GDP)", "mu", mu, None,
            float(g.tpr(fpr)) if g else 1.0, relative_risk(g, fpr_min=fpr) if g else max(1.0, 1.0 / fpr),
            "sigma", analysis.sigma(mu_i) if analysis else None, k, mu_i, analysis.sensitivity if analysis else None))
    if k > 1:
        # k Laplace releases compose to eps-DP, not to one Laplace curve: meet the limit
        # for every eps-DP mechanism (the worst case f_{eps,0}), then split eps / k
        eps = (laplace_epsilon_for_relative_risk(max_relative_risk) if max_relative_risk is not None
               else pure_epsilon_for_attack_power(max_attack_power, fpr))
        lap = EpsDeltaCurve(eps, 0.0) if math.isfinite(eps) else None
    else:
        eps = (laplace_epsilon_for_relative_risk(max_relative_risk) if max_relative_risk is not None
               else laplace_epsilon_for_attack_power(max_attack_power, fpr))
        lap = LaplaceCurve(eps) if math.isfinite(eps) else None
    if not eps > 0:
        raise _no_release(limit, max_relative_risk if max_attack_power is None else max_attack_power, fpr)
    eps_i = split_epsilon(eps, k) if eps > 0 else 0.0
    options.append(MechanismOption(
        "bounded", "Laplace", "epsilon", eps, None,
        float(lap.tpr(fpr)) if lap else 1.0, relative_risk(lap) if lap else math.inf,
        "b", analysis.laplace_scale(eps_i) if analysis else None, k, eps_i, analysis.sensitivity if analysis else None))
    if analysis is not None and analysis.groups == 2:
        notes.append("Two groups: each group's statistic gets the planned noise (each person is in one group); "
                     "the Laplace option's power is exact for the difference of two Laplace noises.")
    if k > 1:
        notes.append(f"{k} tests about the same people share the budget: the Gaussian option's μ is the total, "
                     f"μ/√{k} per test (Gaussian DP composition, Dong et al. Cor. 3.3); the Laplace option's ε is "
                     f"the total, ε/{k} per test (basic composition of pure ε-DP), its risk read from the worst "
                     f"ε-DP curve. Power is per test, at level {analysis.level:.3g}.")
    if "catastrophic" in families:
        notes.append("Mechanisms that may fail catastrophically are admissible but carry a "
                     "probability of blatant disclosure; fdpkit does not recommend them for "
                     "release to untrusted recipients (de Fondeville Sec. 3.2.1).")
    options = [_power_at_printed_noise(o, analysis) for o in options]
    return PrivacyFirstPlan(tuple(families), excluded, tuple(options), fpr, analysis, tuple(notes))


def _power_at_printed_noise(option: MechanismOption, analysis: ZTestSpec | None) -> MechanismOption:
    """``option`` with the planned test's power at the noise the plan prints (σ or b rounded up,
    the noise a user adds: its μ or ε, ``noise_value_per_test``, is at most the limit's, so the
    power is never above the limit's); where no noise is planned, at the limit's own value. The
    power was read at the limit: n 20, effect 0.75, TPR limit 0.02 printed 0.9489 where the
    printed σ 0.04825 gives 0.94885."""
    if analysis is None:
        return option
    printed = option.noise_value_per_test
    value = option.value_per_test if printed is None else min(printed, option.value_per_test or math.inf)
    power = analysis.power(mu=value) if option.parameter == "mu" else analysis.laplace_power(epsilon=value)
    return replace(option, power=power)


@dataclass(frozen=True)
class UtilityFirstPlan:
    """A utility-first plan (de Fondeville Sec. 5.2): the smallest μ at which the planned
    test keeps the required power, and what that μ allows an attacker.

    Attributes
    ----------
    analysis : ZTestSpec
        The planned test.
    criterion : str
        The power requirement in words.
    mu_min : float
        Smallest μ (per test) meeting it; ``inf`` when unreachable.
    power, nonprivate_power : float
        The test's power at ``mu_min`` and without noise.
    prior, fpr : float
        The reference attacker's prior and false-positive rate.
    posterior, relative_risk, attack_power : float
        What the best attack reaches at ``fpr`` under the noise the plan prints (``sigma``
        rounded down to 4 digits, the noise a user adds: μ = :attr:`mu_of_noise`, a little
        above ``mu_min``), all tests together.
    epsilon_at_1e5 : float
        ε at δ = 1e-5 of that noise (all tests together).
    reachable : bool
        Whether any finite μ meets the requirement; ``reason`` says why not.
    """

    analysis: ZTestSpec
    criterion: str
    mu_min: float
    power: float
    nonprivate_power: float
    prior: float
    fpr: float
    posterior: float
    relative_risk: float
    attack_power: float
    epsilon_at_1e5: float
    reachable: bool
    reason: str = ""

    @property
    def sigma(self) -> float:
        """Gaussian noise sd to add to the released statistic at μ_min: sensitivity / μ_min."""
        return self.analysis.sigma(self.mu_min) if math.isfinite(self.mu_min) else 0.0

    @property
    def mu_of_noise(self) -> float:
        """μ per test of the noise the plan prints and a ledger proposal carries: the sensitivity
        over ``sigma`` rounded down to 4 digits (at least ``mu_min``; the risk figures are its)."""
        return _mu_of_printed_sigma(self.analysis, self.mu_min)

    @property
    def tests(self) -> int:
        """Number of tests sharing the budget (from the analysis)."""
        return self.analysis.tests

    def epsilon_for_delta(self, delta: float) -> float:
        """ε at ``delta`` of the noise the plan prints, all tests together (as
        :attr:`epsilon_at_1e5` at δ = 1e-5): the closed form of μ-GDP (Dong et al. Cor. 2.13)
        at :attr:`mu_of_noise`'s total; ``inf`` when no finite μ meets the criterion. For a
        release whose budget is set at another δ (a census limit at 1e-6).

        Examples
        --------
        >>> plan = utility_first(analysis=ZTestSpec(effect=0.1, n=60, sd=0.25, alpha=0.05), max_relative_loss=0.05)
        >>> round(plan.epsilon_for_delta(1e-5), 2) == round(plan.epsilon_at_1e5, 2), round(plan.epsilon_for_delta(1e-6), 2)
        (True, 5.69)
        """
        d = float(check_probability("delta", delta, open_low=True, open_high=True))
        if not math.isfinite(self.mu_min):
            return math.inf
        return float(epsilon_for_delta_from_mu(self.analysis.mu_total(self.mu_of_noise), d))

    @property
    def mu_total(self) -> float:
        """GDP budget of all the tests together: √tests · ``mu_min`` (``mu_min`` is per test)."""
        return self.analysis.mu_total(self.mu_min)

    @property
    def laplace_scale(self) -> None:
        """No Laplace mechanism is planned by the utility-first guide (it plans μ)."""
        return None

    @property
    def mechanism(self) -> dict | None:
        """The planned Gaussian mechanism's spec with its sensitivity, once per test
        (:func:`noise_spec`); None when no finite μ meets the criterion. Its σ is the one the
        plan prints (rounded down, for the power: the noise a user copies and adds), so that
        a ledger proposal accounts the noise that is added (the exact σ is a little more
        private than the printed one)."""
        finite = math.isfinite(self.mu_min) and math.isfinite(self.sigma) and self.sigma > 0
        return noise_spec("sigma", round_safe(self.sigma, up=False) if finite else None, self.analysis.sensitivity,
                          self.tests)

    def to_dict(self) -> dict:
        """The plan as JSON data, with the noise scale ``sigma``, the budget split over the
        tests and the noise to add in words."""
        d = json_safe({k: v for k, v in self.__dict__.items() if k != "analysis"})
        d["analysis"] = self.analysis.to_dict()
        d["sensitivity"] = self.analysis.sensitivity
        d["sigma"] = json_safe(self.sigma)
        d["tests"] = self.tests
        d["mu_total"] = json_safe(self.mu_total)
        d["mu_of_noise"] = json_safe(self.mu_of_noise)
        d["budget_split"] = budget_split(self)
        d["noise"] = noise_sentences(self)
        d["warnings"] = plausibility_warnings(prior=self.prior, mu=self.mu_min if math.isfinite(self.mu_min) else None)
        d["notes"] = self.notes
        d["grade"] = self.grade.to_dict()
        d["mechanism"] = self.mechanism
        return d

    @property
    def notes(self) -> list[str]:
        """Which criterion and level give de Fondeville's printed μ_min (the numbers depend
        on both; shared/reference/published.json)."""
        return [MU_MIN_NOTE]

    @property
    def grade(self):
        """The grade (:func:`fdpkit.risk.grade`) of the planned Gaussian mechanism, all tests
        together, at the noise the plan prints (:attr:`mu_of_noise`); "no meaningful protection"
        when no finite μ is planned."""
        m = self.analysis.mu_total(self.mu_of_noise)
        return grade(GaussianCurve(m)) if math.isfinite(m) else grade_for_tpr(1.0)


def _mu_of_printed_sigma(analysis: ZTestSpec, mu: float) -> float:
    """mu of the Gaussian noise sd the plan prints for ``mu`` (sensitivity / mu rounded down to 4
    digits, the noise a user adds): at least ``mu``; ``mu`` itself when not finite."""
    if not (math.isfinite(mu) and mu > 0):
        return mu
    printed = round_safe(analysis.sigma(mu), up=False)
    return max(mu, analysis.sensitivity / printed) if printed > 0 else mu


def utility_first(*, analysis: ZTestSpec, required_power: float | None = None,
                  max_relative_loss: float | None = None, prior: float = 0.01,
                  fpr: float = 1e-3) -> UtilityFirstPlan:
    """Utility-first guide (de Fondeville Sec. 5.2): the smallest μ keeping the planned
    analysis useful, and what that μ means for an attacker.

    Examples
    --------
    >>> spec = ZTestSpec(effect=0.2, n=100, sd=0.25, alpha=0.01)
    >>> plan = utility_first(analysis=spec, max_relative_loss=0.01)
    >>> round(plan.mu_min, 3)
    0.286
    """
    if (required_power is None) == (max_relative_loss is None):
        raise ParameterError("give exactly one criterion: required_power or max_relative_loss", "required_power", ("required_power", "max_relative_loss"))
    if not isinstance(analysis, ZTestSpec):
        raise ParameterError(f"analysis must be a ZTestSpec, got {type(analysis).__name__}", "analysis")
    # validated here, under the public names (the solvers below name their own arguments)
    if required_power is not None:
        required_power = check_real("required_power", required_power, low=0.0, high=1.0, low_open=True,
                                    high_open=True, scalar=True)
    if max_relative_loss is not None:
        max_relative_loss = check_real("max_relative_loss", max_relative_loss, low=0.0, high=1.0,
                                       low_open=True, high_open=True, scalar=True)
    prior = check_real("prior", prior, low=0.0, high=1.0, scalar=True)
    fpr = check_real("fpr", fpr, low=0.0, high=1.0, low_open=True, high_open=True, scalar=True)
    best = analysis.power(mu=math.inf)
    kw = analysis._kw()
    side = {"larger": "one-sided", "smaller": "one-sided", "two-sided": "two-sided"}[analysis.alternative]
    level = f"{side} Z-test at level {analysis.level:.3g}" + (" per test" if analysis.tests > 1 else "")
    if max_relative_loss is not None:
        mu = mu_min_for_power_loss(max_relative_loss=max_relative_loss, **kw)
        criterion, ok, reason = (f"power >= {(1 - max_relative_loss) * 100:.6g}% of the non-private power, {level}",
                                 True, "")
    else:
        sol = solve_ztest(power=required_power, **kw)
        mu, ok, reason = sol.value, sol.converged, sol.reason
        criterion = f"power >= {required_power:g}, {level}"
    if not math.isfinite(mu):
        return UtilityFirstPlan(analysis, criterion, mu, best, best, prior, fpr, 1.0, math.inf, 1.0,
                                math.inf, False, reason)
    # mu is each test's; the attacker sees all k releases: read the risk at the total, of the
    # noise the plan prints (rounded down for the power: TPR 0.002522 was read at mu_min 0.28597
    # while sigma 0.03496 gives mu 0.28604 and TPR 0.002523)
    mu_all = analysis.mu_total(_mu_of_printed_sigma(analysis, mu))
    g = GaussianCurve(mu_all)
    return UtilityFirstPlan(
        analysis, criterion, mu, analysis.power(mu=mu), best, prior, fpr,
        float(posterior(g, prior, fpr)), relative_risk(g, fpr_min=fpr), float(g.tpr(fpr)),
        float(epsilon_for_delta_from_mu(mu_all, 1e-5)), ok, reason,
    )
