"""A plan's noise in words and its budget split as data (:mod:`fdpkit.planning.guides`'s
plans, for the Plan page, ``fdpkit plan`` and the plans' ``to_dict``): the noise scales
rounded towards the side the plan guarantees, the μ or ε they give rounded up."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from fdpkit._numerics import json_safe, round_safe, safe_g, safe_text

if TYPE_CHECKING:
    from fdpkit.planning.guides import PrivacyFirstPlan, UtilityFirstPlan


def _utility_first(plan: "PrivacyFirstPlan | UtilityFirstPlan") -> bool:
    """Whether ``plan`` is utility-first (a privacy-first plan lists mechanism options)."""
    return not hasattr(plan, "options")


def noise_sentences(plan: "PrivacyFirstPlan | UtilityFirstPlan") -> list[str]:
    """What to add, in words: the noise scale for the user's sensitivity."""
    a = plan.analysis
    if a is None:
        return ["Give the planned analysis to get the noise scale (it depends on the sensitivity)."]
    what = {"mean": f"the mean (sensitivity R/n = {a.sensitivity:.4g})",
            "proportion": f"the proportion (sensitivity 1/n = {a.sensitivity:.4g})",
            "count": "the count (sensitivity 1)"}[a.statistic]
    groups = " of each group" if a.groups == 2 else ""
    out = []
    # noise scales are printed rounded towards the side the plan guarantees: privacy-first noise
    # up (the printed b = 0.002556 of b = 0.0025562 missed the attack-power limit), utility-first
    # noise down (its power requirement), with the mu it then gives rounded up
    if _utility_first(plan):
        if math.isfinite(plan.mu_min):
            sigma = round_safe(plan.sigma, up=False)
            out.append(f"Add Gaussian noise with sd σ = {sigma!r} to {what}{groups}: this is "
                       f"μ = {safe_text(plan.mu_of_noise, up=True)} Gaussian DP per release.")
        else:
            out.append("No amount of noise reaches the required power: change the analysis first.")
    else:
        rec = plan.recommended
        for o in sorted(plan.options, key=lambda o: o is not rec):  # what to do first
            if o.noise_scale is None:
                continue
            sym = "μ" if o.noise_parameter == "sigma" else "ε"
            if not math.isfinite(o.value):  # the limit does not bind (the plan's notes say why)
                name = "Gaussian" if o.noise_parameter == "sigma" else "Laplace"
                out.append(f"{name} mechanism: the limit asks for no noise ({sym} = ∞): at FPR ≥ {plan.fpr:.4g} "
                           f"no attack's relative risk exceeds 1/FPR = {safe_g(1.0 / plan.fpr, up=True)}; follow the "
                           f"recommended option, or lower the FPR floor for Gaussian noise that meets the limit.")
                continue
            # the μ or ε of the noise printed here, rounded up (MechanismOption.value_text)
            value = (f"{sym} = {o.value_text(total=False)} per test, {o.value_text()} in total"
                     if o.tests > 1 else f"{sym} = {o.value_text()}")
            per = " in each test" if o.tests > 1 else ""
            scale = round_safe(o.noise_scale, up=True)
            if o.noise_parameter == "sigma":
                out.append(f"Gaussian mechanism: add noise with sd σ = {scale!r} to {what}{groups}{per} "
                           f"({value}).")
            else:
                out.append(f"Laplace mechanism: add noise with scale b = {scale!r} to {what}{groups}{per} "
                           f"({value}; sd √2·b = {safe_text(math.sqrt(2) * scale, up=True)}).")
    if a.tests > 1:
        if _utility_first(plan):
            # the noise's total (2.7157 read "2.714", the total at mu_min, beside risk readings at 2.7157)
            out.append(f"With {a.tests} tests about the same people, each release gets this noise and together "
                       f"they are √{a.tests} × μ = {safe_g(a.mu_total(plan.mu_of_noise), up=True)} Gaussian DP (Dong "
                       f"et al. Cor. 3.3); the risk readings are for that total.")
        else:
            out.append(f"With {a.tests} tests about the same people, the budget is split: μ/√{a.tests} per test "
                       f"(Gaussian DP composition) or ε/{a.tests} per test (basic composition of pure ε-DP); "
                       f"the noise above is per test.")
    return out


def budget_split(plan: "PrivacyFirstPlan | UtilityFirstPlan") -> dict:
    """How the tests share the privacy budget and the level (multiple testing), as data."""
    a = plan.analysis
    k = a.tests if a is not None else 1
    d: dict[str, Any] = {"tests": k, "correction": a.correction if a else None,
                         "alpha": a.alpha if a else None, "alpha_per_test": a.level if a else None,
                         "rule": ("Gaussian DP: mu_total = sqrt(sum mu_i^2), equal split mu_i = mu / sqrt(k) "
                                  "(Dong et al. Cor. 3.3); pure epsilon-DP: epsilon_i = epsilon / k (basic "
                                  "composition); tests assumed to be about the same people")}
    if _utility_first(plan):
        d.update(mu_per_test=plan.mu_min, mu_total=plan.mu_total, sigma_per_test=plan.sigma,
                 noise_mu_per_test=plan.mu_of_noise, noise_mu_total=a.mu_total(plan.mu_of_noise) if a else None)
    else:
        for o in plan.options:
            if o.parameter == "mu":
                d.update(mu_total=o.value, mu_per_test=o.value_per_test, sigma_per_test=o.planned_noise)
            else:
                d.update(epsilon_total=o.value, epsilon_per_test=o.value_per_test,
                         laplace_scale_per_test=o.planned_noise)
    return json_safe(d)
