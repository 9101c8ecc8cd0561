"""Several guarantees on one trade-off plot (the view of R fdp's ``fdp()``).

A comparison is a short list of guarantees, each turned into its exact trade-off curve
(alpha = FPR on the x axis, beta = FNR on the y axis, Dong, Roth & Su 2022, Def. 2.1):

- ``"mu"``: mu-GDP, G_mu(alpha) = Phi(Phi^{-1}(1 - alpha) - mu) (Dong et al. Eq. 2.3);
- ``"epsilon_delta"``: the (epsilon, delta)-DP curve f_{eps,delta} (Dong et al. Eq. 2.2): the
  worst case over every mechanism with that guarantee;
- ``"epsilon"``: pure epsilon-DP, f_{eps,0};
- ``"laplace"``: the Laplace mechanism at epsilon (Dong et al. Sec. 2.4), or given its
  noise ``scale`` b and ``sensitivity`` Delta: epsilon = Delta / b;
- ``"gaussian"``: the Gaussian mechanism with noise sd ``sigma`` on a query of L2
  ``sensitivity`` Delta: mu = Delta / sigma (Dong et al. Thm. 2.7);
- ``"mechanism"``: a mechanism ``spec`` (as :func:`fdpkit.mechanisms.mechanism_from_dict`
  reads it, or a Mechanism) accounted numerically by :func:`fdpkit.accounting.tradeoff_curve`:
  a sound lower bound (``bound == "lower"``), the only curve here that is not exact and the
  only costly one (it honours ``budget``).

The closed-form curves are exact (``bound == "exact"``). At most :data:`MAX_CURVES` curves, so a
plot stays legible and a request stays cheap. Input errors name the entry and field,
``curves[i].field``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from fdpkit._numerics import json_safe, safe_g
from fdpkit.errors import ParameterError
from fdpkit.curves import EpsDeltaCurve, GaussianCurve, LaplaceCurve, TradeOffCurve
from fdpkit.accounting import tradeoff_curve
from fdpkit.mechanisms import Mechanism, mechanism_from_dict
from fdpkit.report import plots

#: Most curves on one plot.
MAX_CURVES = 8
#: Most points per curve in the data twin.
MAX_POINTS = 1001
#: The kinds of guarantee and the fields each one takes (required first).
KINDS: dict[str, tuple[str, ...]] = {
    "mu": ("mu",),
    "epsilon_delta": ("epsilon", "delta"),
    "epsilon": ("epsilon",),
    "laplace": ("epsilon", "scale", "sensitivity"),
    "gaussian": ("sigma", "sensitivity"),
    "mechanism": ("spec",),
}
KIND_LABELS = {
    "mu": "μ-GDP",
    "epsilon_delta": "(ε, δ)-DP",
    "epsilon": "pure ε-DP",
    "laplace": "Laplace mechanism",
    "gaussian": "Gaussian mechanism (σ)",
    "mechanism": "mechanism spec",
}
_FIELDS = ("mu", "epsilon", "delta", "scale", "sigma", "sensitivity")


@dataclass(frozen=True)
class ComparedCurve:
    """One guarantee of a comparison: its legend label, kind, inputs and exact curve."""

    label: str
    kind: str
    parameters: dict
    curve: TradeOffCurve

    def to_dict(self, alpha: np.ndarray) -> dict:
        """The object as JSON-ready data (dicts, lists, numbers and strings)."""
        return json_safe({"label": self.label, "kind": self.kind, "parameters": dict(self.parameters),
                          "bound": self.curve.bound, "alpha": alpha.tolist(),
                          "beta": np.asarray(self.curve.beta(alpha), dtype=float).tolist()})


@dataclass(frozen=True)
class CurveComparison:
    """Several exact trade-off curves, to draw on one plot (:meth:`draw`) or export."""

    curves: tuple[ComparedCurve, ...]

    @property
    def title(self) -> str:
        """A title naming every compared curve."""
        return "Trade-off curves: " + "; ".join(c.label for c in self.curves)

    def mapping(self) -> dict[str, TradeOffCurve]:
        """``{label: curve}`` for plotting."""
        return {c.label: c.curve for c in self.curves}

    def draw(self, ax):
        """All curves on ``ax`` with the 1 - alpha diagonal and a legend below the axes (up to
        eight labels stay legible and never hide a curve)."""
        plots.tradeoff(ax, self.mapping())
        handles, labels = ax.get_legend_handles_labels()
        ax.get_legend().remove()
        ax.figure.legend(handles, labels, loc="outside lower center", fontsize="small", frameon=False)
        return ax

    def summary(self, fprs: Sequence[float] = (1e-3, 0.1)) -> list[dict]:
        """Per curve: label, kind, bound and the best attack's TPR = 1 - beta at each FPR."""
        rows = []
        for c in self.curves:
            tpr = {f"{a:g}": float(c.curve.tpr(a)) for a in fprs}
            rows.append({"label": c.label, "kind": c.kind, "bound": c.curve.bound, "tpr_at_fpr": tpr})
        return json_safe(rows)

    def to_dict(self, points: int = 101) -> dict:
        """The curves sampled at ``points`` equally spaced FPRs in [0, 1] (FNR = beta)."""
        if isinstance(points, bool) or not isinstance(points, int) or not 2 <= points <= MAX_POINTS:
            raise ParameterError(f"points must be an integer in [2, {MAX_POINTS}], got {points!r}", parameter="points")
        alpha = np.linspace(0.0, 1.0, points)
        return {"title": self.title, "x": "FPR (alpha)", "y": "FNR (beta)",
                "curves": [c.to_dict(alpha) for c in self.curves], "summary": self.summary()}


def _number(where: str, name: str, value: Any, *, positive: bool = False, upper: float | None = None) -> float:
    what = f"{where}.{name}"  # the argument at fault, e.g. curves[1].delta (ParameterError.parameter)
    if isinstance(value, bool) or value is None:
        raise ParameterError(f"{what} must be a number, got {value!r}", parameter=what)
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"{what} must be a number, got {value!r}", parameter=what) from None
    if not math.isfinite(v):
        raise ParameterError(f"{what} must be a finite number, got {value!r}", parameter=what)
    if v < 0 or (positive and v == 0):
        raise ParameterError(f"{what} must be {'> 0' if positive else '>= 0'}, got {value!r}", parameter=what)
    if upper is not None and v > upper:
        raise ParameterError(f"{what} must be <= {upper:g}, got {value!r}", parameter=what)
    return v


def _mechanism_curve(where: str, spec: Any, discretization: float, budget: Any) -> ComparedCurve:
    if isinstance(spec, Mechanism):
        mech = spec
    elif isinstance(spec, Mapping):
        try:
            mech = mechanism_from_dict(dict(spec))
        except ValueError as exc:
            raise ParameterError(f"{where}.spec: {exc}", parameter=f"{where}.spec") from None
    else:
        raise ParameterError(f"{where}.spec must be a mechanism spec (a JSON object), got {type(spec).__name__}",
                             parameter=f"{where}.spec")
    curve = tradeoff_curve(mech, discretization=discretization, budget=budget)
    return ComparedCurve(mech.label(), "mechanism", {"mechanism": mech.to_dict(), "discretization": discretization},
                         curve)


def _per_noise(where: str, given: Mapping[str, Any], noise: str, name: str) -> tuple[float, float, float]:
    """(noise scale, sensitivity, sensitivity / scale) of a Laplace ``scale`` or Gaussian
    ``sigma``, the ratio (epsilon or mu, called ``name``) at most 100."""
    scale = _number(where, noise, given.get(noise), positive=True)
    sens = _number(where, "sensitivity", given.get("sensitivity", 1.0), positive=True)
    ratio = sens / scale
    if ratio > 100.0:
        raise ParameterError(f"{where}.{noise} is too small for sensitivity {sens:g}: {name} = {ratio:g} > 100",
                             parameter=f"{where}.{noise}")
    return scale, sens, ratio


def compared_curve(entry: Mapping[str, Any], where: str = "curve", *, discretization: float = 1e-4,
                   budget: Any = None) -> ComparedCurve:
    """One guarantee ``{"kind": ..., <its fields>}`` as a labelled curve (``discretization``
    and ``budget`` apply to a mechanism spec only)."""
    if not isinstance(entry, Mapping):
        raise ValueError(f"{where} must be an object with a kind, got {type(entry).__name__}")
    kind = entry.get("kind")
    if kind not in KINDS:
        raise ParameterError(f"{where}.kind must be one of {', '.join(KINDS)}, got {kind!r}", parameter=f"{where}.kind")
    given = {k: v for k, v in entry.items() if k != "kind" and v is not None}
    extra = sorted(set(given) - set(KINDS[kind]))
    if extra:
        raise ParameterError(f"{where}.{extra[0]} does not apply to kind {kind!r} (it takes {', '.join(KINDS[kind])})",
                                 parameter=f"{where}.{extra[0]}")
    if kind == "mechanism":
        return _mechanism_curve(where, entry.get("spec"), discretization, budget)
    if kind == "mu":
        mu = _number(where, "mu", entry.get("mu"), upper=100.0)
        return ComparedCurve(f"μ = {mu:g} GDP", kind, {"mu": mu}, GaussianCurve(mu))
    if kind in ("epsilon_delta", "epsilon"):
        eps = _number(where, "epsilon", entry.get("epsilon"), upper=100.0)
        delta = _number(where, "delta", entry.get("delta"), upper=1.0) if kind == "epsilon_delta" else 0.0
        label = f"(ε, δ) = ({eps:g}, {delta:g})" if kind == "epsilon_delta" else f"pure ε = {eps:g}"
        return ComparedCurve(label, kind, {"epsilon": eps, "delta": delta}, EpsDeltaCurve(eps, delta))
    if kind == "laplace":
        if ("epsilon" in given) == ("scale" in given):
            raise ParameterError(f"{where}.epsilon or {where}.scale is required for kind 'laplace' (exactly one)",
                                 parameter=f"{where}.epsilon")
        if "epsilon" in given:
            if "sensitivity" in given:
                raise ParameterError(f"{where}.sensitivity applies only with {where}.scale",
                                     parameter=f"{where}.sensitivity")
            eps = _number(where, "epsilon", given["epsilon"], upper=100.0)
            return ComparedCurve(f"Laplace, ε = {eps:g}", kind, {"epsilon": eps}, LaplaceCurve(eps))
        b, sens, eps = _per_noise(where, given, "scale", "epsilon")
        return ComparedCurve(f"Laplace b = {b:g} (Δ = {sens:g}): ε = {safe_g(eps, up=True)}", kind,
                             {"scale": b, "sensitivity": sens, "epsilon": eps}, LaplaceCurve(eps))
    sigma, sens, mu = _per_noise(where, given, "sigma", "mu")
    return ComparedCurve(f"Gaussian σ = {sigma:g} (Δ = {sens:g}): μ = {safe_g(mu, up=True)}", kind,
                         {"sigma": sigma, "sensitivity": sens, "mu": mu}, GaussianCurve(mu))


def compare_guarantees(entries: Sequence[Mapping[str, Any]], *, discretization: float = 1e-4,
                       budget: Any = None) -> CurveComparison:
    """Several guarantees as exact trade-off curves for one plot (R fdp's ``fdp()`` view).

    Parameters
    ----------
    entries : sequence of mappings
        1 to :data:`MAX_CURVES` guarantees, each ``{"kind": k, ...}`` with the fields of
        :data:`KINDS` (see the module docstring).
    discretization : float
        PLD discretization for ``"mechanism"`` entries (ignored by the closed forms).
    budget : fdpkit.accounting.CostBudget, optional
        Refuse a ``"mechanism"`` entry whose accounting would exceed it (ValueError).

    Examples
    --------
    >>> cmp = compare_guarantees([{"kind": "mu", "mu": 1}, {"kind": "epsilon_delta", "epsilon": 1, "delta": 1e-5},
    ...                           {"kind": "laplace", "scale": 2.0}])
    >>> [c.label for c in cmp.curves]
    ['μ = 1 GDP', '(ε, δ) = (1, 1e-05)', 'Laplace b = 2 (Δ = 1): ε = 0.5']
    >>> {c.curve.bound for c in cmp.curves}
    {'exact'}
    """
    if isinstance(entries, (str, bytes, Mapping)) or not isinstance(entries, Sequence):
        raise ValueError(f"curves must be a list of guarantees, got {type(entries).__name__}")
    if not 1 <= len(entries) <= MAX_CURVES:
        raise ValueError(f"curves must hold 1 to {MAX_CURVES} guarantees, got {len(entries)}")
    out = [compared_curve(e, f"curves[{i}]", discretization=discretization, budget=budget)
           for i, e in enumerate(entries)]
    labels = [c.label for c in out]
    dupes = sorted({x for x in labels if labels.count(x) > 1})
    if dupes:
        raise ValueError(f"curves lists the same guarantee twice: {dupes[0]}")
    return CurveComparison(tuple(out))
