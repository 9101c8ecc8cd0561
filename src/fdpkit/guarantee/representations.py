r"""How well each concise representation describes a mechanism (Gomez et al. Sec. 2-4,
Fig. 1c, App. C.2-C.3).

For a mechanism with certified curve f, each representation r stands for the weakest
mechanism that satisfies it, with associated curve f_r <= f (App. A.6), and its *regret*
is Delta(f, f_r) (Def. 2.6; Kaissis et al. 2024): how far f must move towards the origin to
fall below f_r. Lower is more accurate. The representations compared:

- (eps, delta)-DP at the report's delta: f_{eps, delta} with eps from the accountant;
- rho*-zCDP: the tight rho* of Eq. (25) (:func:`fdpkit.accounting.tight_rho`) and the
  curve of rho*-zCDP (:class:`fdpkit.curves.ZCDPCurve`);
- the RDP curve: the mechanism's eps(t) at a grid of orders and the curve of that list
  (:class:`fdpkit.curves.RDPCurve`; Balle et al. 2020, Zhu et al. 2022);
- mu-GDP: the tight mu and its regret (Eq. 5, 23).

All curves are fdpkit's sound lower bounds, and the regrets are exact for these
piecewise-linear curves (the profile form of Def. C.3 gives the same values; see
:func:`fdpkit.convert.profile_regret`). By construction rho*-zCDP cannot beat the RDP
curve it summarises; for DP-SGD Gomez et al. find GDP < RDP curve < zCDP and < (eps, delta).

Fallback advice (Sec. 4): report mu-GDP when its regret is below 0.01; otherwise (or when
mu = inf) report the tightest guarantee available -- the privacy profile or numeric curve
-- and, where one number is required, the concise representation with the smallest regret
(typically rho-zCDP), stating its regret.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from fdpkit._numerics import json_safe, safe_g
from fdpkit.curves import EpsDeltaCurve, GaussianCurve, TradeOffCurve
from fdpkit.fit import GDPFit, regret
from fdpkit.accounting.rdp import renyi_curve, tight_rho
from fdpkit.convert.renyi_conversions import zcdp_curve as ZCDPCurve
from fdpkit.curves.renyi import ZCDPCurve as RenyiZCDPCurve

#: GDP regret below which mu-GDP is an essentially complete description (Sec. 4).
REGRET_COMPLETE = 0.01


@dataclass(frozen=True)
class Representation:
    """One row of the representations table."""

    key: str  #: "epsilon_delta", "zcdp", "rdp" or "gdp"
    name: str
    parameter: str
    regret: float  #: inf when the representation cannot state a finite guarantee
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The object as JSON-ready data (dicts, lists, numbers and strings)."""
        return {"key": self.key, "name": self.name, "parameter": self.parameter,
                "regret": json_safe(self.regret), "note": self.note}


@dataclass(frozen=True)
class Representations:
    """The representations table and the fallback advice (see module docs)."""

    rows: tuple[Representation, ...]
    advice: str
    recommended: str  #: key of the recommended representation, or "profile"
    curves: dict = None  # name -> TradeOffCurve, for plots (not serialised)

    def regret_of(self, key: str) -> float:
        """The regret of the representation with ``key`` (KeyError if none)."""
        for r in self.rows:
            if r.key == key:
                return r.regret
        raise ValueError(f"key must be one of {[r.key for r in self.rows]}, got {key!r}")

    def to_dict(self) -> dict[str, Any]:
        """The object as JSON-ready data (dicts, lists, numbers and strings)."""
        return {"rows": [r.to_dict() for r in self.rows], "advice": self.advice,
                "recommended": self.recommended}


def _advice(rows: tuple[Representation, ...]) -> tuple[str, str]:
    gdp = next(r for r in rows if r.key == "gdp")
    if math.isfinite(gdp.regret) and gdp.regret < REGRET_COMPLETE:
        return (f"Report μ-GDP ({gdp.parameter}): its regret {gdp.regret:.2g} is below "
                f"{REGRET_COMPLETE:g}, so it describes the mechanism essentially completely "
                "(Gomez et al. Sec. 4).", "gdp")
    concise = [r for r in rows if r.key in ("zcdp", "epsilon_delta", "gdp") and math.isfinite(r.regret)]
    why = ("μ = ∞: the mechanism satisfies no finite GDP" if not math.isfinite(gdp.regret)
           else f"μ-GDP's regret {gdp.regret:.2g} is at least {REGRET_COMPLETE:g}")
    if not concise:
        return (f"{why}, and no concise representation is finite: report the privacy profile "
                "δ(ε) or the numeric trade-off curve (Gomez et al. Sec. 4).", "profile")
    best = min(concise, key=lambda r: r.regret)
    return (f"{why}: report the tightest guarantee available, the privacy profile δ(ε) or the "
            f"numeric trade-off curve; where one number is needed, {best.name} ({best.parameter}) "
            f"has the smallest regret ({best.regret:.2g}) and should be stated with it "
            "(Gomez et al. Sec. 4).", best.key)


def representations(mechanism: Any, curve: TradeOffCurve, fit: GDPFit, delta: float,
                    epsilon: float) -> Representations:
    """The regret of each representation of ``mechanism`` (module docs).

    Parameters
    ----------
    mechanism : Mechanism
    curve : TradeOffCurve
        The mechanism's certified curve (exact or lower bound).
    fit : GDPFit
        Its tight mu-GDP.
    delta, epsilon : float
        The report's delta and the accountant's epsilon there.

    Examples
    --------
    >>> from fdpkit import Gaussian, fit_gdp, GaussianCurve
    >>> r = representations(Gaussian(1.0), GaussianCurve(1.0), fit_gdp(GaussianCurve(1.0)), 1e-5, 4.38)
    >>> r.recommended, r.regret_of("gdp")
    ('gdp', 0.0)
    """
    key = None
    try:
        key = (mechanism, getattr(curve, "bound", None), len(getattr(curve, "alphas", ())), float(fit.mu),
               float(delta), float(epsilon))
        hash(key)
    except TypeError:  # pragma: no cover - unhashable custom mechanism
        key = None
    if key is not None and key in _CACHE:
        return _CACHE[key]
    out = _representations(mechanism, curve, fit, delta, epsilon)
    if key is not None:
        if len(_CACHE) >= _CACHE_SIZE:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = out
    return out


#: Representations computed recently (reports of the same mechanism in several formats).
_CACHE: dict = {}
_CACHE_SIZE = 16
#: Why a Renyi representation is missing when its divergences leave the floats.
_OVERFLOW = "its Rényi divergences are beyond the floating-point range for this mechanism"


def _representations(mechanism: Any, curve: TradeOffCurve, fit: GDPFit, delta: float,
                     epsilon: float) -> Representations:
    # (tight_rho and renyi_curve read DP-SGD runs in elementary mechanisms themselves)
    rows = []
    curves: dict[str, TradeOffCurve] = {"mechanism": curve}
    if math.isfinite(epsilon):
        ed = EpsDeltaCurve(min(epsilon, 100.0), delta).to_piecewise()
        rows.append(Representation("epsilon_delta", "(ε, δ)-DP", f"ε = {safe_g(epsilon, up=True)} at δ = {delta:g}",
                                   regret(curve, ed), "one point of the privacy profile"))
        curves["(ε, δ)"] = ed
    else:
        rows.append(Representation("epsilon_delta", "(ε, δ)-DP", f"ε = ∞ at δ = {delta:g}", math.inf,
                                   "no finite ε at this δ"))
    try:
        rc: TradeOffCurve | None = renyi_curve(mechanism)
        rc_error: Exception | None = None
    except ValueError as exc:
        rc, rc_error = None, exc
    except OverflowError:  # sigma = 1e200 in dp_accounting's orders, mu = 1e300 squared
        rc, rc_error = None, ValueError(_OVERFLOW)
    try:
        rf = tight_rho(mechanism)
        if math.isfinite(rf.rho):
            # an exactly rho-zCDP mechanism's RDP curve IS the curve of rho*-zCDP (the same
            # construction at the same rho): built once (about half the section's cost)
            same = isinstance(rc, RenyiZCDPCurve) and rc.rho == rf.rho
            zc = rc if same else ZCDPCurve(rf.rho)
            rows.append(Representation("zcdp", "ρ-zCDP", f"ρ* = {safe_g(rf.rho, up=True)}", regret(curve, zc),
                                       "tight ρ* (Gomez et al. Eq. 25): " + rf.reason))
            curves["ρ-zCDP"] = zc
        else:
            rows.append(Representation("zcdp", "ρ-zCDP", "ρ* = ∞", math.inf, rf.reason))
    except ValueError as exc:
        rows.append(Representation("zcdp", "ρ-zCDP", "not available", math.inf, str(exc)))
    except OverflowError:
        rows.append(Representation("zcdp", "ρ-zCDP", "not available", math.inf, _OVERFLOW))
    if rc is not None:
        n = len(getattr(rc, "orders", ())) or "all"
        rows.append(Representation("rdp", "RDP curve ε(t)", f"{n} orders", regret(curve, rc),
                                   "the whole Rényi curve, converted optimally (App. A.6)"))
        curves["RDP curve"] = rc
    else:
        rows.append(Representation("rdp", "RDP curve ε(t)", "not available", math.inf, str(rc_error)))
    mu_text = f"μ = {safe_g(fit.mu, up=True)}" if math.isfinite(fit.mu) else "μ = ∞"
    rows.append(Representation("gdp", "μ-GDP", mu_text, fit.regret, "tight μ (Gomez et al. Eq. 5)"))
    if math.isfinite(fit.mu):
        curves["μ-GDP"] = GaussianCurve(fit.mu)
    rows_t = tuple(rows)
    advice, rec = _advice(rows_t)
    return Representations(rows_t, advice, rec, curves)
