r"""One-run audits: a lower bound on epsilon (and mu) from the canaries of one training run.

Steinke, Nasr & Jagielski (NeurIPS 2023, "Privacy auditing with one (1) training run"):
m canaries are each included in training independently with probability 1/2 (coin flips
S_i). After training the auditor scores every canary (higher = more likely included),
guesses "included" for some canaries, "excluded" for some others and abstains on the
rest: r guesses, v of them correct. If the training algorithm is (epsilon, delta)-DP,
then for every v (their Thm. 3.1; their Algorithm 2 computes the right-hand side)

    P[W >= v] <= p(epsilon, delta) = P[Binom(r, q_eps) >= v]
                                      + 2 m delta max_{1<=i<=v} P[v - i <= Binom(r, q_eps) < v] / i,

with q_eps = e^eps / (1 + e^eps) (Equation (1) below). p is non-decreasing in epsilon and in
delta; an epsilon with p(epsilon, delta) <= level is rejected, and ``epsilon_lower`` is the
largest rejected epsilon (bisection), a lower bound on the true epsilon at ``delta`` that
holds with probability at least ``confidence``.

How the guesses are chosen (so the bound stays valid)
------------------------------------------------------
The theorem holds for guesses computed from the output with a number of guesses fixed in
advance. fdpkit sorts the canaries by score (ties broken by index, which does not depend on
the coin flips), guesses "included" for the top ceil(r/2) and "excluded" for the bottom
floor(r/2), for each r in a fixed grid of fractions of m (:data:`GUESS_FRACTIONS`, or one
``guesses=(top, bottom)`` pair given in advance), and applies a **Bonferroni correction**:
each choice is tested at level (1 - confidence) / (number of choices), and the best choice
is reported. Choosing the best choice after seeing the data is covered by the union bound.

mu (f-DP)
---------
A mu-GDP mechanism is (eps, delta_mu(eps))-DP for every eps (Dong, Roth & Su Cor. 2.13), so
under mu-GDP P[W >= v] <= min_eps p(eps, delta_mu(eps)) over any fixed grid of eps. This
is non-decreasing in mu; ``mu_lower`` is the largest mu it rejects. (Mahloujifar, Melis &
Chaudhuri, ICML 2025, analyse the f-DP case directly and are tighter; this bound is the
conservative one obtained from Steinke et al.'s theorem alone.)

Against a certified curve
-------------------------
Given a mechanism, report or curve, its privacy profile delta_cert(eps) (an upper bound,
from the certified lower-bound curve) gives p_cert = min_eps p(eps, delta_cert(eps)). A
**violation** is p_cert <= level for some choice: the run's canaries are incompatible
with the certified curve at ``confidence``, i.e. the training loop did not do what the
accountant was told (noise, sampling or clipping). No violation proves nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats

from fdpkit._numerics import as_float_array, check_scalar, norm_cdf, safe_g
from fdpkit.audit.empirical import certified_guarantee
from fdpkit.errors import ParameterError

#: Numbers of guesses tried, as fractions of the number of canaries (Bonferroni over them).
GUESS_FRACTIONS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5)
#: Upper end of the epsilon and mu searches.
EPSILON_MAX = 100.0
MU_MAX = 50.0
#: Bisection steps (2^-40 of the range: far below any sampling effect).
BISECTION_STEPS = 40
#: Grid of epsilons at which mu-GDP and certified profiles are turned into (eps, delta) tests.
EPS_GRID = np.concatenate([[0.0], np.geomspace(1e-2, 40.0, 120)])
#: Most canaries accepted: 10**6 take about 3 s and 0.7 GiB (the tests of about m/10 guess
#: counts at every epsilon of EPS_GRID); 10**7, the cap before, took over 11 s of CPU and then
#: asked numpy for 0.9 GiB more in one array.
MAX_CANARIES = 10**6


def _tail_and_alpha(guesses: int, correct: int, epsilon: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """P[Binom(r, q_eps) >= v] and max_i P[v - i <= Binom(r, q_eps) < v] / i (Equation (1))."""
    r, v = int(guesses), int(correct)
    eps = np.asarray(epsilon, dtype=float)
    q = 1.0 / (1.0 + np.exp(-eps))
    tail = stats.binom.sf(v - 1, r, q)
    if v == 0:
        return tail, np.zeros_like(q)
    # P[Binom = v-1-j] for j = 0..v-1, by the ratio of neighbouring binomial terms in log space:
    # pmf(k-1) / pmf(k) = k / (r - k + 1) * (1 - q) / q, and log((1 - q) / q) = -eps exactly
    j = np.arange(v, dtype=float)
    k = v - 1 - j
    log_ratio = np.concatenate([[0.0], np.cumsum(np.log(k[:-1] / (r - k[:-1] + 1.0)))])
    log_top = stats.binom.logpmf(v - 1, r, q.ravel())
    pmf = np.exp(log_top[None, :] + log_ratio[:, None] - j[:, None] * eps.ravel()[None, :])
    alpha = np.max(np.cumsum(pmf, axis=0) / (j + 1.0)[:, None], axis=0).reshape(q.shape)
    return tail, alpha


def p_value(canaries: int, guesses: int, correct: int, epsilon: Any, delta: Any) -> np.ndarray:
    """Upper bound on P[>= ``correct`` correct of ``guesses`` guesses] for an
    (epsilon, delta)-DP algorithm with ``canaries`` canaries (Steinke et al. Thm. 3.1),
    broadcast over ``epsilon`` and ``delta``; capped at 1. Equation (1) of the module docs.

    >>> float(p_value(1000, 100, 50, 0.0, 0.0)) > 0.5
    True
    >>> round(float(p_value(1000, 100, 90, 1.0, 1e-5)), 5)
    0.00084
    """
    eps, dlt = np.broadcast_arrays(np.asarray(epsilon, dtype=float), np.asarray(delta, dtype=float))
    tail, alpha = _tail_and_alpha(guesses, correct, eps)
    return np.minimum(1.0, tail + 2.0 * int(canaries) * dlt * alpha)


def _largest_rejected(test, low: float, high: float, level: float) -> float:
    """Largest x in [low, high] with test(x) <= level, test non-decreasing (0 if none)."""
    if test(low) > level:
        return low
    if test(high) <= level:
        return high
    for _ in range(BISECTION_STEPS):
        mid = 0.5 * (low + high)
        if test(mid) <= level:
            low = mid
        else:
            high = mid
    return low


def gaussian_delta(mu: float, eps: np.ndarray) -> np.ndarray:
    """delta_mu(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (Dong, Roth & Su Cor. 2.13)."""
    if mu <= 0:
        return np.zeros_like(eps)
    a = norm_cdf(-eps / mu + mu / 2)
    b = np.exp(eps + stats.norm.logcdf(-eps / mu - mu / 2))
    return np.clip(a - b, 0.0, 1.0)


@dataclass(frozen=True)
class OneRunAudit:
    """Result of :func:`audit_one_run`: a lower confidence bound on ε, and whether it
    refutes the declared guarantee (``epsilon_lower`` and ``violation`` are stable names:
    scripts outside fdpkit read them).

    Attributes
    ----------
    epsilon_lower : float
        With probability ≥ ``confidence``, the run's algorithm is not (ε, δ)-DP for
        any ε below this.
    mu_lower : float
        The same for μ-GDP (see the module docs).
    guesses, correct : int
        Of the reported choice (``top`` guessed included, ``bottom`` guessed excluded).
    level : float
        Significance level of each choice: (1 - confidence) / len(choices).
    certified_epsilon, certified_mu : float or None
        The certified guarantee given (ε at ``delta``; fitted μ).
    p_value_certified : float or None
        Bonferroni-adjusted p-value of the certified curve (min over choices x number of
        choices, capped at 1): small means the canaries contradict the curve.
    violation : bool or None
        ``p_value_certified <= 1 - confidence`` (or ``epsilon_lower`` above the certified
        ε at ``delta``); None without a guarantee.
    epsilon_gap, mu_gap : float or None
        certified value minus lower bound (≥ 0 unless violated).
    """

    canaries: int
    included: int
    confidence: float
    delta: float
    choices: tuple
    level: float
    top: int
    bottom: int
    guesses: int
    correct: int
    epsilon_lower: float
    mu_lower: float
    certified: Any = field(default=None, repr=False)
    certified_epsilon: float | None = None
    certified_mu: float | None = None
    p_value_certified: float | None = None
    violation: bool | None = None
    epsilon_gap: float | None = None
    mu_gap: float | None = None
    verdict: str = ""


def _check_inputs(scores: Any, included: Any) -> tuple[np.ndarray, np.ndarray]:
    s = as_float_array("scores", scores)
    if s.ndim != 1 or s.size == 0:
        raise ParameterError(f"scores must be a non-empty one-dimensional array (one per canary), got shape {s.shape}", "scores")
    if s.size > MAX_CANARIES:
        raise ParameterError(f"scores must hold at most {MAX_CANARIES:,} canaries, got {s.size:,}", "scores")
    if not np.all(np.isfinite(s)):
        i = int(np.flatnonzero(~np.isfinite(s))[0])
        raise ParameterError(f"scores must be finite, got {float(s[i])!r} (at index {i})", "scores")
    raw = np.asarray(included) if isinstance(included, (list, tuple, np.ndarray)) else included
    if isinstance(raw, np.ndarray) and raw.dtype == bool:
        raw = raw.astype(float)
    elif isinstance(raw, (list, tuple)) and all(isinstance(x, (bool, np.bool_)) for x in raw):
        raw = [float(x) for x in raw]
    inc = as_float_array("included", raw)
    if inc.shape != s.shape:
        raise ParameterError(f"included must hold one coin flip per canary ({s.size}), got shape {inc.shape}", "included")
    bad = (inc != 0) & (inc != 1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ParameterError(f"included must be 0/1 (or False/True) coin flips, got {float(inc[i])!r} (at index {i})", "included")
    return s, inc.astype(bool)


def _choices(m: int, guesses: Any) -> tuple[tuple[int, int], ...]:
    if guesses is not None:
        if not isinstance(guesses, (tuple, list)) or len(guesses) != 2:
            raise ParameterError(f"guesses must be a (top, bottom) pair of counts, got {guesses!r}", "guesses")
        vals = [check_scalar("guesses", g) for g in guesses]
        if not all(math.isfinite(v) and v == int(v) for v in vals):
            raise ParameterError(f"guesses must be whole numbers, got {guesses!r}", "guesses")
        top, bottom = (int(v) for v in vals)
        if top < 0 or bottom < 0 or top + bottom < 1 or top + bottom > m:
            raise ParameterError(f"guesses must be whole numbers >= 0 with 1 <= top + bottom <= {m} canaries, "
                                 f"got {guesses!r}", "guesses")
        return ((top, bottom),)
    out = []
    for f in GUESS_FRACTIONS:
        r = min(m, max(1, round(f * m)))
        c = ((r + 1) // 2, r // 2)
        if c not in out:
            out.append(c)
    return tuple(out)


def _correct(order: np.ndarray, inc: np.ndarray, top: int, bottom: int) -> int:
    m = order.size
    hits = int(inc[order[m - top:]].sum()) if top else 0
    return hits + (int((~inc[order[:bottom]]).sum()) if bottom else 0)


def _profile_p(m: int, r: int, v: int, deltas: np.ndarray) -> float:
    return float(np.min(p_value(m, r, v, EPS_GRID, deltas)))


def _mu_test(m: int, r: int, v: int):
    """u -> min over EPS_GRID of p(eps, delta_u(eps)): the Binomial terms do not depend on u."""
    tail, alpha = _tail_and_alpha(r, v, EPS_GRID)
    return lambda u: float(np.min(np.minimum(1.0, tail + 2.0 * m * gaussian_delta(u, EPS_GRID) * alpha)))


def audit_one_run(scores: Any, included: Any, *, delta: float = 0.0, confidence: float = 0.95,
                  mechanism: Any = None, guesses: Any = None) -> OneRunAudit:
    """One-run audit (Steinke, Nasr & Jagielski 2023) of canaries scored after one training run.

    Parameters
    ----------
    scores : array of float
        One score per canary, higher = more likely included.
    included : array of bool or 0/1
        The canaries' coin flips (each included independently with probability 1/2; the
        theorem needs exactly this design).
    delta : float
        δ at which ε is lower-bounded.
    confidence : float
        Probability with which all reported bounds hold together.
    mechanism : Mechanism, PrivacyReport, TradeOffCurve or dict, optional
        The run's certified guarantee: adds the violation test and the gaps.
    guesses : (int, int), optional
        (top, bottom) numbers of guesses fixed in advance; default: every choice of
        :data:`GUESS_FRACTIONS` with a Bonferroni correction.

    Returns
    -------
    OneRunAudit

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> inc = rng.random(1000) < 0.5
    >>> a = audit_one_run(rng.normal(4.0 * inc, 1.0), inc)
    >>> a.epsilon_lower > 1.0, a.violation
    (True, None)
    """
    s, inc = _check_inputs(scores, included)
    d = check_scalar("delta", delta)
    if not 0.0 <= d < 1.0:
        raise ParameterError(f"delta must be in [0, 1), got {delta!r}", "delta")
    c = check_scalar("confidence", confidence)
    if not 0.0 < c < 1.0:
        raise ParameterError(f"confidence must be in (0, 1), got {confidence!r}", "confidence")
    m = s.size
    choices = _choices(m, guesses)
    level = (1.0 - c) / len(choices)
    order = np.lexsort((np.arange(m), s))  # ascending score; ties by index
    best, mu_lo = None, 0.0
    for top, bottom in choices:
        r, v = top + bottom, _correct(order, inc, top, bottom)
        eps = _largest_rejected(lambda e: float(p_value(m, r, v, e, d)), 0.0, EPSILON_MAX, level)
        mu = _largest_rejected(_mu_test(m, r, v), 0.0, MU_MAX, level)
        row = (eps, top, bottom, r, v)
        if best is None or eps > best[0]:
            best = row
        mu_lo = max(mu_lo, mu)
    eps_lo, top, bottom, r, v = best
    out = dict(canaries=m, included=int(inc.sum()), confidence=c, delta=d, choices=choices, level=level,
               top=top, bottom=bottom, guesses=r, correct=v, epsilon_lower=float(eps_lo), mu_lower=float(mu_lo))
    if mechanism is None:
        verdict = (f"With probability >= {c:g}, epsilon at delta = {d:g} is at least {safe_g(eps_lo, 3, up=False)} "
                   f"and mu at least {safe_g(mu_lo, 3, up=False)} ({v} of {r} guesses correct, {m} canaries).")
        return OneRunAudit(**out, verdict=verdict)
    cert = certified_guarantee(mechanism, d)
    deltas = np.asarray(cert.curve.delta_for_epsilon(EPS_GRID), dtype=float)
    p_cert = min(_profile_p(m, t + b, _correct(order, inc, t, b), deltas) for t, b in choices)
    p_adj = min(1.0, p_cert * len(choices))
    # mu_lower is not compared with the fitted mu: that mu may hold only on an FPR range;
    # the profile test above uses the certified curve itself
    violation = bool(p_adj <= 1.0 - c or eps_lo > cert.epsilon)
    if violation:
        verdict = (f"VIOLATION at confidence {c:g}: the canaries of this run contradict the certified "
                   f"curve of {cert.description} (adjusted p-value {safe_g(p_adj, 2, up=True)}); the training loop did not do "
                   "what the accountant was told.")
    else:
        verdict = (f"No violation: the canaries are compatible with the certified curve (adjusted p-value "
                   f"{safe_g(p_adj, 2, up=True)}); epsilon >= {safe_g(eps_lo, 3, up=False)} against certified {safe_g(cert.epsilon, up=True)}, mu >= "
                   f"{safe_g(mu_lo, 3, up=False)} against certified {safe_g(cert.mu, up=True)}. An audit only lower-bounds privacy loss.")
    return OneRunAudit(**out, certified=cert, certified_epsilon=float(cert.epsilon), certified_mu=float(cert.mu),
                       p_value_certified=p_adj, violation=violation,
                       epsilon_gap=float(cert.epsilon - eps_lo) if math.isfinite(cert.epsilon) else math.inf,
                       mu_gap=float(cert.mu - mu_lo), verdict=verdict)
