"""The privacy report: a mechanism's guarantee, read every way fdpkit knows.

``privacy_report`` accounts a mechanism (closed form or dp_accounting PLD), fits the tight
pessimistic mu-GDP with its FPR range and regret (Gomez et al. Sec. 3-4), and reads the
certified curve as attack risk. Every number comes from the certified curve or from the
accountant's own profile:

- epsilon at delta comes from the accountant (``get_epsilon_for_delta``), never from
  delta_mu, which is only an upper bound up to tau;
- TPR at FPR is read from the certified (lower-bound) curve, so it is an upper bound on
  the power of any attack;
- the verdict follows Gomez et al. Sec. 4: below regret 0.01 the mu-GDP summary describes
  the mechanism essentially completely; otherwise keep the numeric curve.
"""

from __future__ import annotations

import datetime as _dt
import functools
import importlib
import math
import platform
from dataclasses import dataclass, field
from importlib import metadata
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from fdpkit._deprecation import warn_renamed
from fdpkit._numerics import check_probability, json_safe, norm_isf, safe_g
from fdpkit.accounting import Accounting, account
from fdpkit.accounting._resolution import choose_discretization
from fdpkit.accounting.truncated_instance import truncation_looseness
from fdpkit.curves import GaussianCurve, TradeOffCurve, _repr
from fdpkit.fit import ALPHA_MIN_DEFAULT, GDPFit, fit_gdp_adapted
from fdpkit.mechanisms import (
    ApproxDP,
    CurveMechanism,
    Mechanism,
    UniformSampling,
    mechanism_from_dict,
    training_run,
    walk,
)
from fdpkit.guarantee.setting import comparison_for, setting_of
from fdpkit.risk import advantage, failure_mode, posterior
from fdpkit.risk.disclosure import certainty_mass, delta_covers_disclosure
from fdpkit.guarantee.representations import representations
from fdpkit.guarantee.statement import paper_statement
from fdpkit.risk.grade import grade

if TYPE_CHECKING:  # pragma: no cover
    from fdpkit.guarantee.representations import Representations

#: Version of the report's JSON layout (bump on any incompatible change).
SCHEMA_VERSION = "1.0"
DEFAULT_DELTAS = (1e-5, 1e-6, 1e-9)
DEFAULT_FPRS = (1e-10, 1e-8, 1e-6, 1e-4, 1e-3, 1e-2, 1e-1)
DEFAULT_PRIORS = (0.001, 0.01, 0.1, 0.5)


def deltas_led_by(delta: float | None) -> tuple[float, ...] | None:
    """The report's δ (``deltas`` of :func:`privacy_report`) led by ``delta``, the default
    ones after it: a calibration's target δ carried to its report (CLI and web), whose
    headline, summary and statement quote the first. None for none, or the default's own first.

    >>> deltas_led_by(2e-5), deltas_led_by(1e-5)
    ((2e-05, 1e-05, 1e-06, 1e-09), None)
    """
    if delta is None or delta == DEFAULT_DELTAS[0]:
        return None
    return (delta, *(d for d in DEFAULT_DELTAS if d != delta))
#: FPR at which posteriors are reported.
POSTERIOR_FPR = 1e-3
#: Regret below which mu-GDP is an essentially complete description (Gomez et al. Sec. 4).
REGRET_COMPLETE = 0.01
#: Mass at f(0) < 1 treated as accountant tail truncation rather than a real disclosure.
TRUNCATION_TOL = 1e-12
#: Points (log-spaced in FPR) of the curve kept in the report for plots.
CURVE_SAMPLES = 241


@functools.cache
def _report_layer() -> Any:
    """The report layer, :mod:`fdpkit.report`, which lays this object out as a document (HTML,
    PDF). It sits above ``guarantee/`` (issue 23: imports flow one way), so the two
    conveniences :meth:`PrivacyReport.to_html` and :meth:`PrivacyReport.to_pdf` look it up by
    name when called instead of importing it; ``fdpkit.report.build_document(report)`` is the
    direct route."""
    return importlib.import_module("fdpkit.report")


@functools.cache
def _version(dist: str) -> str:
    """The installed version of ``dist`` (read once per process: importlib.metadata scans
    the environment's metadata, about 2 ms a call)."""
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:  # pragma: no cover
        return "unknown"


def _unbounded_loss(mechanism: Mechanism) -> bool:
    """Whether the mechanism contains Gaussian noise (unbounded privacy loss; Rényi
    guarantees: loss not bounded either)."""
    return any(getattr(m, "unbounded_loss", False) for m, _ in walk(mechanism))


def _can_reveal_with_certainty(mechanism: Mechanism) -> bool:
    """Whether some part of the mechanism can have outputs that identify membership with
    certainty (an atom at an infinite privacy loss, de Fondeville Thm. 1): an (epsilon,
    delta) guarantee with delta > 0, a mechanism known by its curve or error points, uniform
    sampling. No other leaf has one: Gaussian and Laplace noise, randomized response and
    pure epsilon-DP bound or spread the loss, a finite Renyi divergence (zCDP, RDP) rules
    such outputs out, and DP-SGD is Gaussian noise whatever its sampling."""
    for m, _ in walk(mechanism):
        if isinstance(m, ApproxDP) and m.delta > 0 or isinstance(m, (CurveMechanism, UniformSampling)):
            return True
    return False


def _check_grid(name: str, values: Sequence[float], *, open_low: bool = True) -> tuple[float, ...]:
    arr = check_probability(name, np.asarray(list(values), dtype=float), open_low=open_low, open_high=True)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty list of probabilities, got {values!r}")
    return tuple(float(v) for v in arr)


@dataclass(frozen=True)
class PrivacyReport:
    """A mechanism's privacy guarantee and its readings. See :func:`privacy_report`."""

    mechanism: Mechanism
    method: str
    discretization: float | None
    curve: TradeOffCurve = field(repr=False)
    fit: GDPFit
    verdict: str
    gdp_complete: bool
    epsilons: tuple[tuple[float, float], ...]
    tprs: tuple[tuple[float, float, float], ...]
    advantage: float
    failure_mode: str
    posteriors: tuple[tuple[float, float], ...]
    warnings: tuple[str, ...]
    provenance: dict[str, Any]
    #: sampling scheme, neighbouring relation, privacy unit (every report states them)
    setting: dict[str, Any] = field(default_factory=dict)
    #: shuffled batches only: what Poisson accounting would say (not a guarantee)
    comparison: dict[str, Any] | None = None

    def statement(self) -> str:
        """A paragraph for the paper: privacy unit, neighbouring relation, sampling scheme,
        steps/epochs, noise, accounting method (versions, discretization), μ with regret
        and FPR range, ε at δ, TPR at FPR 1e-3, and the caveats that apply
        (following Ponomareva et al. 2023, Sec. 5.3). See :mod:`fdpkit.guarantee.statement`."""
        return paper_statement(self)

    # the names used by checks outside this repository
    @property
    def mu(self) -> float:
        """Tight, pessimistic μ of the certified curve (Gomez et al. Eq. 5)."""
        return self.fit.mu

    @property
    def regret(self) -> float:
        """Regret of the μ-GDP summary (below 0.01: essentially complete)."""
        return self.fit.regret

    @property
    def alpha_min(self) -> float:
        """Lower end of the FPR (and FNR) range on which ``mu`` holds."""
        return self.fit.alpha_min

    @property
    def tau(self) -> float:
        """Slack outside the range: overall TPR ≤ 1 − G_μ(FPR) + τ."""
        return self.fit.tau

    @property
    def grade(self):
        """The graded verdict of the certified curve and its failure mode
        (:func:`fdpkit.risk.grade`): ``.level`` 0 (strong) to 3 (none); a catastrophic
        mechanism is never better than 2 ("weak") and ``.reason`` says why."""
        return grade(self.curve, failure_mode=self.failure_mode)

    def __repr__(self) -> str:
        eps = ", ".join(f"eps(δ={d:g})={safe_g(e, up=True)}" for d, e in self.epsilons[:1])
        return (f"PrivacyReport({self.mechanism.label()}: mu={safe_g(self.fit.mu, up=True)}, regret={self.fit.regret:.3g}, "
                f"{eps}, grade={self.grade.label!r})")

    def _repr_html_(self) -> str:
        """A compact notebook card: headline numbers, grade, and the curve against G_mu."""
        g = self.grade
        rows = [("μ", _repr.num(self.fit.mu, up=True)), ("regret", _repr.num(self.fit.regret))]
        rows += [(f"ε at δ = {d:g}", _repr.num(e, up=True)) for d, e in self.epsilons[:1]]
        rows += [("TPR at FPR 0.001", _repr.num(float(self.curve.tpr(1e-3)), up=True)),
                 ("protection", f"{g.icon} {g.label}"), ("failure mode", self.failure_mode)]
        ref = np.asarray(GaussianCurve(self.fit.mu).beta(_repr.grid())) if math.isfinite(self.fit.mu) else None
        svg = _repr.tradeoff_svg(np.asarray(self.curve.beta(_repr.grid())), reference=ref,
                                 title=f"Trade-off curve of {self.mechanism.label()} and its fitted Gaussian curve")
        return _repr.card(f"Privacy report: {self.mechanism.label()}", rows, svg,
                          "report.to_html() / report.to_pdf(path) for the full report", accent=g.colour)

    def to_html(self) -> str:
        """The full report as one self-contained HTML page (inline SVG plots)."""
        report = _report_layer()
        return report.render_document(report.build_document(self), "html").decode("utf-8")

    def to_pdf(self, path: Any) -> Any:
        """Write the full report as PDF to ``path`` (atomically) and return the path."""
        report = _report_layer()
        return report.write_atomic(path, report.render_document(report.build_document(self), "pdf"))

    def epsilon_for_delta(self, delta: float) -> float:
        """ε at one of the report's deltas (the curves' spelling of the query)."""
        for d, e in self.epsilons:
            if d == delta:
                return e
        raise ValueError(f"delta must be one of the report's deltas {[d for d, _ in self.epsilons]}, got {delta!r}")

    def tpr(self, fpr: float) -> float:
        """Certified TPR at one of the report's FPRs (the curves' spelling, ``curve.tpr(fpr)``)."""
        for a, t, _ in self.tprs:
            if a == fpr:
                return t
        raise ValueError(f"fpr must be one of the report's FPRs {[a for a, _, _ in self.tprs]}, got {fpr!r}")

    def epsilon_at(self, delta: float) -> float:
        """Deprecated alias of :meth:`epsilon_for_delta` (renamed in 0.x, issue 23)."""
        warn_renamed("PrivacyReport.epsilon_at", "PrivacyReport.epsilon_for_delta")
        return self.epsilon_for_delta(delta)

    def tpr_at(self, fpr: float) -> float:
        """Deprecated alias of :meth:`tpr` (renamed in 0.x, issue 23)."""
        warn_renamed("PrivacyReport.tpr_at", "PrivacyReport.tpr")
        return self.tpr(fpr)

    def representations(self) -> Representations:
        """The regret of each representation ((ε, δ) at the report's first δ,
        ρ*-zCDP, the RDP curve, μ-GDP; Gomez et al. Fig. 1c) and the fallback advice of
        Sec. 4 (:mod:`fdpkit.guarantee.representations`). Computed on first use and cached: the
        Rényi accounting it needs is not part of ``privacy_report``'s own cost."""
        cached = self.__dict__.get("_representations")
        if cached is None:
            d, e = self.epsilons[0]
            cached = representations(self.mechanism, self.curve, self.fit, d, e)
            object.__setattr__(self, "_representations", cached)
        return cached

    def curve_samples(self, n: int = CURVE_SAMPLES) -> dict[str, list[float]]:
        """The certified curve on FPRs log-spaced from 1e-12 to 1 (and 0), for plots."""
        alpha = np.concatenate([[0.0], np.geomspace(1e-12, 1.0, n - 1)])
        return {
            "alpha": alpha.tolist(),
            "beta": np.asarray(self.curve.beta(alpha)).tolist(),
            "tpr": np.asarray(self.curve.tpr(alpha)).tolist(),
        }

    def to_dict(self, *, representations: bool = True) -> dict[str, Any]:
        """JSON-ready dict (floats; inf as the string "inf"), with ``schema_version``.

        Parameters
        ----------
        representations : bool
            Include the ``"representations"`` section (:meth:`representations`: its Rényi
            accounting costs about a second per new mechanism, often more than the report
            itself). False leaves the key out, for a caller that serves it separately (the
            web API defers it); the library's dict is complete by default.

        Examples
        --------
        >>> from fdpkit.mechanisms import Gaussian
        >>> r = privacy_report(Gaussian(1.0))
        >>> "representations" in r.to_dict(), "representations" in r.to_dict(representations=False)
        (True, False)
        """
        out = self._dict_without_representations()
        if representations:
            out["representations"] = self.representations().to_dict()
        return out

    def _dict_without_representations(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "mechanism": self.mechanism.to_dict(),
            "description": self.mechanism.describe(),
            "guarantee": {
                "mu": json_safe(self.fit.mu),
                "regret": json_safe(self.fit.regret),
                "alpha_min": self.fit.alpha_min,
                "tau": self.fit.tau,
                "statement": self.fit.statement(),
                "fit_method": self.fit.reason,
                "verdict": self.verdict,
                "gdp_complete": self.gdp_complete,
                "curve_bound": self.curve.bound,
                "method": self.method,
            },
            "epsilon_at_delta": [{"delta": d, "epsilon": json_safe(e)} for d, e in self.epsilons],
            "tpr_at_fpr": [
                {"fpr": a, "tpr": t, "tpr_over_fpr": t / a, "tpr_gdp": g} for a, t, g in self.tprs
            ],
            "advantage": self.advantage,
            "failure_mode": self.failure_mode,
            "posterior": {
                "fpr": POSTERIOR_FPR,
                "rows": [{"prior": p, "posterior": q} for p, q in self.posteriors],
            },
            "grade": self.grade.to_dict(),
            "warnings": list(self.warnings),
            "setting": json_safe(dict(self.setting)),
            "comparison": json_safe(self.comparison),
            "paper_statement": self.statement(),
            "provenance": dict(self.provenance),
            "curve": {"bound": self.curve.bound, **self.curve_samples()},
        }


def _verdict(fit: GDPFit) -> tuple[str, bool]:
    if not math.isfinite(fit.mu):
        return ("No finite mu-GDP guarantee: report the numeric curve or privacy profile "
                "instead (Gomez et al. Sec. 6).", False)
    if fit.regret < REGRET_COMPLETE:
        return (f"mu-GDP describes this mechanism essentially completely (regret "
                f"{fit.regret:.2g} < {REGRET_COMPLETE:g}; Gomez et al. Sec. 4).", True)
    return (f"mu-GDP is a loose summary here (regret {fit.regret:.2g} >= {REGRET_COMPLETE:g}): "
            "it is a valid bound, but keep the numeric curve to describe the mechanism.", False)


def privacy_report(
    mechanism: Mechanism | dict,
    *,
    deltas: Sequence[float] = DEFAULT_DELTAS,
    fprs: Sequence[float] = DEFAULT_FPRS,
    priors: Sequence[float] = DEFAULT_PRIORS,
    discretization: float | None = None,
    alpha_min: float = ALPHA_MIN_DEFAULT,
    budget: Any = None,
) -> PrivacyReport:
    """Account ``mechanism`` and report its guarantee: the tight μ-GDP with its regret and
    FPR range, ε at each δ, the certified TPR of the best membership-inference attack at each
    FPR, posteriors, the grade and failure mode, and how each number was obtained.

    Parameters
    ----------
    mechanism : Mechanism or dict
        A mechanism value object, e.g. ``fdpkit.dpsgd(noise_multiplier=1.1,
        sample_rate=256 / 60000, steps=7032)`` (or its ``to_dict()`` form).
    deltas : sequence of float, default (1e-5, 1e-6, 1e-9)
        δ values at which ε is reported (from the accountant's privacy profile); the first is
        the one the headline, the summary and the statement quote.
    fprs : sequence of float, default (1e-10, 1e-8, 1e-6, 1e-4, 1e-3, 1e-2, 1e-1)
        FPRs at which the certified attack TPR is reported.
    priors : sequence of float, default (0.001, 0.01, 0.1, 0.5)
        Prior membership probabilities for the posterior after a positive attack at FPR 1e-3.
    discretization : float or None, default None
        PLD value discretization interval (numeric mechanisms only). None: chosen per run and
        stated in ``provenance["discretization_rule"]``. It is 1e-4 for typical runs; finer where
        a DP-SGD run's steps are too small for 1e-4 to resolve (tiny sample rates: an estimated
        1% or less added to μ, coarsened again to fit ``budget``); coarser, up to 1e-3, where
        the steps' loss is so wide that this costs μ a relative 1e-6 or less (small noise,
        large sample rates); and for heavy-tailed steps (small noise, tiny sample rates) the
        tightest of a few grids, each accounted. Every grid gives a certified (pessimistic)
        curve: the choice decides tightness and cost, never soundness (Eqs. 1-5 of
        ``fdpkit.accounting._resolution``).
    alpha_min : float, default 1e-10
        Lower end of the FPR/FNR range of the fitted μ (numeric curves); lowered, with a
        warning, where a large μ leaves that range empty.
    budget : CostBudget or None, default None
        Cost limit checked before accounting (see :func:`fdpkit.accounting.estimate_cost`).
        For shuffled DP-SGD it also bounds the Poisson comparison shown beside the guarantee
        (not a guarantee; without a budget,
        :data:`fdpkit.guarantee.setting.COMPARISON_BUDGET`): over it, the comparison is left
        out and a warning says so.

    Returns
    -------
    PrivacyReport
        ``mu``, ``regret`` and ``alpha_min`` (the fit and its FPR range), ``epsilons`` (ε at
        each δ; ``epsilon_for_delta`` for any other), ``tprs`` (at each FPR), ``posteriors``
        (at each prior), ``advantage``, ``curve`` (the certified trade-off curve, a lower
        bound), ``grade``, ``failure_mode``, ``warnings``, ``provenance`` and ``statement()``;
        ``to_dict()`` for JSON.

    Raises
    ------
    ParameterError
        A bad argument, named in ``.parameter`` (a ``ValueError``).
    BudgetExceeded
        The accounting would exceed ``budget`` or this process's memory.

    Examples
    --------
    >>> from fdpkit.mechanisms import Gaussian
    >>> r = privacy_report(Gaussian(sigma=1.0))
    >>> r.mu, r.regret, r.failure_mode
    (1.0, 0.0, 'graceful')
    >>> round(r.epsilon_for_delta(1e-5), 3)
    4.377
    """
    mech = mechanism_from_dict(mechanism) if isinstance(mechanism, dict) else mechanism
    if not isinstance(mech, Mechanism):
        raise ValueError(f"mechanism must be an fdpkit mechanism, got {type(mechanism).__name__}")
    deltas = _check_grid("deltas", deltas)
    fprs = _check_grid("fprs", fprs)
    priors = _check_grid("priors", priors)
    if discretization is None:
        discretization, rule = choose_discretization(mech, budget=budget)
    else:
        rule = "given"
    acc: Accounting = account(mech, discretization=discretization, budget=budget)
    curve = acc.curve
    fit = fit_gdp_adapted(curve, alpha_min=alpha_min)
    verdict, complete = _verdict(fit)
    warnings: list[str] = []
    if 0.0 < fit.alpha_min < alpha_min:  # lowered for a large mu (0: exact over every FPR, a closed form)
        warnings.append(
            f"mu exceeds what a fit on FPR and FNR >= {alpha_min:g} can state (2 z(alpha_min) = "
            f"{2 * float(norm_isf(alpha_min)):.4g}): the range was lowered to {fit.alpha_min:g}."
        )
    epsilons = tuple((d, acc.epsilon_for_delta(d)) for d in deltas)
    g = GaussianCurve(fit.mu) if math.isfinite(fit.mu) else None
    tpr_vals = np.asarray(curve.tpr(np.array(fprs)))
    # the TPR bound that mu states: 1 - G_mu(FPR), plus tau below mu's range (FPR < alpha_min)
    tprs = tuple(
        (a, float(t), min(1.0, float(g.tpr(a)) + (fit.tau if a < fit.alpha_min else 0.0)) if g is not None else 1.0)
        for a, t in zip(fprs, tpr_vals)
    )
    f0 = curve.f0
    numeric = acc.method != "closed form"
    # a numeric curve's f(0) < 1 is the accountant's bound on tail mass it did not resolve
    # (moved to an infinite loss) unless some part of the mechanism can truly reveal
    # membership with certainty; then only a truncation-sized mass is forgiven
    atoms = _can_reveal_with_certainty(mech)
    tol = (TRUNCATION_TOL if acc.method == "PLD" else 0.0) if atoms or not numeric else 1.0
    mode = failure_mode(curve, tolerance=tol)
    if mode != "catastrophic" and _unbounded_loss(mech):
        mode = "graceful"  # Gaussian noise: unbounded privacy loss, confidence never certain
    if numeric and mode != "catastrophic" and 0.0 < 1.0 - f0:
        warnings.append(
            f"The numeric curve has f(0) = {f'1 - {1 - f0:.1e}' if f0 > 0.999 else safe_g(f0, 3, up=False)}: "
            "1 - f(0) is the accountant's bound on the tail mass it did not resolve, kept in the curve "
            "(pessimistic) but not counted as a blatant disclosure"
            + ("." if atoms else ": no part of this mechanism reveals membership with certainty.")
        )
    if mode == "catastrophic":
        warnings.append(
            f"Blatant disclosure is possible: with probability {safe_g(certainty_mass(curve), 3, up=True)} an output reveals "
            "membership with certainty (de Fondeville Thm. 1)."
        )
        covered = delta_covers_disclosure(certainty_mass(curve), epsilons)
        if covered:
            warnings.append(covered)
    if isinstance(mech, UniformSampling):
        warnings.append(
            "Uniform random sampling is de Fondeville's worked example of catastrophic failure "
            f"(Example 3): it releases one record verbatim, the target's with probability "
            f"{mech.disclosure_probability:.3g}, so it satisfies no finite mu-GDP and no "
            "epsilon-DP for any delta below that probability."
        )
    if math.isfinite(fit.mu) and not complete:
        warnings.append(
            f"Regret {fit.regret:.3g} is at least {REGRET_COMPLETE:g}: mu-GDP over-reports risk "
            "for some attacks; report the numeric curve as well."
        )
    if math.isfinite(fit.mu) and fit.alpha_min > 0:
        warnings.append(
            f"mu holds for attacks with FPR and FNR >= {fit.alpha_min:g}; beyond that range "
            f"the TPR bound is 1 - G_mu(FPR) + {safe_g(fit.tau, 4, up=True)}."
        )
    if acc.method == "PLD" and discretization > 1e-3:
        warnings.append(
            f"Coarse discretization {discretization:g}: the guarantee is valid but looser than "
            "at the default 1e-4."
        )
    setting = setting_of(mech)
    comparison, left_out = comparison_for(mech, discretization, deltas, alpha_min, budget)
    if comparison is not None:
        warnings.append(comparison["caveat"])
    elif left_out is not None:
        warnings.append(left_out)
    loose = truncation_looseness(mech, discretization, deltas)
    looseness = None
    if loose is not None:  # truncated Poisson: say how loose dp_accounting's analysis may be
        d0, e0 = epsilons[0]
        ratio = loose.ratio(d0, e0)
        looseness = {  # flat scalars: every report format prints provenance as a table
            "truncation_instance": "every other gradient zero: the Poisson subsampled Gaussian at the rate "
                                   "q' at which the example is drawn and survives truncation (attainable)",
            "truncation_instance_rates": ", ".join(f"{r:.6g}" for r in loose.effective_rates),
            "truncation_instance_delta": loose.epsilons[0][0],
            "truncation_instance_epsilon": loose.epsilons[0][1],
            "truncation_epsilon_ratio": ratio,
        }
        if ratio is not None:
            warnings.append(f"Truncated Poisson is accounted with dp_accounting's analysis, which may be loose: "
                            f"an attainable instance already reaches epsilon = {safe_g(loose.epsilons[0][1], up=False)} at "
                            f"delta = {d0:g}, so the stated epsilon may be up to {safe_g(ratio, 3, up=True)}x the true one.")
    run = training_run(mech)
    if loose is None and run is not None and run.sampling == "truncated-poisson" and run.examples_per_user:
        looseness = {"truncation_instance": "not stated with group privacy (examples_per_user)"}
        warnings.append("Truncated Poisson is accounted with dp_accounting's analysis, which may be loose; with "
                        "group privacy (examples_per_user) no attainable instance is stated: the example-level "
                        "instance is not a group's, whose examples are drawn and truncated together, so its "
                        "epsilon bounds neither the group run's true epsilon nor the looseness.")
    post = np.asarray(posterior(curve, np.array(priors), POSTERIOR_FPR))
    provenance = {
        "fdpkit_version": _version("fdpkit"),
        "dp_accounting_version": _version("dp-accounting"),
        "method": acc.method,
        "discretization": acc.discretization,
        "discretization_rule": rule if acc.method == "PLD" else None,
        "alpha_min": fit.alpha_min,
        "created_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "python": platform.python_version(),
    }
    if looseness is not None:
        provenance.update(looseness)
    return PrivacyReport(
        mechanism=mech, method=acc.method, discretization=acc.discretization, curve=curve,
        fit=fit, verdict=verdict, gdp_complete=complete, epsilons=epsilons, tprs=tprs,
        advantage=advantage(curve), failure_mode=mode,
        posteriors=tuple((p, float(q)) for p, q in zip(priors, post)),
        warnings=tuple(warnings), provenance=provenance, setting=setting, comparison=comparison,
    )
