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
from dataclasses import dataclass, field
from typing import Any

from fdpkit._numerics import check_real, json_safe
from fdpkit.convert import epsilon_for_delta
from fdpkit.curves import GaussianCurve, LaplaceCurve
from fdpkit.planning.spec import ZTestSpec
from fdpkit.risk import (
    attack_power,
    laplace_epsilon_for_attack_power,
    laplace_epsilon_for_relative_risk,
    mu_for_attack_power,
    mu_for_relative_risk,
    posterior,
    relative_risk,
)
from fdpkit.utility import mu_min_for_power_loss, solve_ztest

FAMILIES = {
    "catastrophic": "mechanisms that can fail catastrophically (f(0) < 1): uniform random sampling, "
                    "(eps, delta)-DP with delta > 0",
    "graceful": "gracefully failing mechanisms (unbounded relative risk, f(0) = 1): Gaussian / mu-GDP",
    "bounded": "bounded relative risk: pure eps-DP such as the Laplace mechanism",
}


@dataclass(frozen=True)
class MechanismOption:
    """One admissible mechanism and its parameter meeting the limit."""

    family: str
    mechanism: str
    parameter: str
    value: float
    power: float | None
    attack_power: float
    relative_risk: float

    def to_dict(self) -> dict:
        return json_safe(dict(self.__dict__))


@dataclass(frozen=True)
class PrivacyFirstPlan:
    admissible_families: tuple[str, ...]
    excluded: dict[str, str]
    options: tuple[MechanismOption, ...]
    fpr: float
    analysis: ZTestSpec | None
    notes: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict:
        return {
            "admissible_families": list(self.admissible_families),
            "family_descriptions": {f: FAMILIES[f] for f in self.admissible_families},
            "excluded": dict(self.excluded),
            "options": [o.to_dict() for o in self.options],
            "fpr": self.fpr,
            "analysis": self.analysis.to_dict() if self.analysis else None,
            "notes": list(self.notes),
        }


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
        raise ValueError("give exactly one limit: max_relative_risk or max_attack_power")
    # validated here, under the public names (the solvers below name their own arguments)
    if max_relative_risk is not None:
        max_relative_risk = check_real("max_relative_risk", max_relative_risk, low=1.0, scalar=True)
    if max_attack_power is not None:
        max_attack_power = check_real("max_attack_power", max_attack_power, low=0.0, high=1.0, low_open=True,
                                      scalar=True)
    fpr = check_real("fpr", fpr, low=0.0, high=1.0, low_open=True, high_open=True, scalar=True)
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
    if "graceful" in families:
        if max_relative_risk is not None:
            mu = mu_for_relative_risk(max_relative_risk, fpr)
        else:
            mu = mu_for_attack_power(max_attack_power, fpr)
        g = GaussianCurve(mu) if math.isfinite(mu) else None
        options.append(MechanismOption(
            "graceful", "Gaussian (mu-GDP)", "mu", mu,
            analysis.power(mu=mu) if analysis else None,
            attack_power(g, fpr) if g else 1.0, relative_risk(g, fpr_min=fpr) if g else math.inf))
    if max_relative_risk is not None:
        eps = laplace_epsilon_for_relative_risk(max_relative_risk)
    else:
        eps = laplace_epsilon_for_attack_power(max_attack_power, fpr)
    lap = LaplaceCurve(eps) if math.isfinite(eps) else None
    options.append(MechanismOption(
        "bounded", "Laplace", "epsilon", eps,
        analysis.laplace_power(epsilon=eps) if analysis else None,
        attack_power(lap, fpr) if lap else 1.0, relative_risk(lap) if lap else math.inf))
    if "catastrophic" in families:
        notes.append("Mechanisms that may fail catastrophically are admissible but carry a "
                     "probability of blatant disclosure; fdpkit does not recommend them for "
                     "release to untrusted recipients (de Fondeville Sec. 3.2.1).")
    return PrivacyFirstPlan(tuple(families), excluded, tuple(options), fpr, analysis, tuple(notes))


@dataclass(frozen=True)
class UtilityFirstPlan:
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

    def to_dict(self) -> dict:
        d = json_safe({k: v for k, v in self.__dict__.items() if k != "analysis"})
        d["analysis"] = self.analysis.to_dict()
        return d


def utility_first(*, analysis: ZTestSpec, required_power: float | None = None,
                  max_relative_loss: float | None = None, prior: float = 0.01,
                  fpr: float = 1e-3) -> UtilityFirstPlan:
    """Utility-first guide (de Fondeville Sec. 5.2): the smallest mu keeping the planned
    analysis useful, and what that mu means for an attacker.

    Examples
    --------
    >>> spec = ZTestSpec(effect=0.2, n=100, sd=0.25, alpha=0.01)
    >>> plan = utility_first(analysis=spec, max_relative_loss=0.01)
    >>> round(plan.mu_min, 3)
    0.286
    """
    if (required_power is None) == (max_relative_loss is None):
        raise ValueError("give exactly one criterion: required_power or max_relative_loss")
    if not isinstance(analysis, ZTestSpec):
        raise ValueError(f"analysis must be a ZTestSpec, got {type(analysis).__name__}")
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
    if max_relative_loss is not None:
        mu = mu_min_for_power_loss(n=analysis.n, effect=analysis.effect, sd=analysis.sd,
                                   alpha=analysis.alpha, data_range=analysis.data_range,
                                   max_relative_loss=max_relative_loss, alternative=analysis.alternative)
        criterion, ok, reason = f"power >= {1 - max_relative_loss:.0%} of the non-private power", True, ""
    else:
        sol = solve_ztest(n=analysis.n, effect=analysis.effect, power=required_power, sd=analysis.sd,
                          alpha=analysis.alpha, data_range=analysis.data_range,
                          alternative=analysis.alternative)
        mu, ok, reason = sol.value, sol.converged, sol.reason
        criterion = f"power >= {required_power:g}"
    if not math.isfinite(mu):
        return UtilityFirstPlan(analysis, criterion, mu, best, best, prior, fpr, 1.0, math.inf, 1.0,
                                math.inf, False, reason)
    g = GaussianCurve(mu)
    return UtilityFirstPlan(
        analysis, criterion, mu, analysis.power(mu=mu), best, prior, fpr,
        float(posterior(g, prior, fpr)), relative_risk(g, fpr_min=fpr), attack_power(g, fpr),
        float(epsilon_for_delta(mu, 1e-5)), ok, reason,
    )
