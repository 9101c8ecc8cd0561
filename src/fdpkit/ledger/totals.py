"""Running totals of a dataset: the tight composition read as mu (with regret), epsilon at
the thresholds' deltas and the certified TPR at FPR 1e-3, beside the basic-composition
epsilon sum, and the thresholds they cross. Pure functions of plain data (no database).

The composition itself is :class:`fdpkit.accounting.Composition` (exact GDP for the
Gaussian family, the accountant's pessimistic PLD otherwise); mu is the tight fit of
:func:`fdpkit.fit.fit_gdp` (Gomez et al. Def. 2.6 for the regret). A reading is never more
optimistic than the truth: closed forms are exact, PLD curves are lower bounds, and
epsilon comes from the accountant's own (upper-bound) profile.
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass
from typing import Any, Iterable

from fdpkit._deprecation import warn_renamed
from fdpkit._numerics import safe_g
from fdpkit.accounting import Composition, estimate_cost
from fdpkit.accounting._resolution import choose_discretization
from fdpkit.accounting.running import GRID_NOTE  # noqa: F401  (re-exported by fdpkit.ledger)
from fdpkit.convert import epsilon_for_delta_from_mu
from fdpkit.fit import fit_gdp
from fdpkit.mechanisms import Laplace, PureDP, RandomizedResponse, fold, mechanism_from_dict
from fdpkit.ledger.models import LEVELS, METRICS

#: delta of the headline epsilon and of the basic-composition sum; FPR of the headline TPR.
DELTA_REF = 1e-5
"""δ of the ledger's headline ε and of the basic-composition sum."""
FPR_REF = 1e-3
"""FPR of the ledger's headline TPR (the best attack's true-positive rate at this false-positive rate)."""
#: Most work (:func:`fdpkit.accounting.estimate_cost` units, 1e7 a CPU-second) of a total's second
#: reading at its releases' own grid (:meth:`Total.refine`); beyond it the running grid's figure stands.
REFINE_WORK = 1e7
#: A figure is read again at the releases' grid only when it exceeds a limit by at most this
#: fraction (what a coarser grid can add: 2.008 for 2.000 at δ 2e-5); far over, the reading stands.
REFINE_MARGIN = 0.05
#: The calculator document's alert thresholds: epsilon 2 / 4 / 8 at delta 1e-5.
DEFAULT_THRESHOLDS = (("notice", 2.0), ("warning", 4.0), ("hard", 8.0))
METRIC_LABEL = {"epsilon": "ε", "mu": "μ", "tpr": "TPR"}


@dataclass(frozen=True)
class ThresholdSpec:
    """A threshold as plain data: ``metric`` in epsilon/mu/tpr, ``level`` in
    notice/warning/hard, ``value``, and ``delta`` (epsilon) or ``fpr`` (tpr)."""

    metric: str
    level: str
    value: float
    delta: float | None = None
    fpr: float | None = None

    def describe(self) -> str:
        """The threshold in words, e.g. ``ε 8 at δ = 1e-05 (hard)``."""
        where = (f" at δ = {self.delta:g}" if self.metric == "epsilon"
                 else f" at FPR = {self.fpr:g}" if self.metric == "tpr" else "")
        return f"{METRIC_LABEL[self.metric]} {self.value:g}{where} ({self.level})"


def check_threshold(metric: str, level: str, value: Any, delta: Any = None, fpr: Any = None) -> ThresholdSpec:
    """Validate a threshold; ``ValueError`` naming the bad argument."""
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {', '.join(METRICS)}, got {metric!r}")
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}, got {level!r}")
    v = _num("value", value)
    if metric in ("epsilon", "mu") and not (0 < v < math.inf):
        raise ValueError(f"value must be a positive finite {metric}, got {value!r}")
    if metric == "tpr" and not (0 < v <= 1):
        raise ValueError(f"value must be a TPR in (0, 1], got {value!r}")
    d = f = None
    if metric == "epsilon":
        d = DELTA_REF if delta is None else _num("delta", delta)
        if not (0 < d < 1):
            raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
    elif delta is not None:
        raise ValueError(f"delta applies to epsilon thresholds only, got delta={delta!r} for {metric}")
    if metric == "tpr":
        f = FPR_REF if fpr is None else _num("fpr", fpr)
        if not (0 < f < 1):
            raise ValueError(f"fpr must lie in (0, 1), got {fpr!r}")
    elif fpr is not None:
        raise ValueError(f"fpr applies to tpr thresholds only, got fpr={fpr!r} for {metric}")
    return ThresholdSpec(metric, level, v, d, f)


def _num(name: str, value: Any) -> float:
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a number, got {value!r}")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if math.isnan(v):
        raise ValueError(f"{name} must be a number, got {value!r}")
    return v


def reference_deltas(n: int) -> float:
    """``n`` times the reference δ = 1e-5, as the decimal it is (3 releases: 3e-05, not the
    3.0000000000000004e-05 of ``3 * 1e-5`` that prints rounded up as 3.001e-05)."""
    return n / round(1 / DELTA_REF)


def pure_epsilon(mech: Any) -> float | None:
    """The pure epsilon of a mechanism that is pure epsilon-DP by construction (Laplace,
    randomized response, pure DP, and their repetitions and compositions), else None."""
    return fold(mech, _pure_leaf, repeat=lambda inner, times: None if inner is None else times * inner,
                compose=lambda parts: None if any(p is None for p in parts) else sum(parts),
                through=lambda node: False)  # subsampling: no pure epsilon claimed


def _pure_leaf(mech: Any) -> float | None:
    if isinstance(mech, Laplace):
        return mech.epsilon
    if isinstance(mech, (PureDP, RandomizedResponse)):
        return float(mech.epsilon)
    return None


@functools.lru_cache(maxsize=4096)
def _pure_of_spec(spec: str) -> float | None:
    return pure_epsilon(mechanism_from_dict(json.loads(spec)))


#: The basic-composition claim of some releases: (sum of epsilon, how many add delta 1e-5).
Claim = tuple[float, int]


def basic_claim(rows: Iterable[Any], start: Claim = (0.0, 0)) -> Claim:
    """The basic-composition claim of releases (rows with ``spec`` and ``epsilon_ref``) added
    to ``start``: a pure release adds (its pure epsilon, δ 0), any other its own (epsilon at
    δ = 1e-5, δ 1e-5). The one claim every ledger surface states as the "ε sum" (three
    Laplace releases of epsilon 2: ε 6 at δ 0)."""
    eps, k = start
    for r in rows:
        pure = _pure_of_spec(r.spec)
        if pure is None:
            eps, k = eps + float(r.epsilon_ref), k + 1
        else:
            eps += pure
    return eps, k


def fine_composition(state: Composition, parts: Iterable[Any]) -> Composition | None:
    """``state`` composed again at its releases' own discretization: the finest the library's
    rule (:func:`fdpkit.accounting._resolution.choose_discretization`, as ``privacy_report`` and
    ``calibrate_dpsgd`` choose it) gives any of ``parts``, the state's non-Gaussian mechanisms.
    None when the state is exact GDP, the rule is no finer than the state's own grid, or the
    work would exceed :data:`REFINE_WORK`. Certified like ``state`` (a pessimistic PLD)."""
    parts = tuple(parts)
    if state.pld is None or not parts:
        return None
    try:
        d = min(float(choose_discretization(m, search=False)[0]) for m in parts)
        if not d < state.discretization or sum(float(estimate_cost(m, d).work) for m in parts) > REFINE_WORK:
            return None
        fine = Composition.empty(d).add(parts)
    except (ValueError, ArithmeticError, IndexError, MemoryError):
        return None
    return Composition(state.count, state.gaussian_mu_sq, fine.pld, d)


class Total:
    """The composed guarantee of a set of releases, read lazily (each quantity is computed
    the first time it is asked for).

    Two certified readings: the running composition (discretization 1e-3), and, once
    :meth:`refine` is called (a threshold the running figure exceeds, :func:`crossings`), the
    same releases at their own grid, as their reports and calibrations account them (given
    ``parts``, the non-Gaussian mechanisms); each figure is then the smaller of the two, both
    upper bounds. A run calibrated to ε ≤ 2 at δ 2e-5 read 2.008 at the running grid alone.

    ``mu``/``regret``/``alpha_min``: tight μ-GDP fit (exact for GDP); ``epsilon_for_delta(delta)``
    from the accountant's profile (for GDP the closed form, rounded up); ``tpr``: certified TPR at FPR 1e-3; ``epsilon_sum`` and
    ``delta_sum``: the basic-composition claim (:func:`basic_claim`: a pure release adds
    its (ε, 0), any other its own (ε, 1e-5)), shown so users see what tight
    composition saves; ``epsilon_ref_sum``: the sum of each release's ε at 1e-5 (what
    the event chain records).
    """

    def __init__(self, composition: Composition, epsilon_sum: float, claim: Claim | None = None,
                 parts: Iterable[Any] = ()) -> None:
        self.composition = composition
        self.count = composition.count
        self.method = composition.method
        self.epsilon_ref_sum = float(epsilon_sum)
        #: the basic-composition claim (None: every release counted at (epsilon, 1e-5))
        self.claim = claim
        #: the non-Gaussian mechanisms of the composition (for :meth:`refine`)
        self.parts = tuple(parts)
        self._fine: Composition | None = None
        self._refined = False
        self._eps: dict[float, float] = {}
        self._fit: tuple[float, float, float] | None = None

    @property
    def refined(self) -> bool:
        """Whether the figures are read also at the releases' own grid (:meth:`refine`)."""
        return self._fine is not None

    def refine(self) -> bool:
        """Read the total also at its releases' own grid (:func:`fine_composition`), keeping
        each figure the smaller of the two certified ones; whether that second reading exists."""
        if not self._refined:
            self._refined = True
            fine = fine_composition(self.composition, self.parts)
            # a reading far below the running one would mean ``parts`` are not the state's (a
            # release left out): the running figure stands (a finer grid moves ε by far less)
            if fine is not None and (fine.epsilon_for_delta(DELTA_REF)
                                     >= (1.0 - REFINE_MARGIN) * self.epsilon_for_delta(DELTA_REF)):
                self._fine = fine
            if self._fine is not None:
                self._fit = None
                for d in list(self._eps):
                    self._eps[d] = min(self._eps[d], self._fine.epsilon_for_delta(d))
        return self._fine is not None

    @property
    def epsilon_sum(self) -> float:
        """ε of the basic-composition claim (at :attr:`delta_sum`)."""
        return self.epsilon_ref_sum if self.claim is None else float(self.claim[0])

    @property
    def bound(self) -> str:
        """``exact`` for an all-Gaussian total, ``lower`` (a sound lower bound of the curve) for a PLD."""
        return "lower" if self.method == "PLD" else "exact"

    @property
    def method_label(self) -> str:
        """The method as printed beside the figures: ``PLD (pessimistic)`` (the curve a lower
        bound, so μ, ε and the TPR are upper bounds; not "lower", which reads as an optimistic
        ε), ``GDP (exact)``, ``none (exact)``."""
        return f"{self.method} ({'pessimistic' if self.bound == 'lower' else self.bound})"

    def epsilon_for_delta(self, delta: float) -> float:
        """ε at ``delta`` of the total (from the accountant's profile; cached)."""
        d = float(delta)
        if d not in self._eps:
            if not (0.0 < d < 1.0):
                raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
            self._eps[d] = (float(epsilon_for_delta_from_mu(self.composition.gaussian_mu, d))
                            if self.method != "PLD" else self.composition.epsilon_for_delta(d))
            if self._fine is not None:
                self._eps[d] = min(self._eps[d], self._fine.epsilon_for_delta(d))
        return self._eps[d]

    def epsilon_at(self, delta: float) -> float:
        """Deprecated alias of :meth:`epsilon_for_delta` (renamed in 0.x, issue 23)."""
        warn_renamed(f"{type(self).__name__}.epsilon_at", f"{type(self).__name__}.epsilon_for_delta")
        return self.epsilon_for_delta(delta)

    @property
    def epsilon(self) -> float:
        """ε at the reference δ = 1e-5."""
        return self.epsilon_for_delta(DELTA_REF)

    @property
    def epsilons(self) -> dict[float, float]:
        """Every ε computed so far, by δ."""
        self.epsilon_for_delta(DELTA_REF)
        return dict(sorted(self._eps.items()))

    def _fitted(self) -> tuple[float, float, float]:
        if self._fit is None:
            if self.method == "PLD":
                fits = [fit_gdp(c.curve()) for c in (self.composition, self._fine) if c is not None]
                fit = min(fits, key=lambda f: float(f.mu))  # the tighter certified μ, with its range
                self._fit = (float(fit.mu), float(fit.regret), float(fit.alpha_min))
            else:
                self._fit = (self.composition.gaussian_mu, 0.0, 0.0)
        return self._fit

    @property
    def mu(self) -> float:
        """Tight μ of the total (Gomez et al. Eq. 5)."""
        return self._fitted()[0]

    @property
    def regret(self) -> float:
        """Regret of the μ-GDP summary of the total."""
        return self._fitted()[1]

    @property
    def alpha_min(self) -> float:
        """Lower end of the FPR range on which ``mu`` holds."""
        return self._fitted()[2]

    @property
    def tpr(self) -> float:
        """Certified TPR of the best attack at the reference FPR."""
        return self.tpr_at(FPR_REF)

    def tpr_at(self, fpr: float) -> float:
        """Certified TPR of the best attack at ``fpr``."""
        return min(float(c.curve().tpr(float(fpr))) for c in (self.composition, self._fine) if c is not None)

    @property
    def delta_sum(self) -> float:
        """δ of the basic-composition claim: the reference δ times the number of releases
        that are not pure ε-DP."""
        return reference_deltas(self.count if self.claim is None else self.claim[1])

    def value_of(self, t: ThresholdSpec) -> float:
        """The total's current value of a threshold's metric (μ, ε at its δ, or TPR at its FPR)."""
        if t.metric == "mu":
            return self.mu
        if t.metric == "epsilon":
            return self.epsilon_for_delta(t.delta)
        return self.tpr_at(t.fpr)

    def to_dict(self) -> dict[str, Any]:
        """The object as JSON-ready data (dicts, lists, numbers and strings)."""
        return self.reading().to_dict()

    def reading(self) -> "TotalReading":
        """The readings as plain numbers (no composition): cheap to pickle to another
        process or to hand to a template. Computes whatever was not read yet."""
        return TotalReading(self.count, self.method, self.bound, self.mu, self.regret, self.alpha_min,
                            dict(self.epsilons), self.tpr, self.epsilon_sum, self.delta_sum)


@dataclass(frozen=True)
class TotalReading:
    """A :class:`Total` read out: the same attributes and ``to_dict()``, no composition
    (the web's worker processes return these: a PLD composition can be megabytes).
    ``epsilons`` maps each delta read (``DELTA_REF`` and the thresholds' deltas) to epsilon."""

    count: int
    method: str
    bound: str
    mu: float
    regret: float
    alpha_min: float
    epsilons: dict[float, float]
    tpr: float
    epsilon_sum: float
    delta_sum: float

    @property
    def epsilon(self) -> float:
        """ε at the reference δ = 1e-5."""
        return self.epsilons[DELTA_REF]

    @property
    def method_label(self) -> str:
        """The method as printed beside the figures (as :attr:`Total.method_label`)."""
        return f"{self.method} ({'pessimistic' if self.bound == 'lower' else self.bound})"

    def epsilon_for_delta(self, delta: float) -> float:
        """ε at ``delta``, if it was read (ValueError otherwise)."""
        try:
            return self.epsilons[float(delta)]
        except KeyError:
            raise ValueError(f"delta {delta!r} was not read; read it from the Total") from None

    def to_dict(self) -> dict[str, Any]:
        """The object as JSON-ready data (dicts, lists, numbers and strings)."""
        return {"count": self.count, "method": self.method, "bound": self.bound, "mu": self.mu,
                "regret": self.regret, "alpha_min": self.alpha_min,
                "epsilon": self.epsilon, "delta": DELTA_REF,
                "epsilons": [{"delta": d, "epsilon": e} for d, e in self.epsilons.items()],
                "tpr_at_fpr": {"fpr": FPR_REF, "tpr": self.tpr},
                "epsilon_sum": self.epsilon_sum, "delta_sum": self.delta_sum}

    def epsilon_at(self, delta: float) -> float:
        """Deprecated alias of :meth:`epsilon_for_delta` (renamed in 0.x, issue 23)."""
        warn_renamed(f"{type(self).__name__}.epsilon_at", f"{type(self).__name__}.epsilon_for_delta")
        return self.epsilon_for_delta(delta)


def read_total(state: Composition, epsilon_sum: float, deltas: Iterable[float] = (),
               claim: Claim | None = None, parts: Iterable[Any] = ()) -> Total:
    """The total of ``state`` (read lazily; ``deltas`` are read at once; ``parts``: its
    non-Gaussian mechanisms, for :meth:`Total.refine`)."""
    total = Total(state, epsilon_sum, claim, parts)
    for d in deltas:
        total.epsilon_for_delta(d)
    return total


@dataclass(frozen=True)
class Crossing:
    """A threshold and the total's value against it."""

    threshold: ThresholdSpec
    current: float

    @property
    def exceeded(self) -> bool:
        """Whether the current value is above the threshold."""
        return self.current > self.threshold.value

    def message(self) -> str:
        """The crossing in words: the metric, its current value and the threshold."""
        t = self.threshold
        where = (f" at δ = {t.delta:g}" if t.metric == "epsilon"
                 else f" at FPR = {t.fpr:g}" if t.metric == "tpr" else "")
        limit = f"{t.value:g}" if float(f"{t.value:g}") == t.value else repr(float(t.value))
        current = safe_g(self.current, up=True)
        digits = 4
        while not self.exceeded and float(current) > t.value and digits < 17:  # rounded up past the limit
            digits += 1
            current = safe_g(self.current, digits, up=True)
        return (f"{t.level} threshold {'exceeded' if self.exceeded else 'not reached'}: "
                f"{METRIC_LABEL[t.metric]} {current} {'>' if self.exceeded else '<='} {limit}{where}")

    def to_dict(self) -> dict[str, Any]:
        """The object as JSON-ready data (dicts, lists, numbers and strings)."""
        t = self.threshold
        return {"metric": t.metric, "level": t.level, "value": t.value, "delta": t.delta, "fpr": t.fpr,
                "current": self.current, "exceeded": self.exceeded, "message": self.message()}


def settle(total: Total, thresholds: Iterable[ThresholdSpec]) -> Total:
    """``total``, read also at its releases' own grid (:meth:`Total.refine`) when the running
    grid's figure exceeds one of ``thresholds`` by at most :data:`REFINE_MARGIN`: a limit is
    exceeded only when the tighter certified reading exceeds it too (every figure of the total
    then the tighter one)."""
    if any(t.value < total.value_of(t) <= t.value * (1.0 + REFINE_MARGIN) for t in thresholds):
        total.refine()
    return total


def crossings(total: Total, thresholds: Iterable[ThresholdSpec]) -> list[Crossing]:
    """``total`` read against every threshold, hard ones first, then warning, then notice
    (each with its current value and whether it is exceeded; :func:`settle` first)."""
    order = {"hard": 0, "warning": 1, "notice": 2}
    thresholds = list(thresholds)
    settle(total, thresholds)
    return sorted((Crossing(t, total.value_of(t)) for t in thresholds),
                  key=lambda c: (order[c.threshold.level], c.threshold.metric))


def newly_exceeded(before: Total, after: Total, thresholds: Iterable[ThresholdSpec]) -> list[Crossing]:
    """Thresholds the ``after`` total exceeds and ``before`` did not (both :func:`settle` first)."""
    out = []
    thresholds = list(thresholds)
    settle(before, thresholds)
    settle(after, thresholds)
    for t in thresholds:
        c = Crossing(t, after.value_of(t))
        if c.exceeded and not before.value_of(t) > t.value:
            out.append(c)
    return out


@functools.lru_cache(maxsize=1024)
def _mechanism_of_spec(spec: str) -> Any:
    return mechanism_from_dict(json.loads(spec))


def parts_of(rows: Iterable[Any]) -> tuple[Any, ...]:
    """The non-Gaussian mechanisms of releases (rows with ``gaussian_mu`` and ``spec``): the
    ``parts`` of a :class:`Total` over them."""
    return tuple(_mechanism_of_spec(r.spec) for r in rows if r.gaussian_mu is None)


def add_rows(state: Composition, rows: list[Any]) -> Composition:
    """Add releases (rows with ``gaussian_mu`` and ``spec``) to a composition."""
    mu_sq, count, others = state.gaussian_mu_sq, state.count, []
    for r in rows:
        if r.gaussian_mu is not None:
            mu_sq += r.gaussian_mu ** 2
            count += 1
        else:
            others.append(mechanism_from_dict(json.loads(r.spec)))
    base = Composition(count, mu_sq, state.pld, state.discretization)
    return base.add(others) if others else base
