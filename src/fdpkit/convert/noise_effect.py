"""What the calculator's noise does, before and after: attack success, interval width, size.

The seed calculator page asks reviewers to "compare attack success rates before and after
noise" and to pair the budget with "confidence-interval widening"; it also states that the
expected absolute Laplace noise is about b. For one release of a statistic with
sensitivity Delta:

- Attack success. Without noise the statistic is released exactly, so two neighbouring
  datasets whose statistics differ by Delta are told apart with certainty: the best
  attack has TPR 1 at every FPR. With noise, the best attack's TPR at FPR alpha is read
  from the mechanism's exact trade-off curve: Laplace with scale b is eps-DP with
  eps = Delta / b (its curve, Dong et al. Prop. 2.12), Gaussian with sd sigma is
  mu-GDP with mu = Delta / sigma, TPR = Phi(mu - Phi^{-1}(1 - alpha)) (Dong et al.).
- Interval width. A 95% interval for the released statistic, whose own standard error
  is se without noise, has width 2 z se (z = Phi^{-1}(0.975)) without noise and, with
  independent noise, the width of the central 95% of N(0, se^2) + noise: 2 z sqrt(se^2 +
  sigma^2) for Gaussian noise, and for Laplace noise the root t of
  P(|N + L| > t) = 0.05 (2 b ln 20 when se = 0).
- Expected |noise|: b for Laplace (the page's "about b"), sigma sqrt(2 / pi) for Gaussian.
"""

from __future__ import annotations

import math

from fdpkit._numerics import check_choice, check_nonnegative, check_positive, check_scalar, norm_isf, norm_sf
from fdpkit._solve import solve_monotone
from fdpkit.curves import GaussianCurve, LaplaceCurve

NOISES = ("laplace", "gaussian")
#: Confidence level of the interval the calculator reports (the page's "confidence-interval widening").
CI_LEVEL = 0.95


def expected_abs_noise(noise: str, scale: float) -> float:
    """E|X| of the noise: b for Laplace(b), sigma sqrt(2/pi) for N(0, sigma^2).

    >>> expected_abs_noise("laplace", 2.0), round(expected_abs_noise("gaussian", 1.0), 4)
    (2.0, 0.7979)
    """
    noise = check_choice("noise", noise, NOISES)
    s = check_scalar("scale", check_positive("scale", scale))
    return s if noise == "laplace" else s * math.sqrt(2.0 / math.pi)


def _laplace_tail(t: float, se: float, b: float) -> float:
    """P(|N(0, se^2) + Laplace(b)| > t) for t >= 0, by integrating over the Laplace part:
    2 * integral_0^inf (e^{-l/b} / (2b)) [sf((t - l)/se) + sf((t + l)/se)] dl."""
    from scipy import integrate

    def f(u: float) -> float:  # u = l / b
        return math.exp(-u) * (float(norm_sf((t - b * u) / se)) + float(norm_sf((t + b * u) / se)))

    # e^{-u} is below 1e-26 past u = 60: that part is bounded by 2 e^{-60} (added, so the
    # tail is never understated and the interval never too narrow)
    kink = t / b
    a, _ = integrate.quad(f, 0.0, 60.0, points=[kink] if 0.0 < kink < 60.0 else None, limit=200)
    return a + 2.0 * math.exp(-60.0)


def ci_width(noise: str, scale: float, standard_error: float = 0.0, level: float = CI_LEVEL) -> float:
    """Width of the central ``level`` interval of a statistic with standard error
    ``standard_error`` released with the noise (see the module notes).

    >>> round(ci_width("gaussian", 1.0), 4), round(ci_width("laplace", 1.0), 4)
    (3.9199, 5.9915)
    """
    noise = check_choice("noise", noise, NOISES)
    b = check_scalar("scale", check_positive("scale", scale))
    se = check_scalar("standard_error", check_nonnegative("standard_error", standard_error))
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    tail = 1.0 - level
    z = float(norm_isf(tail / 2.0))
    if noise == "gaussian":
        return 2.0 * z * math.hypot(se, b)
    if se == 0.0:
        return 2.0 * b * math.log(1.0 / tail)
    # between the two pure cases' half-widths, and the tail is decreasing in t
    hi = z * se + b * math.log(1.0 / tail) + 1e-12
    res = solve_monotone(lambda t: tail - _laplace_tail(t, se, b), low=0.5 * hi, high=hi, lower_limit=0.0,
                         upper_limit=10.0 * hi, side="high")
    if not res.converged:  # pragma: no cover - the bracket always holds the root
        raise ValueError(f"no interval width found for scale {b!r} and standard_error {se!r}: {res.reason}")
    return 2.0 * res.root


def attack_tpr(noise: str, sensitivity: float, scale: float, fpr: float) -> float:
    """The best attack's TPR at ``fpr`` on one release with the noise (the mechanism's exact
    curve; 1 when there is no noise, scale = 0).

    >>> attack_tpr("gaussian", 1.0, 0.0, 1e-3)
    1.0
    >>> round(attack_tpr("laplace", 1.0, 1.0, 1e-3), 5)  # e * 1e-3 below the knee
    0.00272
    """
    noise = check_choice("noise", noise, NOISES)
    d = check_scalar("sensitivity", check_positive("sensitivity", sensitivity))
    s = check_scalar("scale", check_nonnegative("scale", scale))
    a = check_scalar("fpr", fpr)
    if not 0.0 < a < 1.0:
        raise ValueError(f"fpr must be in (0, 1), got {fpr!r}")
    if s == 0.0:
        return 1.0
    curve = LaplaceCurve(d / s) if noise == "laplace" else GaussianCurve(d / s)
    return float(curve.tpr(a))


def noise_effect(noise: str, *, sensitivity: float, scale: float, fpr: float = 1e-3,
                 standard_error: float | None = None, label: str = "") -> dict[str, float]:
    """The calculator's before/after rows for one noise scale (labels name the unit).

    >>> out = noise_effect("laplace", sensitivity=1.0, scale=2.0)
    >>> out["expected |noise| (Laplace: b)"], out["best attack TPR at FPR 0.001 without noise"]
    (2.0, 1.0)
    """
    tag = f" ({label})" if label else ""
    se = check_scalar("standard_error", check_nonnegative("standard_error", 0.0 if standard_error is None
                                                          else standard_error))
    what = "Laplace: b" if noise == "laplace" else "Gaussian: σ√(2/π)"
    z = float(norm_isf((1.0 - CI_LEVEL) / 2.0))
    return {
        f"best attack TPR at FPR {fpr:g} without noise": attack_tpr(noise, sensitivity, 0.0, fpr),
        f"best attack TPR at FPR {fpr:g} with noise{tag}": attack_tpr(noise, sensitivity, scale, fpr),
        f"expected |noise| ({what}){tag}": expected_abs_noise(noise, scale),
        f"95% CI width without noise (standard error {se:g})": 2.0 * z * se,
        f"95% CI width with noise{tag}": ci_width(noise, scale, se),
    }
