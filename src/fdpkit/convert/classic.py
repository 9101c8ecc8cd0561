"""The classic DP calculator, made right: textbook formulas next to the exact answers.

The seed calculator page offers Laplace (eps = Delta/b), the classic Gaussian bound
sigma = sqrt(2 ln(1.25/delta)) Delta / eps (Dwork & Roth 2014, Thm. A.1, valid only for
eps < 1) and basic / advanced composition (Dwork, Rothblum & Vadhan 2010). fdpkit adds the
exact answers from Gaussian DP: the Gaussian mechanism with sd sigma is (Delta/sigma)-GDP,
so the smallest sigma meeting (eps, delta) is Delta / mu(eps, delta) (Gomez et al. Table 3),
and k Gaussian releases compose exactly to mu = sqrt(k) Delta / sigma (Dong et al. Cor. 3.3).

The **tight epsilon** of a composition is the PLD composition of the stated per-release
guarantees themselves (each pure eps_i-DP or (eps_i, delta_i)-DP release as the worst-case
mechanism with that guarantee, dp_accounting's pessimistic PLD), read at the advanced
total delta sum delta_i + delta' (= delta' for pure releases): the smallest epsilon any
analysis of those guarantees can certify, and the one to use. Every answer carries a grade
(:func:`fdpkit.risk.grade`) of what it describes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from fdpkit._numerics import MU_MAX, check_nonnegative, check_positive, check_probability, check_scalar, safe_g
from fdpkit._inputs import is_plain_number, plausibility_warnings
from fdpkit.accounting import BudgetExceeded, CostBudget, account
from fdpkit.convert.noise_effect import noise_effect
from fdpkit.errors import ParameterError
from fdpkit.convert.pure import mu_from_pure_epsilon
from fdpkit.curves import EpsDeltaCurve, GaussianCurve, LaplaceCurve
from fdpkit.fit import fit_gdp
from fdpkit.mechanisms import ApproxDP, Composed, PureDP, Repeated
from fdpkit.risk.grade import grade
from fdpkit.convert.gdp import epsilon_for_delta_from_mu, mu_for_epsilon_delta

MODES = ("laplace", "gaussian", "composition")


def _pos(name: str, v: Any) -> float:
    return check_scalar(name, check_positive(name, v))


def _delta(name: str, v: Any) -> float:
    return check_scalar(name, check_probability(name, v, open_low=True, open_high=True))


def _k(k: Any) -> int:
    v = check_scalar("k", k)
    if v != int(v) or v < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    return int(v)


def laplace_scale(sensitivity: float, epsilon: float) -> float:
    """b = Delta / eps.

    >>> laplace_scale(1.0, 0.5)
    2.0
    """
    return _pos("sensitivity", sensitivity) / _pos("epsilon", epsilon)


def laplace_epsilon(sensitivity: float, scale: float) -> float:
    """eps = Delta / b.

    >>> laplace_epsilon(1.0, 1.0)
    1.0
    """
    return _pos("sensitivity", sensitivity) / _pos("scale", scale)


def laplace_noise_sd(scale: float) -> float:
    """Standard deviation sqrt(2) b of Laplace noise with scale b."""
    return math.sqrt(2.0) * _pos("scale", scale)


def classic_gaussian_sigma(sensitivity: float, epsilon: float, delta: float) -> float:
    """sigma = sqrt(2 ln(1.25/delta)) Delta / eps (Dwork & Roth Thm. A.1; valid for eps < 1).

    >>> round(classic_gaussian_sigma(1.0, 1.0, 1e-5), 4)
    4.8448
    """
    return math.sqrt(2.0 * _log_125_over("delta", delta)) * _pos("sensitivity", sensitivity) / _pos("epsilon", epsilon)


def classic_gaussian_epsilon(sensitivity: float, sigma: float, delta: float) -> float:
    """eps = sqrt(2 ln(1.25/delta)) Delta / sigma (the classic bound rearranged)."""
    return math.sqrt(2.0 * _log_125_over("delta", delta)) * _pos("sensitivity", sensitivity) / _pos("sigma", sigma)


def _log_125_over(name: str, delta: Any) -> float:
    """ln(1.25 / delta), finite for every delta in (0, 1) (1.25 / 1e-320 overflows)."""
    return math.log(1.25) - math.log(_delta(name, delta))


def exact_gaussian_sigma(sensitivity: float, epsilon: float, delta: float) -> float:
    """The smallest sigma for which Gaussian noise gives (eps, delta)-DP: Delta / mu(eps,
    delta) from Gaussian DP (exact; valid for every eps).

    >>> round(exact_gaussian_sigma(1.0, 1.0, 1e-5), 4)
    3.7306
    """
    mu = float(mu_for_epsilon_delta(_pos("epsilon", epsilon), _delta("delta", delta)))
    s = _pos("sensitivity", sensitivity)
    return s / mu if mu > 0.0 else math.inf


def exact_gaussian_epsilon(sensitivity: float, sigma: float, delta: float) -> float:
    """Exact eps at delta of Gaussian noise with sd sigma: eps_mu(delta), mu = Delta/sigma."""
    return float(epsilon_for_delta_from_mu(_pos("sensitivity", sensitivity) / _pos("sigma", sigma), _delta("delta", delta)))


def basic_composition(k: int, epsilon: float, delta: float = 0.0) -> tuple[float, float]:
    """(k eps, k delta) for k releases."""
    k = _k(k)
    d = check_scalar("delta", check_probability("delta", delta))
    return k * check_scalar("epsilon", check_positive("epsilon", epsilon, allow_zero=True)), min(1.0, k * d)


def advanced_composition(k: int, epsilon: float, delta: float, delta_prime: float) -> tuple[float, float]:
    """(sqrt(2k ln(1/delta')) eps + k eps (e^eps - 1), k delta + delta') (Dwork, Rothblum &
    Vadhan 2010).

    >>> round(advanced_composition(10, 0.1, 0.0, 1e-5)[0], 4)
    1.6226
    """
    k = _k(k)
    e = check_scalar("epsilon", check_positive("epsilon", epsilon, allow_zero=True))
    d = check_scalar("delta", check_probability("delta", delta))
    dp = _delta("delta_prime", delta_prime)
    return math.sqrt(2.0 * k * math.log(1.0 / dp)) * e + k * e * math.expm1(e), min(1.0, k * d + dp)


def compose_releases(releases: Any, delta_prime: float = 1e-5) -> dict[str, float]:
    """Basic and advanced composition of releases with different (eps_i, delta_i).

    Basic: (sum eps_i, sum delta_i). Advanced (Dwork, Rothblum & Vadhan 2010, in its
    heterogeneous form): eps = sqrt(2 ln(1/delta') sum eps_i^2) + sum eps_i (e^eps_i - 1),
    delta = sum delta_i + delta'; with equal eps_i this is :func:`advanced_composition`.
    The Gaussian-DP answer is added beside them: a Gaussian mechanism calibrated to
    (eps_i, delta_i) is mu_i-GDP with mu_i = mu(eps_i, delta_i) (Gomez et al. Table 3), every
    pure eps_i-DP mechanism is mu_i-GDP with mu_i = mu*(eps_i) (Gomez et al. Prop. 6.1), the
    composition is sqrt(sum mu_i^2)-GDP (Dong et al. Cor. 3.3), and its eps is read at the
    advanced total delta. With only pure releases this holds for any mechanisms; a release
    with delta_i > 0 is read as a Gaussian mechanism (any (eps, delta)-DP mechanism has no
    finite mu).

    >>> out = compose_releases([(0.5, 0.0), (1.0, 0.0), (0.25, 0.0)])
    >>> out["basic epsilon"]
    1.75
    >>> round(out[PURE_MU], 3)
    1.416
    """
    items = [(float(check_scalar("epsilon", check_positive("epsilon", e, allow_zero=True))),
              float(check_scalar("delta", check_probability("delta", d)))) for e, d in list(releases)]
    if not items:
        raise ValueError("releases must list at least one (epsilon, delta) pair")
    dp = _delta("delta_prime", delta_prime)
    eps = [e for e, _ in items]
    dts = [d for _, d in items]
    out = {"basic epsilon": sum(eps), "basic delta": min(1.0, sum(dts))}
    out["advanced epsilon"] = (math.sqrt(2.0 * math.log(1.0 / dp) * sum(e * e for e in eps))
                               + sum(e * math.expm1(e) if e < 700 else math.inf for e in eps))
    out["advanced delta"] = min(1.0, sum(dts) + dp)
    if all(d < 1 for d in dts) and out["advanced delta"] < 1:
        out.update(_gdp_total([(e, d) for e, d in items], out["advanced delta"]))
        tight = _tight(items, out["advanced delta"])[0]
        if tight is not None:
            out[TIGHT_EPSILON], out[TIGHT_DELTA] = tight, out["advanced delta"]
    return out


#: Output names of the tight (PLD) composition of the stated guarantees.
TIGHT_EPSILON = "tight epsilon"
TIGHT_DELTA = "tight delta"


def _release_error(i: int, exc: ParameterError) -> ParameterError:
    """A library error about one release's ``epsilon`` or ``delta`` ("epsilon must be <= 100")
    naming that release (``releases[1].epsilon must be ...``, parameter ``releases``); any other
    error unchanged."""
    if exc.parameter in ("epsilon", "delta") and str(exc).startswith(exc.parameter):
        return ParameterError(f"releases[{i}].{exc}", "releases")
    return exc


def _composed(items: list[tuple[float, float]]):
    def one(i: int, e: float, d: float):
        try:
            return PureDP(e) if d == 0 else ApproxDP(e, d)
        except ParameterError as exc:
            raise _release_error(i, exc) from None

    if len(set(items)) == 1:
        return one(0, *items[0]) if len(items) == 1 else Repeated(one(0, *items[0]), len(items))
    return Composed([one(i, e, d) for i, (e, d) in enumerate(items)])


def tight_composition(items: list[tuple[float, float]], delta: float):
    """Tight epsilon at ``delta`` of releases with the stated (eps_i, delta_i) guarantees: the
    pessimistic PLD composition of the worst-case mechanisms (see the module docs), and the
    :class:`fdpkit.accounting.Accounting` it was read from.

    >>> round(tight_composition([(0.2, 0.0)] * 50, 1e-5)[0], 4)
    6.3078
    """
    acc = account(_composed(items), budget=CostBudget(**TIGHT_BUDGET))
    return float(acc.epsilon_for_delta(_delta("delta", delta))), acc


#: Cost limit of the tight composition: about a second of CPU (``max_work`` in units of
#: ``fdpkit.accounting.cost.WORK_PER_SECOND``), and the web's grid and memory limits;
#: beyond it the calculator says so. (It was 3e7 work, 2e6 points and 256 MiB while the cost
#: model read these compositions 10-16x above their time: 200 releases of epsilon 1 were
#: refused, for 0.3 s.)
TIGHT_BUDGET = {"max_grid_points": 8_000_000, "max_work": 1e7, "max_memory_bytes": 1024**3}
TIGHT_SKIPPED = ("The tight epsilon was not computed: accounting these releases exceeds the calculator's "
                 "time limit (too many releases or too large an epsilon). `fdpkit report` computes it at any cost.")


def _tight(items: list[tuple[float, float]], delta: float):
    """(tight epsilon, accounting) or (None, None) when over the calculator's cost limit."""
    try:
        return tight_composition(items, delta)
    except BudgetExceeded:
        return None, None


#: Output names of the Gaussian-DP answer beside the classic composition totals.
GAUSSIAN_MU = "mu if every release is Gaussian (exact)"
GAUSSIAN_EPSILON = "exact epsilon at the advanced delta (Gaussian DP)"
PURE_MU = "mu of any pure-epsilon releases (Gaussian DP, Gomez et al. Prop. 6.1)"
PURE_EPSILON = "epsilon at the advanced delta from that mu (Gaussian DP)"
MIXED_MU = "mu if every (epsilon, delta) release is Gaussian, pure ones any mechanism (Gaussian DP)"


def _gdp_total(items: list[tuple[float, float]], delta: float) -> dict[str, float]:
    """sqrt(sum mu_i^2) of the releases (see :func:`compose_releases`) and eps at ``delta``."""
    from collections import Counter

    mus: dict[tuple[float, float], float] = {}
    for i, (e, d) in enumerate(items):
        if (e, d) in mus:
            continue
        try:
            mus[(e, d)] = float(mu_for_epsilon_delta(e, d)) if d > 0 else float(mu_from_pure_epsilon(e))
        except ParameterError as exc:  # the release's epsilon, not the form's
            raise _release_error(i, exc) from None
    # m * m, not m ** 2: inf where it overflows (** raised OverflowError for epsilon = 1e308)
    mu = math.sqrt(sum(n * mus[k] * mus[k] for k, n in Counter(items).items()))
    if not math.isfinite(mu):
        raise ParameterError(f"releases: an epsilon of {max(e for e, _ in items):g} has no finite Gaussian-DP mu; "
                             "give epsilons of at most 100", "releases")
    if mu > MU_MAX:  # epsilon_for_delta_from_mu said "mu must be <= 1000", a quantity the user never gave
        raise ParameterError(f"releases: together they are mu-GDP with mu = sqrt(sum of mu_i^2) = {mu:.4g}, above "
                             f"{MU_MAX:g}, the largest mu fdpkit converts; give fewer releases or smaller epsilons",
                             "releases")
    if all(d > 0 for _, d in items):
        names = (GAUSSIAN_MU, GAUSSIAN_EPSILON)
    else:
        names = (PURE_MU if all(d == 0 for _, d in items) else MIXED_MU, PURE_EPSILON)
    return {names[0]: mu, names[1]: float(epsilon_for_delta_from_mu(mu, delta))}


def parse_releases(text: str) -> list[tuple[float, float]]:
    """Releases from text, one "epsilon, delta" (or "epsilon") per line or separated by ";".

    >>> parse_releases("0.5, 1e-6; 1")
    [(0.5, 1e-06), (1.0, 0.0)]
    """
    out = []
    for k, part in enumerate(p.strip() for p in str(text).replace(";", "\n").splitlines()):
        if not part:
            continue
        bits = [b.strip() for b in part.replace("\t", ",").split(",") if b.strip()]
        try:
            if len(bits) not in (1, 2) or not all(is_plain_number(b) for b in bits):  # not "1_000", "١"
                raise ValueError
            out.append((float(bits[0]), float(bits[1]) if len(bits) == 2 else 0.0))
        except ValueError:
            raise ValueError(f"releases line {k + 1} must be 'epsilon, delta' or 'epsilon', got {part!r}") from None
    return out


def exact_gaussian_composition_epsilon(k: int, sensitivity: float, sigma: float, delta: float) -> float:
    """Exact eps at delta for k Gaussian releases (mu = sqrt(k) Delta / sigma)."""
    mu = math.sqrt(_k(k)) * _pos("sensitivity", sensitivity) / _pos("sigma", sigma)
    return float(epsilon_for_delta_from_mu(mu, _delta("delta", delta)))


@dataclass(frozen=True)
class CalculatorResult:
    """Inputs, outputs (label -> value) and warnings of one calculator run."""

    mode: str
    inputs: dict[str, Any]
    outputs: dict[str, float]
    warnings: tuple[str, ...] = field(default=())
    #: the grade (fdpkit.risk.Grade) of the answer's guarantee: the mechanism computed, or the
    #: tight composition of the releases
    grade: Any = None

    def rows(self) -> list[tuple[str, str, str]]:
        """(section, name, value) rows for exports."""
        out = [("input", "mode", self.mode)] + [("input", k, str(v)) for k, v in self.inputs.items()]
        out += [("output", k, repr(v)) for k, v in self.outputs.items()]  # full precision (CSV)
        out += [("warning", "", w) for w in self.warnings]
        return out

    def to_dict(self) -> dict[str, Any]:
        """The object as JSON-ready data (dicts, lists, numbers and strings)."""
        return {"mode": self.mode, "inputs": dict(self.inputs), "outputs": dict(self.outputs),
                "warnings": list(self.warnings), "grade": self.grade.to_dict() if self.grade is not None else None}


def calculate(mode: str, *, sensitivity: float = 1.0, epsilon: float | None = None,
              delta: float | None = None, scale: float | None = None, sigma: float | None = None,
              k: int = 1, delta_prime: float = 1e-5, releases: Any = None, fpr: float = 1e-3,
              standard_error: float | None = None) -> CalculatorResult:
    """See :func:`_calculate`; adds plausibility warnings (delta sanity, huge epsilon) and
    what the noise does (:mod:`fdpkit.convert.noise_effect`): the best attack's TPR at
    ``fpr`` before and after noise, the 95% interval width of the released statistic
    (standard error ``standard_error`` before noise) without and with noise, and the
    expected |noise|."""
    fpr = check_scalar("fpr", check_probability("fpr", fpr, open_low=True, open_high=True))
    if standard_error is not None:
        standard_error = check_scalar("standard_error", check_nonnegative("standard_error", standard_error))
    res = _calculate(mode, sensitivity=sensitivity, epsilon=epsilon, delta=delta, scale=scale, sigma=sigma,
                     k=k, delta_prime=delta_prime, releases=releases)
    _check_noise_finite(res, "noise")
    res = _with_noise_effect(res, fpr, standard_error)
    _check_noise_finite(res, "noise's effect")
    if TIGHT_EPSILON in res.outputs:  # one piece of advice: the tight total, the others beside it
        o = res.outputs
        res = CalculatorResult(res.mode, res.inputs, o, res.warnings + (
            f"Use the tight epsilon {safe_g(o[TIGHT_EPSILON], up=True)} at delta {safe_g(o[TIGHT_DELTA], 3, up=True)}: the exact "
            f"composition of the stated guarantees (basic gives {safe_g(o['basic epsilon'], up=True)}, advanced "
            f"{safe_g(o['advanced epsilon'], up=True)}; "
            "both are valid but looser" + ("; the Gaussian-DP reading is looser than basic composition here"
                                            if o.get(PURE_EPSILON, -math.inf) > o["basic epsilon"] else "") + ").",),
            res.grade)
    elif res.outputs.get(PURE_EPSILON, -math.inf) > res.outputs.get("basic epsilon", math.inf):
        res = CalculatorResult(res.mode, res.inputs, res.outputs, res.warnings + (
            "With few pure-ε releases the Gaussian-DP reading is looser than basic composition: use the basic "
            "total (Gaussian DP pays off for many releases).",), res.grade)
    rel = parse_releases(releases) if isinstance(releases, str) else list(releases or [])
    if mode == "composition" and rel:  # the list replaces epsilon, delta and k: warn about what is used
        extra = plausibility_warnings(deltas=[d for _, d in rel if d > 0] + [delta_prime])
        extra += [w for e, _ in rel for w in plausibility_warnings(epsilon=e)]
    else:
        extra = plausibility_warnings(epsilon=epsilon, delta=None if mode == "laplace" else (delta or None),
                                      deltas=[delta_prime] if mode == "composition" else [])
    return CalculatorResult(res.mode, res.inputs, res.outputs, tuple(extra) + res.warnings, res.grade)


def _check_noise_finite(res: CalculatorResult, what: str) -> None:
    """Refuse a Laplace or Gaussian answer with a value beyond the floats (sigma for epsilon
    = 1e-320, the interval width for scale = 1e308), naming the input that asks for it: the
    noise parameter given (scale, sigma or epsilon), with the sensitivity beside it."""
    if res.mode not in ("laplace", "gaussian"):
        return
    bad = [k for k, v in res.outputs.items() if isinstance(v, float) and not math.isfinite(v)]
    if not bad:
        return
    given = next(n for n in ("scale", "sigma", "epsilon") if n in res.inputs)
    raise ParameterError(
        f"{given} {res.inputs[given]!r} with sensitivity {res.inputs['sensitivity']!r} is out of range: the "
        f"{what} ({bad[0]}) is beyond the largest floating-point number", given, (given, "sensitivity"))


def _with_noise_effect(res: CalculatorResult, fpr: float, standard_error: float | None) -> CalculatorResult:
    """The result with the before/after rows added (the seed page's "compare attack success
    rates before and after noise" and "confidence-interval widening")."""
    out, inp = dict(res.outputs), dict(res.inputs)
    s = float(inp.get("sensitivity", 1.0))
    kw = dict(sensitivity=s, fpr=fpr, standard_error=standard_error)
    if res.mode == "laplace":
        b = out.get("scale b", inp.get("scale"))
        out.update(noise_effect("laplace", scale=float(b), **kw))
    elif res.mode == "gaussian" and "exact sigma (Gaussian DP)" in out:
        out.update(noise_effect("gaussian", scale=out["exact sigma (Gaussian DP)"], label="exact σ", **kw))
        out.update(noise_effect("gaussian", scale=out["classic sigma"], label="classic σ", **kw))
    elif res.mode == "gaussian":
        out.update(noise_effect("gaussian", scale=float(inp["sigma"]), **kw))
    else:  # composition: the attack on all releases together
        # basic composition holds for any mechanisms: TPR <= e^eps FPR + delta (and its mirror)
        be, bd = out["basic epsilon"], out["basic delta"]
        basic = float(EpsDeltaCurve(be, bd).tpr(fpr)) if bd < 1 and math.isfinite(be) else 1.0
        if "sigma (Gaussian releases)" in inp:  # exact: k Gaussian releases are sqrt(k) Delta / sigma-GDP
            mu = math.sqrt(inp["k"]) * s / float(inp["sigma (Gaussian releases)"])
            tpr, how = float(GaussianCurve(mu).tpr(fpr)), f"Gaussian releases, μ = {safe_g(mu, up=True)}"
        elif PURE_MU in out:  # Prop. 6.1 holds for any pure releases: the tighter of the two bounds
            tpr, how = min(basic, float(GaussianCurve(out[PURE_MU]).tpr(fpr))), "any mechanisms"
        else:
            tpr, how = basic, "any mechanisms, basic composition"
        out[f"best attack TPR at FPR {fpr:g} without noise"] = 1.0
        out[f"best attack TPR at FPR {fpr:g} with noise (all releases; {how})"] = tpr
    inp["reference FPR"] = fpr
    if standard_error is not None:
        inp["standard error without noise"] = standard_error
    return CalculatorResult(res.mode, inp, out, res.warnings, res.grade)


def _classic_beyond_proof(holds: bool, given_sigma: bool) -> str:
    """The calculator's warning where the classic Gaussian bound (Dwork & Roth Thm. A.1) is used
    beyond its proof (epsilon >= 1), by whether the exact answer (Balle & Wang) shows that its
    result still holds there. "Not a valid guarantee" beside "adds 1% more noise than needed"
    (epsilon 8: classic sigma 0.6057, exact 0.6003) contradicted itself."""
    if holds:
        why = "the classic epsilon is at least the exact one" if given_sigma else "the classic sigma is at least the exact one"
        return ("The classic Gaussian bound is only proven for epsilon < 1, so its own proof does not cover this "
                f"result; the exact Gaussian-DP check shows that it still holds here ({why}). Use the exact "
                "Gaussian-DP value: it is proven, and tighter.")
    why = ("the classic epsilon is below the exact one: the noise gives less privacy than it claims" if given_sigma
           else "the classic sigma is below the exact one: too little noise for this (epsilon, delta)")
    return ("The classic Gaussian bound is only proven for epsilon < 1, and here its result is not a valid "
            f"guarantee ({why}). Use the exact Gaussian-DP value.")


def _calculate(mode: str, *, sensitivity: float = 1.0, epsilon: float | None = None,
               delta: float | None = None, scale: float | None = None, sigma: float | None = None,
               k: int = 1, delta_prime: float = 1e-5, releases: Any = None) -> CalculatorResult:
    """One run of the calculator (``mode`` in laplace, gaussian, composition).

    laplace: give epsilon (-> b) or scale (-> eps). gaussian: give epsilon and delta (->
    classic and exact sigma) or sigma and delta (-> classic and exact eps). composition: k
    releases of (epsilon, delta) -> basic and advanced totals, plus the exact GDP total when
    the releases are Gaussian (sigma given).

    >>> r = calculate("gaussian", sensitivity=1.0, epsilon=1.0, delta=1e-5)
    >>> round(r.outputs["classic sigma"], 2), round(r.outputs["exact sigma (Gaussian DP)"], 2)
    (4.84, 3.73)
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    s = _pos("sensitivity", sensitivity)
    warnings: list[str] = []
    if mode == "laplace":
        if (epsilon is None) == (scale is None):
            raise ValueError("give exactly one of epsilon or scale for the Laplace mechanism")
        if epsilon is not None:
            b = laplace_scale(s, epsilon)
            inputs, outputs = {"sensitivity": s, "epsilon": epsilon}, {"scale b": b}
            if not math.isfinite(b):
                _check_noise_finite(CalculatorResult(mode, inputs, outputs), "noise")
        else:
            b = float(scale)
            inputs, outputs = {"sensitivity": s, "scale": scale}, {"epsilon": laplace_epsilon(s, scale)}
        outputs["noise sd (sqrt(2) b)"] = laplace_noise_sd(b)
        outputs["mu of this Laplace mechanism (tight Gaussian DP)"] = float(fit_gdp(LaplaceCurve(s / b)).mu)
        return CalculatorResult(mode, inputs, outputs, (), _grade(LaplaceCurve(s / b)))
    if mode == "gaussian":
        if delta is None:
            raise ValueError("delta is required for the Gaussian mechanism")
        if (epsilon is None) == (sigma is None):
            raise ValueError("give exactly one of epsilon or sigma for the Gaussian mechanism")
        if epsilon is not None:
            classic = classic_gaussian_sigma(s, epsilon, delta)
            exact = exact_gaussian_sigma(s, epsilon, delta)
            inputs = {"sensitivity": s, "epsilon": epsilon, "delta": delta}
            outputs = {"classic sigma": classic, "exact sigma (Gaussian DP)": exact,
                       "mu of the exact mechanism": s / exact}
            eps = float(epsilon)
            if classic > exact:
                warnings.append(f"The classic bound adds {classic / exact - 1:.0%} more noise than needed: "
                                "the exact Gaussian-DP sigma gives the same (epsilon, delta).")
        else:
            classic_eps = classic_gaussian_epsilon(s, sigma, delta)
            exact_eps = exact_gaussian_epsilon(s, sigma, delta)
            inputs = {"sensitivity": s, "sigma": sigma, "delta": delta}
            outputs = {"classic epsilon": classic_eps, "exact epsilon (Gaussian DP)": exact_eps, "mu": s / float(sigma)}
            eps = classic_eps
        if eps >= 1.0:
            # whether the classic answer still holds is read from the exact one: sigma at least the
            # exact sigma (epsilon at least the exact epsilon) is private enough, by chance, not proof
            holds = classic >= exact if epsilon is not None else classic_eps >= exact_eps
            warnings.append(_classic_beyond_proof(holds, given_sigma=epsilon is None))
        mu = outputs.get("mu of the exact mechanism", outputs.get("mu"))
        return CalculatorResult(mode, inputs, outputs, tuple(warnings), _grade(GaussianCurve(mu)))
    if releases is not None and (not isinstance(releases, str) or releases.strip()):
        rel = parse_releases(releases) if isinstance(releases, str) else list(releases)
        outputs = compose_releases(rel, delta_prime)
        inputs = {"releases": "; ".join(f"({e:g}, {d:g})" for e, d in rel), "delta prime": delta_prime}
        if outputs["advanced epsilon"] > outputs["basic epsilon"] and TIGHT_EPSILON not in outputs:
            warnings.append("Advanced composition is worse than basic composition here: use the basic total.")
        g = _grade(_tight(rel, outputs[TIGHT_DELTA])[1].curve) if TIGHT_EPSILON in outputs else None
        if TIGHT_EPSILON not in outputs:
            warnings.append(TIGHT_SKIPPED)
        return CalculatorResult(mode, inputs, outputs, tuple(warnings), g)
    if epsilon is None:
        raise ValueError("epsilon (per release) is required for composition (or give releases)")
    d = 0.0 if delta is None else delta
    kk = _k(k)
    be, bd = basic_composition(kk, epsilon, d)
    ae, ad = advanced_composition(kk, epsilon, d, delta_prime)
    inputs = {"k": kk, "epsilon per release": epsilon, "delta per release": d, "delta prime": delta_prime}
    outputs = {"basic epsilon": be, "basic delta": bd, "advanced epsilon": ae, "advanced delta": ad}
    g = None
    if sigma is not None:
        exact = exact_gaussian_composition_epsilon(kk, s, sigma, ad)
        inputs["sigma (Gaussian releases)"] = sigma
        outputs["exact epsilon at the advanced delta (Gaussian DP)"] = exact
        g = _grade(GaussianCurve(math.sqrt(kk) * s / float(sigma)))
    elif d < 1 and ad < 1:
        outputs.update(_gdp_total([(epsilon, d)] * kk, ad))
        tight, acc = _tight([(float(epsilon), d)] * kk, ad)
        if tight is not None:
            outputs[TIGHT_EPSILON], outputs[TIGHT_DELTA] = tight, ad
            g = _grade(acc.curve)
        else:
            warnings.append(TIGHT_SKIPPED)
    if ae > be and TIGHT_EPSILON not in outputs:
        warnings.append("Advanced composition is worse than basic composition here (per-release epsilon too "
                        "large or k too small): " + ("the exact Gaussian-DP epsilon of these Gaussian releases is "
                                                     "the one to use." if sigma is not None else "use the basic total."))
    return CalculatorResult(mode, inputs, outputs, tuple(warnings), g)


def _grade(curve):
    """The grade of a certified curve, its failure mode counted (PLD truncation ignored)."""
    return grade(curve)
