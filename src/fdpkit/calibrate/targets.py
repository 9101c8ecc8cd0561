"""Calibration targets: what a DP-SGD run must not exceed, read from its accounting.

Each target is a number that grows with privacy loss (so "achieved <= target" is the safe
side) and is read exactly as :func:`fdpkit.privacy_report` reads it:

- ``mu``: the tight pessimistic mu-GDP of the certified curve (``fit_gdp``);
- ``epsilon`` at ``delta``: the accountant's own privacy profile;
- ``tpr`` at ``fpr``: the certified TPR (an upper bound on any attack's power);
- ``advantage``: max TPR - FPR (Gomez et al. Eq. 8);
- ``posterior`` for a ``prior`` at ``fpr`` (default 1e-3): de Fondeville Eq. 4.

``mu_equivalent`` maps a target to the mu of a Gaussian curve that just meets it: the
solver's starting point (central-limit heuristics are stated in mu).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from fdpkit._numerics import MU_MAX, check_real, norm_ppf
from fdpkit.errors import ParameterError
from fdpkit.accounting import Accounting
from fdpkit.convert import mu_for_epsilon_delta
from fdpkit.fit import ALPHA_MIN_DEFAULT, fit_gdp
from fdpkit.risk import advantage, mu_for_attack_power, posterior

#: FPR of the posterior target when none is given (the report's POSTERIOR_FPR).
POSTERIOR_FPR = 1e-3
#: Defaults used to report the achieved values of the metrics that were not targeted.
REPORT_DELTA = 1e-5
REPORT_FPR = 1e-3
REPORT_PRIOR = 0.01
TARGETS = ("mu", "epsilon", "tpr", "advantage", "posterior")


def _positive(name: str, value: Any, *, upper: float | None = None, open_upper: bool = False) -> float:
    """A positive finite number (NumPy scalars welcome; bools and strings refused) through
    the shared validator."""
    v = float(check_real(name, value, allow_inf=True, scalar=True))
    if not math.isfinite(v) or v <= 0:
        raise ParameterError(f"{name} must be a positive finite number, got {value!r}", name)
    if upper is not None and (v > upper or (open_upper and v == upper)):
        raise ParameterError(f"{name} must be {'<' if open_upper else '<='} {upper:g}, got {value!r}", name)
    return v


@dataclass(frozen=True)
class Target:
    """One calibration target: ``name`` <= ``value`` (with its ``delta``/``fpr``/``prior``)."""

    name: str
    value: float
    delta: float | None = None
    fpr: float | None = None
    prior: float | None = None

    def describe(self) -> str:
        """The target in words, e.g. ``epsilon <= 3 at delta=1e-05``."""
        extra = ""
        if self.name == "epsilon":
            extra = f" at delta={self.delta:g}"
        elif self.name == "tpr":
            extra = f" at fpr={self.fpr:g}"
        elif self.name == "posterior":
            extra = f" for prior={self.prior:g} at fpr={self.fpr:g}"
        return f"{self.name} <= {self.value:g}{extra}"

    def read(self, acc: Accounting, alpha_min: float = ALPHA_MIN_DEFAULT) -> float:
        """The target metric of an accounting (as the privacy report reads it)."""
        c = acc.curve
        if self.name == "mu":
            return fit_gdp(c, alpha_min=alpha_min).mu
        if self.name == "epsilon":
            return acc.epsilon_for_delta(self.delta)
        if self.name == "tpr":
            return float(c.tpr(self.fpr))
        if self.name == "advantage":
            return advantage(c)
        return float(posterior(c, self.prior, self.fpr))

    def vacuous(self) -> bool:
        """Whether every mechanism meets the target: a posterior at or above that of a
        test with TPR 1 at the target's FPR, prior / (prior + (1 - prior) fpr) (no attack
        at that FPR gets further), or an advantage of 1."""
        if self.name == "posterior" and self.prior is not None and self.fpr is not None:
            top = self.prior / (self.prior + (1.0 - self.prior) * self.fpr)
            return self.value >= top * (1.0 + 1e-12)
        return self.name == "advantage" and self.value >= 1.0

    def mu_equivalent(self) -> float:
        """mu of a Gaussian curve that just meets the target (a starting point only)."""
        if self.name == "mu":
            return self.value
        if self.name == "epsilon":
            return max(1e-3, float(mu_for_epsilon_delta(self.value, self.delta)))
        if self.name == "tpr":
            return max(1e-3, float(mu_for_attack_power(max(self.value, self.fpr * 1.0001), self.fpr)))
        if self.name == "advantage":
            return max(1e-3, 2.0 * float(norm_ppf((1.0 + min(self.value, 1 - 1e-12)) / 2.0)))
        p, post, a = self.prior, self.value, self.fpr
        tpr = min(1.0 - 1e-12, post * (1 - p) * a / (p * (1 - post)))
        return max(1e-3, float(mu_for_attack_power(max(tpr, a * 1.0001), a)))


def make_target(*, mu: Any = None, epsilon: Any = None, delta: Any = None, tpr: Any = None, fpr: Any = None,
                advantage: Any = None, posterior: Any = None, prior: Any = None) -> Target | None:
    """Validate the target arguments (exactly one target, or none to only account).
    ``delta``, ``fpr`` and ``prior`` also set where the other metrics are reported."""
    given = {"mu": mu, "epsilon": epsilon, "tpr": tpr, "advantage": advantage, "posterior": posterior}
    named = [k for k, v in given.items() if v is not None]
    if len(named) > 1:
        raise ParameterError(f"give exactly one target (mu, epsilon, tpr, advantage or posterior), got {', '.join(named)}",
                             named[0], (*named, *(k for k in given if k not in named)))
    rep_delta = None if delta is None else _positive("delta", delta, upper=1.0, open_upper=True)
    rep_fpr = None if fpr is None else _positive("fpr", fpr, upper=1.0, open_upper=True)
    rep_prior = None if prior is None else _positive("prior", prior, upper=1.0, open_upper=True)
    if not named:
        return None
    name = named[0]
    if name == "mu":
        return Target("mu", _positive("mu", mu, upper=MU_MAX), rep_delta, rep_fpr, rep_prior)
    if name == "epsilon":
        if delta is None:
            raise ParameterError("an epsilon target needs delta (e.g. delta=1e-5)",
                                 "delta", ("delta", "epsilon"))
        return Target("epsilon", _positive("epsilon", epsilon, upper=100.0), rep_delta, rep_fpr, rep_prior)
    if name == "tpr":
        if fpr is None:
            raise ParameterError("a tpr target needs fpr (the false-positive rate it is read at)", "fpr", ("fpr", "tpr"))
        a = rep_fpr
        t = _positive("tpr", tpr, upper=1.0, open_upper=True)
        if t <= a:
            raise ParameterError(f"tpr must be above fpr={a:g} (TPR = FPR is perfect privacy), got {tpr!r}", "tpr",
                                 ("tpr", "fpr"))
        return Target("tpr", t, rep_delta, a, rep_prior)
    if name == "advantage":
        return Target("advantage", _positive("advantage", advantage, upper=1.0, open_upper=True),
                      rep_delta, rep_fpr, rep_prior)
    if prior is None:
        raise ParameterError("a posterior target needs prior (the attacker's prior belief in membership)", "prior",
                             ("prior", "posterior"))
    p = rep_prior
    post = _positive("posterior", posterior, upper=1.0, open_upper=True)
    if post <= p:
        raise ParameterError(f"posterior must be above prior={p:g} (no attack can be held below the prior), "
                             f"got {posterior!r}", "posterior", ("posterior", "prior"))
    return Target("posterior", post, rep_delta, POSTERIOR_FPR if rep_fpr is None else rep_fpr, p)


def achieved_values(acc: Accounting, target: Target | None, alpha_min: float = ALPHA_MIN_DEFAULT) -> dict[str, Any]:
    """Every metric of the calibrated run, at the target's delta/fpr/prior where it has them."""
    delta = target.delta if target is not None and target.delta is not None else REPORT_DELTA
    fpr = target.fpr if target is not None and target.fpr is not None and target.name != "posterior" else REPORT_FPR
    prior = target.prior if target is not None and target.prior is not None else REPORT_PRIOR
    pfpr = target.fpr if target is not None and target.name == "posterior" else POSTERIOR_FPR
    return metrics_at(acc, delta=delta, fpr=fpr, prior=prior, posterior_fpr=pfpr, alpha_min=alpha_min)


def metrics_at(acc: Accounting, *, delta: float, fpr: float, prior: float, posterior_fpr: float,
               alpha_min: float = ALPHA_MIN_DEFAULT) -> dict[str, Any]:
    """Every metric of an accounted run at the given delta, FPR and prior (the keys of
    :func:`achieved_values`, which chooses those points from a target)."""
    pfpr = posterior_fpr
    fit = fit_gdp(acc.curve, alpha_min=alpha_min)
    return {
        "mu": fit.mu, "regret": fit.regret, "alpha_min": fit.alpha_min,
        "epsilon": acc.epsilon_for_delta(delta), "delta": delta,
        "tpr": float(acc.curve.tpr(fpr)), "fpr": fpr,
        "advantage": advantage(acc.curve),
        "posterior": float(posterior(acc.curve, prior, pfpr)), "prior": prior, "posterior_fpr": pfpr,
    }
