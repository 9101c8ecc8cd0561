r"""Audits: an empirical membership-inference attack read against a certified guarantee.

An audit receives the scores of an attack (higher = "member") on members and on
non-members, or the counts published audits report, and returns

- the empirical ROC at every threshold;
- simultaneous confidence bounds on FPR and TPR at K thresholds fixed in advance:
  one-sided Clopper-Pearson bounds with a Bonferroni correction over the K thresholds
  (``fdpkit.audit.bounds``, Equations (1)-(3));
- the resulting **lower bounds**, at that confidence, on mu (Equation (4): the best
  threshold of mu >= Phi^{-1}(TPR_lower) - Phi^{-1}(FPR_upper)) and on epsilon at delta
  (Equation (5): eps >= log((TPR_lower - delta)/FPR_upper) and its mirror with TNR/FNR);
- with a mechanism (or a privacy report, or a curve): the certified guarantee beside the
  empirical one, the *audit gap* mu_certified - mu_lower, and a **violation** when some
  confidence box lies entirely above the certified ROC, i.e. when TPR_lower exceeds the
  certified TPR at FPR_upper (or mu_lower > mu_certified, or eps_lower > eps_certified).

All bounds hold together with probability at least ``confidence``, so a reported
violation is wrong with probability at most 1 - confidence. No violation proves nothing:
an audit only lower-bounds the privacy loss (Jagielski et al. 2020; Nasr et al. 2021).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fdpkit._numerics import (as_float_array, check_real, check_scalar, int_digits, json_safe,
                              safe_g)
from fdpkit.audit.io import MAX_SCORES as _MAX_SCORES
from fdpkit.audit.bounds import (
    bonferroni_level,
    clopper_pearson_lower,
    clopper_pearson_upper,
    epsilon_lower_bounds,
    mu_lower_bounds,
    rank_grid,
)
from fdpkit.accounting import account
from fdpkit.curves import EpsDeltaCurve, GaussianCurve, LaplaceCurve, RandomizedResponseCurve, TradeOffCurve
from fdpkit.errors import ParameterError
from fdpkit.fit import fit_gdp
from fdpkit.guarantee.privacy import PrivacyReport
from fdpkit.mechanisms import Mechanism, mechanism_from_dict
from fdpkit.report.audit import build_audit_document

#: Thresholds per tail of the non-member ranks (log-spaced; about 2x this many in all).
THRESHOLDS_PER_SIDE = 100
#: Most thresholds bounded in one audit: the exact Clopper-Pearson bounds cost about 50 us
#: each (20,000 take about a second; 10**6 published counts once took minutes). Far beyond
#: any use: the Bonferroni correction makes more thresholds only weaker.
MAX_THRESHOLDS = 20_000
#: Largest ``thresholds_per_side`` accepted (about twice this many thresholds in all, within
#: :data:`MAX_THRESHOLDS`).
MAX_THRESHOLDS_PER_SIDE = MAX_THRESHOLDS // 2
#: Most scores per class: the package-wide array cap of :func:`fdpkit._numerics.check_real`
#: (every surface's score limit is set in :mod:`fdpkit.audit.io`).
MAX_SCORES = _MAX_SCORES
#: Largest count (members, non-members, true/false positives): 2**53, beyond which counts
#: are no longer exact in floating point.
MAX_COUNT = 2**53
#: Relative margin by which a box must lie above the certified curve to count as a
#: violation (far above the curve's own rounding, far below any sampling effect).
VIOLATION_RTOL = 1e-9
#: Points of the empirical ROC kept in ``to_dict`` and plots.
ROC_SAMPLES = 400
CORRECTION = "Bonferroni"
INTERVALS = "Clopper-Pearson (one-sided, exact)"


@dataclass(frozen=True)
class BoundedThresholds:
    """The K thresholds at which FPR and TPR are bounded, one entry per threshold.

    ``threshold`` is the score threshold (test: score > threshold) for score audits and
    None for counts (published counts carry no score threshold; never NaN). ``false_positives`` is the count used in the bound (for score audits
    the non-member rank c, which is at least the observed count). ``fpr_upper``,
    ``tnr_lower``, ``tpr_lower``, ``fnr_upper`` are the simultaneous confidence bounds;
    ``mu_lower``, ``epsilon_direct``, ``epsilon_mirror`` the per-threshold lower bounds.
    """

    threshold: np.ndarray | None
    false_positives: np.ndarray
    true_positives: np.ndarray
    nonmembers: np.ndarray
    members: np.ndarray
    fpr_upper: np.ndarray
    tnr_lower: np.ndarray
    tpr_lower: np.ndarray
    fnr_upper: np.ndarray
    mu_lower: np.ndarray
    epsilon_direct: np.ndarray
    epsilon_mirror: np.ndarray

    @property
    def fpr(self) -> np.ndarray:
        """Empirical false-positive rate at each threshold."""
        return self.false_positives / self.nonmembers

    @property
    def tpr(self) -> np.ndarray:
        """Empirical true-positive rate at each threshold."""
        return self.true_positives / self.members

    def __len__(self) -> int:
        return len(self.fpr_upper)


@dataclass(frozen=True)
class Certified:
    """The certified guarantee an audit is read against."""

    description: str
    mu: float
    epsilon: float
    curve: Any = field(repr=False)
    curve_bound: str
    alpha_min: float


@dataclass(frozen=True)
class AuditResult:
    """Result of :func:`run_audit` / :func:`audit_from_counts`.

    The names ``mu_lower``, ``epsilon_lower`` and ``violation`` are stable: scripts outside
    fdpkit read them.

    Attributes
    ----------
    mu_lower : float
        Lower confidence bound on μ (≥ 0): with probability at least ``confidence`` the
        mechanism is not μ-GDP for any smaller μ.
    epsilon_lower : float
        Lower confidence bound on ε at ``delta`` (≥ 0).
    violation : bool or None
        True when the audit contradicts the certified guarantee at ``confidence``; False
        when it does not; None when no guarantee was given.
    """

    source: str
    members: int
    nonmembers: int
    confidence: float
    delta: float
    level: float
    points: BoundedThresholds = field(repr=False)
    roc_fpr: np.ndarray = field(repr=False)
    roc_tpr: np.ndarray = field(repr=False)
    mu_lower: float
    mu_index: int
    epsilon_lower: float
    epsilon_index: int
    epsilon_side: str
    certified: Certified | None
    violation: bool | None
    violating: tuple[int, ...]
    verdict: str

    @property
    def thresholds_used(self) -> int:
        """K, the number of thresholds the Bonferroni correction runs over."""
        return len(self.points)

    @property
    def correction(self) -> str:
        """How the bounds were made simultaneous, in one sentence."""
        return (f"{INTERVALS} bounds on FPR and TPR at {self.thresholds_used} thresholds fixed in advance, "
                f"{CORRECTION}-corrected: each of the {2 * self.thresholds_used} bounds at level "
                f"{self.level:.3g}, all holding together with probability >= {self.confidence:g}")

    @property
    def audit_gap(self) -> float | None:
        """``mu_certified`` − ``mu_lower`` (negative on a violation); None without a guarantee."""
        return None if self.certified is None else self.certified.mu - self.mu_lower

    @property
    def epsilon_gap(self) -> float | None:
        """The certified ε at ``delta`` − ``epsilon_lower``; None without a guarantee."""
        return None if self.certified is None else self.certified.epsilon - self.epsilon_lower

    def best(self) -> dict[str, Any]:
        """The threshold behind ``mu_lower``: counts, estimates and bounds (``threshold`` is
        None for audits from counts)."""
        i, p = self.mu_index, self.points
        return {"threshold": None if p.threshold is None else float(p.threshold[i]),
                "false_positives": int(p.false_positives[i]),
                "true_positives": int(p.true_positives[i]), "nonmembers": int(p.nonmembers[i]),
                "members": int(p.members[i]), "fpr": float(p.fpr[i]), "tpr": float(p.tpr[i]),
                "fpr_upper": float(p.fpr_upper[i]), "tpr_lower": float(p.tpr_lower[i])}

    def empirical_tpr_at(self, fpr: float) -> float:
        """Empirical TPR of the best threshold whose empirical FPR is at most ``fpr`` (a point
        estimate, not a bound).

        Examples
        --------
        >>> audit_from_counts([50, 90], [1, 10], 100, 100).empirical_tpr_at(0.05)
        0.5
        """
        a = check_scalar("fpr", fpr)
        if not 0.0 <= a <= 1.0:
            raise ParameterError(f"fpr must be in [0, 1], got {fpr!r}", "fpr")
        ok = self.roc_fpr <= a
        return float(np.max(self.roc_tpr[ok])) if ok.any() else 0.0

    def roc_samples(self, n: int = ROC_SAMPLES) -> tuple[np.ndarray, np.ndarray]:
        """At most ``n`` points of the empirical ROC, spread evenly in log FPR (and the ends)."""
        fpr, tpr = self.roc_fpr, self.roc_tpr
        if len(fpr) <= n:
            return fpr, tpr
        pos = fpr[fpr > 0]
        lo = float(pos[0]) if pos.size else 1.0
        targets = np.geomspace(lo, 1.0, n - 2)
        idx = np.unique(np.concatenate([[0, len(fpr) - 1],
                                        np.clip(np.searchsorted(fpr, targets), 0, len(fpr) - 1)]))
        return fpr[idx], tpr[idx]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (inf as the string "inf")."""
        p = self.points
        fpr, tpr = self.roc_samples()
        cert = None
        if self.certified is not None:
            c = self.certified
            cert = {"description": c.description, "mu": c.mu, "epsilon": c.epsilon, "delta": self.delta,
                    "curve_bound": c.curve_bound, "alpha_min": c.alpha_min}
        return json_safe({
            "source": self.source,
            "members": self.members,
            "nonmembers": self.nonmembers,
            "confidence": self.confidence,
            "delta": self.delta,
            "bounds": {"intervals": INTERVALS, "correction": CORRECTION,
                       "thresholds_used": self.thresholds_used, "level_per_bound": self.level,
                       "statement": self.correction},
            "mu_lower": self.mu_lower,
            "epsilon_lower": self.epsilon_lower,
            "epsilon_side": self.epsilon_side,
            "best_threshold": self.best(),
            "certified": cert,
            "audit_gap": self.audit_gap,
            "epsilon_gap": self.epsilon_gap,
            "violation": self.violation,
            "violating_thresholds": len(self.violating),
            "verdict": self.verdict,
            "roc": {"fpr": fpr.tolist(), "tpr": tpr.tolist(), "points": int(len(self.roc_fpr))},
            "thresholds": {
                "threshold": [None] * len(p) if p.threshold is None else [float(t) for t in p.threshold],
                "false_positives": p.false_positives.astype(int).tolist(),
                "true_positives": p.true_positives.astype(int).tolist(),
                "fpr_upper": p.fpr_upper.tolist(), "tpr_lower": p.tpr_lower.tolist(),
                "mu_lower": [float(v) if np.isfinite(v) else None for v in p.mu_lower],
            },
        })

    def headline(self) -> str:
        """One line: the verdict and the two bounds."""
        bounds = (f"μ ≥ {safe_g(self.mu_lower, up=False)}, ε ≥ {safe_g(self.epsilon_lower, up=False)} at δ = {self.delta:g} "
                  f"(confidence {self.confidence:g})")
        if self.certified is None:
            return f"Lower bounds from the attack: {bounds}."
        c = self.certified
        word = "VIOLATION" if self.violation else "No violation"
        return f"{word}: {bounds}; certified μ = {safe_g(c.mu, up=True)}, ε = {safe_g(c.epsilon, up=True)}."

    def document(self):
        """The audit as a :class:`fdpkit.report.ReportDocument` (JSON/CSV/MD/HTML/PDF)."""
        return build_audit_document(self)


# ------------------------------------------------------------------------------------
# validation
# ------------------------------------------------------------------------------------
def _check_confidence(confidence: Any) -> float:
    c = check_scalar("confidence", confidence)
    if not 0.0 < c < 1.0:
        raise ParameterError(f"confidence must be in (0, 1), got {confidence!r}", "confidence")
    return c


def _check_delta(delta: Any) -> float:
    d = check_scalar("delta", delta)
    if not 0.0 <= d < 1.0:
        raise ParameterError(f"delta must be in [0, 1), got {delta!r}", "delta")
    return d


def _check_scores(name: str, scores: Any) -> np.ndarray:
    arr = check_real(name, scores)  # finite, as the CSV and JSON routes read them
    if arr.ndim != 1:
        raise ParameterError(f"{name} must be a one-dimensional array of scores, got shape {arr.shape}", name)
    if arr.size == 0:
        raise ParameterError(f"{name} must not be empty", name)
    return arr


def _check_counts(name: str, value: Any) -> np.ndarray:
    arr = np.atleast_1d(as_float_array(name, value))
    if arr.ndim != 1 or arr.size == 0:
        raise ParameterError(f"{name} must be a count or a non-empty list of counts, got shape {arr.shape}", name)
    huge = np.isinf(arr)
    if huge.any():  # an integer too large for a float (10**400) was read as inf: say what it was
        i = int(np.flatnonzero(huge)[0])
        raw = value if arr.size == 1 and not isinstance(value, (list, tuple)) else (
            value[i] if isinstance(value, (list, tuple)) and i < len(value) else None)
        if isinstance(raw, int) and not isinstance(raw, bool):
            if raw < 0:
                raise ParameterError(f"{name} must be whole numbers >= 0, got a negative integer with "
                                     f"{int_digits(raw)} digits (at index {i})", name)
            raise ParameterError(f"{name} must be at most {MAX_COUNT:,} (2**53), got an integer with "
                                 f"{int_digits(raw)} digits (at index {i})", name)
    bad = (arr < 0) | (arr != np.floor(arr)) | ~np.isfinite(arr)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ParameterError(f"{name} must be whole numbers >= 0, got {float(arr[i])!r} (at index {i})", name)
    if (arr > MAX_COUNT).any():
        i = int(np.flatnonzero(arr > MAX_COUNT)[0])
        raise ParameterError(f"{name} must be at most {MAX_COUNT:,} (2**53), got {float(arr[i]):g} (at index {i})",
                             name)
    return arr


def certified_guarantee(mechanism: Any, delta: float) -> Certified:
    """The certified curve, μ and ε(δ) of a mechanism, a mechanism dict, a
    :class:`~fdpkit.guarantee.privacy.PrivacyReport` or a trade-off curve."""
    if isinstance(mechanism, PrivacyReport):
        eps = dict(mechanism.epsilons).get(delta)
        if eps is None:
            eps = float(mechanism.curve.epsilon_for_delta(delta))
        return Certified(mechanism.mechanism.label(), mechanism.mu, float(eps), mechanism.curve,
                         mechanism.curve.bound, mechanism.alpha_min)
    if isinstance(mechanism, TradeOffCurve):
        fit = fit_gdp(mechanism)
        closed = isinstance(mechanism, (GaussianCurve, LaplaceCurve, RandomizedResponseCurve, EpsDeltaCurve))
        desc = repr(mechanism) if closed else f"a numeric trade-off curve ({mechanism.bound} bound)"
        return Certified(desc, fit.mu, float(mechanism.epsilon_for_delta(delta)), mechanism,
                         mechanism.bound, fit.alpha_min)
    if isinstance(mechanism, dict):
        mechanism = mechanism_from_dict(mechanism)
    if not isinstance(mechanism, Mechanism):
        hint = (" (an Opacus run: pass engine.accountant.report(), the certified report of its history)"
                if hasattr(mechanism, "history") or hasattr(mechanism, "accountant") else "")
        raise ParameterError("mechanism must be an fdpkit mechanism, its dict form, a privacy report or a "
                             f"trade-off curve, got {type(mechanism).__name__}{hint}", "mechanism")
    acc = account(mechanism)
    fit = fit_gdp(acc.curve)
    return Certified(mechanism.label(), fit.mu, float(acc.epsilon_for_delta(delta)), acc.curve,
                     acc.curve.bound, fit.alpha_min)


# ------------------------------------------------------------------------------------
# the audit
# ------------------------------------------------------------------------------------
def _bounded(threshold, fp, tp, n, m, level: float, delta: float) -> BoundedThresholds:
    fpr_up, tnr_lo = clopper_pearson_upper(fp, n, level)
    tpr_lo, fnr_up = clopper_pearson_lower(tp, m, level)
    mu = mu_lower_bounds(tpr_lo, fnr_up, tnr_lo, fpr_up)
    e_dir, e_mir = epsilon_lower_bounds(tpr_lo, fnr_up, tnr_lo, fpr_up, delta)
    return BoundedThresholds(None if threshold is None else np.asarray(threshold, dtype=float), fp, tp, n, m, fpr_up, tnr_lo, tpr_lo, fnr_up,
                             mu, e_dir, e_mir)


def _violations(p: BoundedThresholds, curve: Any) -> np.ndarray:
    """Indices whose confidence box lies above the certified ROC: TPR_lower > TPR_cert(FPR_upper),
    compared on TPR where it is small and on FNR (FNR_upper < f(FPR_upper)) where it is not."""
    fpr_up = np.clip(p.fpr_upper, 0.0, 1.0)
    tpr_cert = np.asarray(curve.tpr(fpr_up), dtype=float)
    beta_cert = np.asarray(curve.beta(fpr_up), dtype=float)
    small = p.tpr_lower <= 0.5
    above = np.where(small, p.tpr_lower > tpr_cert * (1 + VIOLATION_RTOL),
                     p.fnr_upper < beta_cert * (1 - VIOLATION_RTOL))
    return np.flatnonzero(above & (p.tpr_lower > 0))


def _verdict(res: dict, cert: Certified | None, violating: np.ndarray, p: BoundedThresholds) -> tuple[bool | None, str]:
    conf = res["confidence"]
    mu_lo, eps_lo, delta = res["mu_lower"], res["epsilon_lower"], res["delta"]
    head = (f"With confidence {conf:g}, mu >= {safe_g(mu_lo, up=False)} and epsilon >= {safe_g(eps_lo, up=False)} at delta = {delta:g} "
            "(lower bounds from the attack).")
    if cert is None:
        return None, head + " No certified guarantee was given to compare with."
    # mu_certified holds for attacks with FPR and FNR >= alpha_min (fit_gdp): compare only
    # when the best box lies in that range (the curve check covers every box anyway)
    i = res["mu_index"]
    fpr_up = min(1.0, float(p.fpr_upper[i]))
    in_range = cert.alpha_min == 0 or (fpr_up >= cert.alpha_min and float(cert.curve.beta(fpr_up)) >= cert.alpha_min)
    mu_bad = math.isfinite(cert.mu) and mu_lo > cert.mu and in_range
    eps_bad = math.isfinite(cert.epsilon) and eps_lo > cert.epsilon
    if violating.size or mu_bad or eps_bad:
        reasons = []
        if violating.size:
            i = int(violating[np.argmax(p.tpr_lower[violating] - np.asarray(cert.curve.tpr(np.clip(p.fpr_upper[violating], 0, 1))))])
            reasons.append(f"at {violating.size} threshold(s) the attack's TPR is at least {safe_g(p.tpr_lower[i], up=False)} "
                           f"while its FPR is at most {safe_g(p.fpr_upper[i], up=True)}, above the certified TPR "
                           f"{safe_g(float(cert.curve.tpr(min(1.0, float(p.fpr_upper[i])))), up=True)} at that FPR")
        if mu_bad:
            reasons.append(f"the empirical lower bound mu >= {safe_g(mu_lo, up=False)} exceeds the certified mu = {safe_g(cert.mu, up=True)}")
        if eps_bad:
            reasons.append(f"epsilon >= {safe_g(eps_lo, up=False)} exceeds the certified epsilon = {safe_g(cert.epsilon, up=True)} "
                           f"at delta = {delta:g}")
        return True, ("VIOLATION: the audit contradicts the certified guarantee of " + cert.description + ": "
                      + "; ".join(reasons) + f". This is wrong with probability at most {1 - conf:.3g}. "
                      "The accounting, the sampling assumption (e.g. shuffled batches accounted as Poisson "
                      "sampling), or the training code (clipping, noise scale, an extra release) does not "
                      "match what was certified.")
    gap = cert.mu - mu_lo
    return False, (head + f" No violation: consistent with the certified mu = {safe_g(cert.mu, up=True)} "
                   f"(audit gap {gap:.4g}) and epsilon = {safe_g(cert.epsilon, up=True)} at delta = {delta:g}. "
                   "An audit can only show a guarantee is wrong, never that it is right.")


def _finish(source: str, points: BoundedThresholds, roc_fpr, roc_tpr, members: int, nonmembers: int,
            confidence: float, delta: float, level: float, mechanism: Any) -> AuditResult:
    mu = points.mu_lower
    i_mu = int(np.argmax(mu))
    mu_lower = max(0.0, float(mu[i_mu])) if np.isfinite(mu[i_mu]) else 0.0
    both = np.maximum(points.epsilon_direct, points.epsilon_mirror)
    i_eps = int(np.argmax(both))
    eps_lower = max(0.0, float(both[i_eps])) if np.isfinite(both[i_eps]) else 0.0
    side = "direct" if points.epsilon_direct[i_eps] >= points.epsilon_mirror[i_eps] else "mirror"
    cert = certified_guarantee(mechanism, delta) if mechanism is not None else None
    violating = _violations(points, cert.curve) if cert is not None else np.array([], dtype=int)
    res = {"confidence": confidence, "mu_lower": mu_lower, "epsilon_lower": eps_lower, "delta": delta,
           "mu_index": i_mu}
    violation, verdict = _verdict(res, cert, violating, points)
    return AuditResult(source, members, nonmembers, confidence, delta, level, points, roc_fpr, roc_tpr,
                       mu_lower, i_mu, eps_lower, i_eps, side, cert, violation,
                       tuple(int(v) for v in violating), verdict)


def empirical_roc(member_scores: np.ndarray, nonmember_scores: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The empirical ROC of "score > t" at every distinct score t (and t = −∞):
    ``(thresholds, fpr, tpr)`` with thresholds descending, so FPR and TPR ascend from
    (0, 0) to (1, 1)."""
    sm, sn = np.sort(member_scores), np.sort(nonmember_scores)
    return _roc_sorted(sm, sn)


def _roc_sorted(sm: np.ndarray, sn: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ROC from sorted scores in linear time after one merge: a stable argsort of the two
    sorted runs (a timsort merge), then cumulative member counts at each distinct score."""
    m, n = len(sm), len(sn)
    both = np.concatenate([sm, sn])
    order = np.argsort(both, kind="stable")
    v = both[order]
    members_le = np.cumsum(order < m)  # members with score <= v[i]
    last = np.flatnonzero(np.append(v[1:] != v[:-1], True))  # last index of each distinct score
    m_le = members_le[last]
    n_le = last + 1 - m_le
    thr = np.append(v[last][::-1], -np.inf)
    fpr = np.append((n - n_le)[::-1], n) / n
    tpr = np.append((m - m_le)[::-1], m) / m
    return thr, fpr, tpr


def run_audit(member_scores: Any, nonmember_scores: Any, *, confidence: float = 0.95, delta: float = 1e-5,
              mechanism: Any = None, thresholds_per_side: int = THRESHOLDS_PER_SIDE) -> AuditResult:
    """Audit a membership-inference attack from its scores (higher score = "member").

    Parameters
    ----------
    member_scores, nonmember_scores : array_like
        The attack's scores on members (canary in) and non-members (canary out): real
        finite numbers (infinities and NaN refused, as the CSV and JSON readers refuse them), at most ``MAX_SCORES`` (10,000,000) each.
    confidence : float, default 0.95
        Joint confidence of all the bounds, in (0, 1).
    delta : float, default 1e-5
        δ at which the ε lower bound is given.
    mechanism : Mechanism, dict, PrivacyReport or TradeOffCurve, optional
        The certified guarantee to audit; then ``violation`` is True or False.
    thresholds_per_side : int, default 100
        Log-spaced non-member ranks per tail at which FPR and TPR are bounded (the
        Bonferroni correction runs over all of them: about twice this many); at most
        ``MAX_THRESHOLDS_PER_SIDE`` (10,000).

    Returns
    -------
    AuditResult
        ``mu_lower``, ``epsilon_lower``, ``violation``, the empirical ROC at every
        threshold, the bounded thresholds and the verdict. No field is ever NaN:
        ``mu_lower`` and ``epsilon_lower`` are 0 when no threshold is informative, and the
        per-threshold bounds are ``-inf`` where a threshold says nothing.

    Notes
    -----
    Thresholds sit at fixed ranks of the non-member scores, so the Clopper-Pearson
    bounds (Clopper & Pearson 1934) are exact for any score distribution, and the
    Bonferroni correction over those K ranks makes them simultaneous (module
    ``fdpkit.audit.bounds``, Equations (1)-(5); Jagielski et al. 2020, Sec. 4).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> r = run_audit(rng.normal(2.0, 1.0, 20000), rng.normal(0.0, 1.0, 20000))
    >>> 1.8 < r.mu_lower < 2.0, r.violation
    (True, None)
    """
    conf = _check_confidence(confidence)
    d = _check_delta(delta)
    m_s = _check_scores("member_scores", member_scores)
    n_s = _check_scores("nonmember_scores", nonmember_scores)
    per_side = check_real("thresholds_per_side", thresholds_per_side, low=1, high=MAX_THRESHOLDS_PER_SIDE,
                          integer=True, scalar=True)
    sm, sn = np.sort(m_s), np.sort(n_s)
    if sm[0] == sm[-1] == sn[0] == sn[-1]:
        raise ValueError(f"member_scores and nonmember_scores are all equal ({float(sm[0])!r}): constant scores carry "
                         "no information; give the attack's real scores")
    n, m = len(sn), len(sm)
    ranks = rank_grid(n, int(per_side))
    level = bonferroni_level(conf, len(ranks))
    thr = sn[n - 1 - ranks]  # the (c+1)-th largest non-member score; test: score > thr
    tp = (m - np.searchsorted(sm, thr, side="right")).astype(float)
    points = _bounded(thr, ranks.astype(float), tp, np.full(len(ranks), float(n)), np.full(len(ranks), float(m)),
                      level, d)
    _, roc_fpr, roc_tpr = _roc_sorted(sm, sn)
    return _finish("scores", points, roc_fpr, roc_tpr, m, n, conf, d, level, mechanism)


def audit_from_counts(true_positives: Any, false_positives: Any, members: Any, nonmembers: Any, *,
                      confidence: float = 0.95, delta: float = 1e-5, mechanism: Any = None) -> AuditResult:
    """Audit from published counts: at each of K thresholds, ``true_positives`` of
    ``members`` and ``false_positives`` of ``nonmembers`` were flagged as members.

    The thresholds must have been fixed before the counts were taken (for instance on
    separate data); the Bonferroni correction then runs over these K thresholds.
    ``members`` and ``nonmembers`` may be single numbers or one per threshold. Counts are
    whole numbers in [0, ``MAX_COUNT``] (2⁵³, exact in floating point); at most
    ``MAX_THRESHOLDS`` (20,000) thresholds. The result has no NaN field: its ``points.threshold`` is
    None (counts carry no score threshold), and ``mu_lower``/``epsilon_lower`` are 0 when
    no threshold is informative (e.g. ``true_positives`` all 0).

    Examples
    --------
    >>> r = audit_from_counts([900], [100], 1000, 1000)
    >>> round(r.mu_lower, 3), round(r.epsilon_lower, 3)
    (2.347, 1.99)
    """
    conf = _check_confidence(confidence)
    d = _check_delta(delta)
    tp = _check_counts("true_positives", true_positives)
    fp = _check_counts("false_positives", false_positives)
    m = _check_counts("members", members)
    n = _check_counts("nonmembers", nonmembers)
    k = len(tp)
    if k > MAX_THRESHOLDS:  # refused before the bounds (about 50 us each), not after minutes
        raise ParameterError(f"true_positives must hold at most {MAX_THRESHOLDS:,} thresholds (one count each), "
                             f"got {k:,}", "true_positives")
    if len(fp) != k:
        raise ParameterError(f"false_positives must have one count per threshold like true_positives ({k}), got {len(fp)}", "false_positives")
    for name, arr in (("members", m), ("nonmembers", n)):
        if len(arr) not in (1, k):
            raise ParameterError(f"{name} must be one number or one per threshold ({k}), got {len(arr)}", name)
        if (arr < 1).any():
            raise ParameterError(f"{name} must be >= 1, got {float(arr[arr < 1][0])!r}", name)
    m, n = np.broadcast_to(m, (k,)).astype(float), np.broadcast_to(n, (k,)).astype(float)
    if (tp > m).any():
        i = int(np.flatnonzero(tp > m)[0])
        raise ParameterError(f"true_positives must be <= members, got {tp[i]:g} > {m[i]:g} (at index {i})", "true_positives", ("true_positives", "members"))
    if (fp > n).any():
        i = int(np.flatnonzero(fp > n)[0])
        raise ParameterError(f"false_positives must be <= nonmembers, got {fp[i]:g} > {n[i]:g} (at index {i})", "false_positives", ("false_positives", "nonmembers"))
    level = bonferroni_level(conf, k)
    points = _bounded(None, fp, tp, n, m, level, d)
    order = np.argsort(points.fpr, kind="stable")
    roc_fpr = np.concatenate([[0.0], points.fpr[order], [1.0]])
    roc_tpr = np.concatenate([[0.0], points.tpr[order], [1.0]])
    return _finish("counts", points, roc_fpr, roc_tpr, int(m.max()), int(n.max()), conf, d, level, mechanism)
