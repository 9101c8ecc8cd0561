"""Graded verdicts: a small fixed scale of protection read from the certified attack risk.

A guarantee's grade is fixed by one number, the certified multiplicative advantage of the
best membership-inference attack at the reference false-positive rate alpha_ref = 1e-3
(Kulynych & Honkela Def. 3.1, Fig. 4b),

    r = TPR(alpha_ref) / alpha_ref = (1 - f(alpha_ref)) / alpha_ref,

which is also the relative disclosure risk rho_alpha_ref of de Fondeville Def. 7. At the
reference prior p_ref = 1% the attacker's posterior after a positive attack is
(de Fondeville Eq. 4)

    p_post = p_ref r / (1 - p_ref + p_ref r),

so each threshold on r is one threshold on TPR and one on the posterior; both are printed in
the definition. The scale is fixed (it does not move with the FPR or prior a user explores),
so two guarantees can be compared by grade.

Failure mode. One FPR cannot see an atom at alpha = 0: a mechanism that reveals membership
with certainty with probability p (f(0) = 1 - p < 1, de Fondeville Thm. 1) can look strong at
alpha_ref. Such a *catastrophic* mechanism is never graded better than "weak"
(:data:`CATASTROPHIC_LEVEL`); the grade's ``reason`` says why.

Soundness: TPR is read from a curve with ``bound`` "exact" or "lower" (pessimistic), so the
grade can only be too severe, never too lenient; an optimistic (``bound="upper"``) curve is
refused.

Examples
--------
>>> from fdpkit import GaussianCurve, LaplaceCurve
>>> [grade(LaplaceCurve(e)).label for e in (0.1, 2.0, 4.0, 10.0)]
['strong', 'moderate', 'weak', 'no meaningful protection']
>>> grade(GaussianCurve(1.0)).level
1
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from fdpkit._numerics import safe_g
from fdpkit.curves import TradeOffCurve
from fdpkit.risk._checks import check_risk_curve
from fdpkit.risk.attack import _risk_tpr
from fdpkit.risk.disclosure import failure_mode as _failure_mode

#: Reference false-positive rate of the scale.
REFERENCE_FPR = 1e-3
#: Reference prior probability of membership of the scale.
REFERENCE_PRIOR = 0.01
#: Upper limits of TPR / FPR at REFERENCE_FPR for levels 0, 1, 2 (level 3 is anything above).
_ADVANTAGE_LIMITS = (3.0, 20.0, 200.0)
LABELS = ("strong", "moderate", "weak", "no meaningful protection")
#: A colour (CSS hex) and an icon per level: never colour alone.
COLOURS = ("#1a7f37", "#9a6700", "#bc4c00", "#cf222e")
ICONS = ("✔", "◐", "⚠", "✖")
ICON_NAMES = ("check mark", "half circle", "warning sign", "cross")
#: The best level a catastrophic mechanism (f(0) < 1) can get: "weak".
CATASTROPHIC_LEVEL = 2
#: Mass at f(0) below which a curve is not called catastrophic when no failure mode is given
#: (an accountant's numeric tail truncation, not a real disclosure).
DISCLOSURE_TOLERANCE = 1e-12


def _posterior_at(ratio: float) -> float:
    p = REFERENCE_PRIOR
    return p * ratio / (1.0 - p + p * ratio)


def _describe(level: int) -> str:
    a = REFERENCE_FPR
    if level == 0:
        hi = _ADVANTAGE_LIMITS[0]
        return (f"at FPR {a:.1%} the best attack reaches TPR of at most {hi * a:.1%} (at most {hi:g}× the "
                f"FPR); a positive attack raises a {REFERENCE_PRIOR:.0%} prior to at most {_posterior_at(hi):.1%}")
    if level == len(_ADVANTAGE_LIMITS):
        lo = _ADVANTAGE_LIMITS[-1]
        return (f"at FPR {a:.1%} the best attack can reach TPR above {lo * a:.0%} (more than {lo:g}× the "
                f"FPR); a positive attack can raise a {REFERENCE_PRIOR:.0%} prior above "
                f"{_posterior_at(lo):.0%}")
    lo, hi = _ADVANTAGE_LIMITS[level - 1], _ADVANTAGE_LIMITS[level]
    return (f"at FPR {a:.1%} the best attack reaches TPR between {lo * a:.1%} and {hi * a:.1%} "
            f"({lo:g}× to {hi:g}× the FPR); a positive attack raises a {REFERENCE_PRIOR:.0%} prior to "
            f"between {_posterior_at(lo):.1%} and {_posterior_at(hi):.1%}")


#: One line per grade, in order of level: the definition shown with every verdict.
DEFINITIONS = tuple(f"{_describe(k)[0].upper()}{_describe(k)[1:]}." for k in range(len(LABELS)))

SCALE_NOTE = (f"Grades are read at a fixed reference: attacks with false-positive rate {REFERENCE_FPR:g} "
              f"and an attacker's prior of {REFERENCE_PRIOR:.0%}, from the certified (worst-case) "
              "trade-off curve.")

WORST_CASE_NOTE = (
    "This is the worst case over every mechanism that satisfies this guarantee: an (ε, δ) or pure-ε "
    "statement alone allows mechanisms that leak this much. A specific mechanism (for example Gaussian "
    "noise) is usually far better; report its μ or trade-off curve to be graded on what it does."
)


@dataclass(frozen=True)
class Grade:
    """A verdict on the fixed scale.

    Attributes
    ----------
    level : int
        0 is the strongest protection; larger is weaker (at most 3).
    label : str
        "strong", "moderate", "weak" or "no meaningful protection".
    definition : str
        What the level means in certified attack risk (the reference FPR and prior stated).
    tpr : float
        Certified attack TPR at the reference FPR (an upper bound on any attack).
    posterior : float
        Certified posterior at the reference prior and FPR.
    colour, icon : str
        Presentation hints (CSS colour, a symbol): they differ per level.
    reason : str
        Why the grade is worse than the TPR at the reference FPR alone says (empty if not).
    """

    level: int
    label: str
    definition: str
    tpr: float
    posterior: float
    colour: str
    icon: str
    reason: str = ""

    def to_dict(self) -> dict:
        """The JSON form ``{"level", "label", "definition", "reason", ...}``."""
        return {"level": self.level, "label": self.label, "definition": self.definition,
                "tpr_at_reference_fpr": self.tpr, "posterior_at_reference_prior": self.posterior,
                "reference_fpr": REFERENCE_FPR, "reference_prior": REFERENCE_PRIOR,
                "colour": self.colour, "icon": self.icon, "reason": self.reason}

    @property
    def headline(self) -> str:
        """``"Protection: weak"``, with the reason when there is one."""
        return f"Protection: {self.label}" + (f" ({self.reason})" if self.reason else "")

    def __str__(self) -> str:
        return f"{self.icon} {self.label}"


def grade_for_tpr(tpr: float) -> Grade:
    """The grade of a certified attack TPR at :data:`REFERENCE_FPR`.

    >>> grade_for_tpr(0.002).label, grade_for_tpr(0.5).label
    ('strong', 'no meaningful protection')
    """
    t = float(tpr)
    if not 0.0 <= t <= 1.0:
        raise ValueError(f"tpr must be in [0, 1], got {tpr!r}")
    ratio = t / REFERENCE_FPR
    level = next((k for k, lim in enumerate(_ADVANTAGE_LIMITS) if ratio <= lim), len(_ADVANTAGE_LIMITS))
    p = REFERENCE_PRIOR
    post = p * t / ((1.0 - p) * REFERENCE_FPR + p * t)
    return Grade(level, LABELS[level], DEFINITIONS[level], t, post, COLOURS[level], ICONS[level])


def cap_for_failure(g: Grade, failure_mode: str, disclosure: float | None = None) -> Grade:
    """``g``, made no better than "weak" when ``failure_mode`` is "catastrophic".

    ``disclosure`` is the probability 1 - f(0) of an output that reveals membership.

    >>> cap_for_failure(grade_for_tpr(0.001), "catastrophic", 5e-5).label
    'weak'
    """
    if failure_mode != "catastrophic" or g.level >= CATASTROPHIC_LEVEL:
        return g
    k = CATASTROPHIC_LEVEL
    p = f" (probability {safe_g(disclosure, 3, up=True)})" if disclosure is not None and disclosure > 0 else ""
    reason = (f"some outputs reveal membership with certainty{p}: a catastrophic failure (de Fondeville "
              f"Thm. 1) is never graded better than {LABELS[k]}")
    definition = (f"Catastrophic failure: an output can identify a member outright, which no attack at one "
                  f"false-positive rate shows; at FPR {REFERENCE_FPR:.1%} the best attack reaches TPR "
                  f"{safe_g(g.tpr, 3, up=True)}, which alone would grade it {LABELS[g.level]}.")
    return Grade(k, LABELS[k], definition, g.tpr, g.posterior, COLOURS[k], ICONS[k], reason)


def grade(curve: TradeOffCurve, *, failure_mode: str | None = None) -> Grade:
    """Grade a trade-off curve on the fixed scale (see module docs).

    Parameters
    ----------
    curve : TradeOffCurve
        An exact or pessimistic (``bound="lower"``) curve.
    failure_mode : {"none", "graceful", "catastrophic"}, optional
        The mechanism's failure mode if known (as :func:`fdpkit.privacy_report` states it);
        by default read from the curve, ignoring a mass at f(0) of at most
        :data:`DISCLOSURE_TOLERANCE` (accountant truncation). A catastrophic mechanism is
        graded no better than "weak".

    Examples
    --------
    >>> from fdpkit import EpsDeltaCurve
    >>> g = grade(EpsDeltaCurve(8.0, 1e-5))
    >>> g.level, g.label
    (3, 'no meaningful protection')
    >>> from fdpkit import UniformSamplingCurve
    >>> grade(UniformSamplingCurve(0.05, 1000)).label   # strong at FPR 1e-3, but catastrophic
    'weak'
    """
    tpr = float(_risk_tpr(curve, REFERENCE_FPR))
    if not math.isfinite(tpr):  # pragma: no cover - _risk_tpr never returns NaN
        raise ValueError("curve gives no finite TPR at the reference FPR")
    curve = check_risk_curve(curve)
    g = grade_for_tpr(min(1.0, max(0.0, tpr)))
    mode = failure_mode if failure_mode is not None else _failure_mode(curve, tolerance=DISCLOSURE_TOLERANCE)
    if mode not in ("none", "graceful", "catastrophic"):
        raise ValueError(f"failure_mode must be none, graceful or catastrophic, got {failure_mode!r}")
    return cap_for_failure(g, mode, 1.0 - float(curve.f0))
