"""Step 2 of :mod:`fdpkit.accounting.tilted`: where to place the exponential tilts.

The tilts only decide how tight the composed bound is, never whether it holds: every tilt's
masses are bounded soundly by Steps 3-5 of ``tilted`` wherever it is placed. Placement uses
the cumulant generating function K of the composed loss (``_cumulants``): the relative
error of a tilt at theta, read at the saddle point of theta', grows by exp(D(theta, theta'))
with D the Bregman divergence of K; tilts are spaced so that neighbours cover each other's
gaps within :data:`REL_TAIL`, from :data:`THETA_START` until both tails beyond the covered
range are below :data:`ALPHA_FLOOR` (null) and :data:`DELTA_FLOOR` (alternative). No tilt's
FFT window spans more than :data:`MAX_SPAN_FACTOR` times the untilted loss range where a lower
tilt still moves on (small noise: a far tilt weighs the steps' heavy loss tails so much that
its window grew 20x, and sweeps over small noise multipliers paid for it in every pass);
the cap is searched by :func:`_span_cap` on Chernoff edges to a certified accuracy
(``_cumulants._chernoff_edge``).
"""

from __future__ import annotations

import math

import numpy as np

from fdpkit.accounting._cumulants import _chernoff_edge, _chernoff_x, _Cumulants, _newton_increasing
from fdpkit.accounting._fftpass import FFT_LEVEL_ERROR

#: Relative error of the bound allowed near the loss 0 (the body of the curve) ...
REL_BODY = 1e-6
#: ... and in the tails, between neighbouring tilts (Step 2).
REL_TAIL = 1e-3
#: Tilts are added until the null tail beyond the last tilt's range is below this.
ALPHA_FLOOR = 1e-15
#: ... and until the alternative tail beyond it is below this (epsilon at delta >= this
#: is then read from tilted, tight masses, not from the Chernoff envelope of the last tilt).
DELTA_FLOOR = 1e-13
#: The first tilt: -1/2 weighs both hypotheses alike (x ~ sqrt(p q)), centring the FFT on
#: the losses near 0 that decide TPR near 1 and the curve's diagonal crossing.
THETA_START = -0.5
#: At most this many tilts per direction from the a-priori placement ...
MAX_TILTS = 10
#: A tilt's FFT window may span at most this many times the untilted loss range (the
#: window of tilt 0): see :func:`_tilts`.
MAX_SPAN_FACTOR = 2.0

def _base_ratio(cum: _Cumulants, theta: float, sd: float, dtype) -> float:
    """Rough a-priori estimate of eps_theta / (peak tilted mass) (Step 2): with a Gaussian
    spectrum, (3) gives eps ~ eta ||x||_2 T / sqrt(2 sqrt(pi) s_b) and the peak is
    1 / (sqrt(2 pi) s_b), s_b the loss's standard deviation in grid steps. Used only to
    place the tilts (tightness), never in a bound."""
    u = float(np.finfo(dtype).eps) / 2.0
    s_b = max(sd / cum.d, 1.0)
    eta = FFT_LEVEL_ERROR * u * (math.log2(20.0 * s_b + 2.0) + 2.0)
    total = 0.0
    for j, f in enumerate(cum.f):
        cum.lam(j, theta)  # counted as an evaluation
        total += f.times * cum.shapes[j].tilted_norm(theta)
    return 3.0 * eta * total * math.sqrt(2.0 * math.pi * s_b) / math.sqrt(2.0 * math.sqrt(math.pi))


def _bregman_step(cum: _Cumulants, theta_b: float, log_r: float, hi: float) -> float:
    """The theta > theta_b with D(theta, theta_b) = K(theta) - K(theta_b)
    - (theta - theta_b) K'(theta_b) = log_r (the log growth of the relative error from the
    saddle point of theta_b to a tilt at theta; Step 2), at most ``hi``: Newton steps on D
    (increasing, D' = K'(theta) - K'(theta_b)) from the Gaussian guess sqrt(2 log_r / K'')."""
    kb, k1b, k2b = cum(theta_b)

    def fn(t: float) -> tuple[float, float]:
        k, k1, _ = cum(t)
        return k - kb - (t - theta_b) * k1b - log_r, k1 - k1b

    guess = theta_b + math.sqrt(2.0 * max(log_r, 0.0) / k2b) if k2b > 0 else hi
    if guess >= hi:
        if fn(hi)[0] <= 0.0:
            return hi
        guess = 0.5 * (theta_b + hi)
    return _newton_increasing(fn, guess, theta_b, hi, _PLACEMENT_XTOL)


def _saddle(cum: _Cumulants, loss: float) -> float:
    """theta >= THETA_START with K'(theta) = loss (Newton steps on K', increasing)."""
    k, k1, k2 = cum(THETA_START)
    if k1 >= loss:
        return THETA_START

    def fn(t: float) -> tuple[float, float]:
        _, k1t, k2t = cum(t)
        return k1t - loss, k2t

    guess = THETA_START + ((loss - k1) / k2 if k2 > 0 else 1.0)
    return _newton_increasing(fn, guess, THETA_START, math.inf, _PLACEMENT_XTOL, cap=1e6)


#: Relative accuracy of tilt placement (Step 2): tightness only, never soundness.
_PLACEMENT_XTOL = 1e-2


#: Accuracy of each window edge in the span cap's search, relative to its distance from the
#: mean: well below the change of the span over the search's tolerance in theta (0.2-0.4 %
#: at sigma 0.8, q 0.001), so that the search sees a smooth function (see :func:`_span_cap`).
_SPAN_EDGE_RTOL = 1e-4
#: Most span evaluations of one :func:`_span_cap` search after its two ends.
_SPAN_MAX_EVALUATIONS = 30


def _hermite_root(a: float, fa: float, da: float, b: float, fb: float, db: float) -> float:
    """A root in (a, b) of the cubic through (a, fa) and (b, fb) with slopes da and db
    (fa <= 0 < fb; bisection on the cubic); the secant's where a slope or fb is not
    finite, the midpoint where fb is not."""
    if not math.isfinite(fb):
        return 0.5 * (a + b)
    h = b - a
    if not (math.isfinite(da) and math.isfinite(db)):
        return a - fa * h / (fb - fa)
    c1, c2, c3 = h * da, 3.0 * (fb - fa) - h * (2.0 * da + db), 2.0 * (fa - fb) + h * (da + db)
    t0, t1 = 0.0, 1.0
    for _ in range(50):
        t = 0.5 * (t0 + t1)
        if fa + t * (c1 + t * (c2 + t * c3)) <= 0.0:
            t0 = t
        else:
            t1 = t
    return a + h * 0.5 * (t0 + t1)


def _span_cap(cum: _Cumulants, log_alias: float, max_span: float, lo: float, hi: float) -> float:
    """The largest theta in [lo, hi] (to within ``_PLACEMENT_XTOL / 10`` (1 + |theta|) below
    the crossing, as Brent's method had it) whose window (the losses between the tilted
    distribution's Chernoff bounds at ``log_alias``) spans at most ``max_span``; ``lo`` if
    none does. A theta the search placed below ``hi`` was evaluated, and its edges are kept
    on ``cum.edges``: ``tilted._windows`` reads them, so a capped tilt's window is the span
    measured here (any other tilt's is :func:`_chernoff_x`'s, as before).

    The span s(theta) = x_up(theta) - x_low(theta) grows with theta, the faster the further
    out the tilt (the steps' heavy tail). Its edges come from :func:`_chernoff_edge` to
    :data:`_SPAN_EDGE_RTOL`, each started from its own optimal lambda at the theta evaluated
    before, or at ``hi`` (and at a previous tilt, ``lo``) from :func:`_chernoff_x`'s best
    lambda there (1-5 cumulant evaluations an edge), and by the envelope theorem the
    optimal lambdas give the derivative free: dx_up/dtheta = (x_up - K'(theta)) / lambda_up,
    dx_low/dtheta = (K'(theta) - x_low) / lambda_low. The root of ln(s / max_span) is
    searched in the bracket kept on theta by the root of the cubic through its ends'
    values and slopes, half a tolerance inside the bracket (a step onto the root closes
    it), and bisection where |ln(s / max_span)| has not halved in two steps. ``hi`` is
    tried first on :func:`_chernoff_x`'s span, as before: where that is within the cap, as
    for most tilts, the tilt, its window (the same evaluations) and so the composition are
    exactly as before.

    Before (issue 27's next lever): Brent's method on spans from :func:`_chernoff_x`, whose
    Newton steps on g creep where the tilted loss runs out (3-13 evaluations an edge) and
    whose step-size rule left the span noisy by ~0.5 %, which Brent's method then narrowed
    in 9-10 spans: sigma 0.8, q 0.001, T 271 at d 1e-3 took 142 cumulant evaluations, now
    41 (3-5 spans after the two ends). Tightness only: every tilt's bound holds wherever it is."""
    guess: dict[bool, float | None] = {True: None, False: None}
    memo = cum.spans.setdefault((log_alias, max_span), {})
    starts = cum.spans.setdefault(("starts", log_alias), {})  # theta -> _chernoff_x's best lambdas
    edges: dict[float, tuple[float, float]] = {}

    def span(theta: float) -> tuple[float, float]:
        """(ln s(theta) - ln max_span, its derivative); (+inf, nan) where s is not finite."""
        if theta in memo:
            return memo[theta]
        kt, k1t, k2t = cum(theta)
        sd = math.sqrt(k2t) if k2t > 0 else 0.0
        start = starts.get(theta, guess)
        x_low, lam_low = _chernoff_edge(cum, theta, kt, k1t, sd, log_alias, False, _SPAN_EDGE_RTOL, start[False])
        x_up, lam_up = _chernoff_edge(cum, theta, kt, k1t, sd, log_alias, True, _SPAN_EDGE_RTOL, start[True])
        s = x_up - x_low
        out = (math.inf, math.nan)
        if math.isfinite(s) and s > 0.0:
            ds = (x_up - k1t) / lam_up - (k1t - x_low) / lam_low
            out = (math.log(s / max_span), ds / s)
        memo[theta] = out
        edges[theta] = (x_up, x_low)
        guess[False] = lam_low if math.isfinite(lam_low) else guess[False]
        guess[True] = lam_up if math.isfinite(lam_up) else guess[True]
        return out

    # hi first, as before (_chernoff_x: its evaluations are tilted._windows' own): most
    # tilts stay where they are, and those compositions are computed exactly as before
    kt, _, k2t = cum(hi)
    sd = math.sqrt(k2t) if k2t > 0 else 0.0
    lam: list[float] = []
    x_up = _chernoff_x(cum, hi, kt, sd, log_alias, True, lam)
    x_low = _chernoff_x(cum, hi, kt, sd, log_alias, False, lam)
    starts[hi] = {True: lam[0] if math.isfinite(lam[0]) else None,
                  False: lam[1] if math.isfinite(lam[1]) else None}
    if x_up - x_low <= max_span:
        return hi
    f_hi, d_hi = span(hi)
    if f_hi <= 0.0:
        return hi
    f_lo, d_lo = span(lo)
    if not f_lo <= 0.0:
        return lo
    a, fa, da, b, fb, db = lo, f_lo, d_lo, hi, f_hi, d_hi
    slow, fx = 0, min(-fa, fb)
    for _ in range(_SPAN_MAX_EVALUATIONS):
        tol = _PLACEMENT_XTOL / 10 * (1.0 + max(abs(a), abs(b)))  # (Brent's, near the root)
        if b - a <= tol:
            break
        new = _hermite_root(a, fa, da, b, fb, db)
        if slow >= 2:  # |ln s / max_span| has not halved in two steps: bisect
            new, slow = 0.5 * (a + b), 0
        # half a tolerance inside the bracket: a step that reaches the root closes it
        x = min(max(new, a + 0.5 * tol), b - 0.5 * tol)
        previous = abs(fx)
        fx, dx = span(x)
        slow = slow + 1 if not abs(fx) <= 0.5 * previous else 0
        if fx <= 0.0:
            a, fa, da = x, fx, dx
        else:
            b, fb, db = x, fx, dx
    if a != lo:  # a tilt placed by the search: its window is the span measured here
        cum.edges[a, log_alias, True], cum.edges[a, log_alias, False] = edges[a]
    return a


def _tilts(cum: _Cumulants, l_max: float, dtype, *, log_alias: float | None = None,
           max_span: float | None = None) -> list[tuple[float, float, float, float]]:
    """Step 2: tilts (theta, K, K', sd). The relative error of a tilt at theta, at the
    saddle point of theta', grows by exp(D(theta, theta')) with D the Bregman divergence of
    K (for a Gaussian loss s^2 (theta - theta')^2 / 2). The first tilt is placed so that
    D(theta_1, -1/2) = ln(REL_BODY / base) and the next ones so that neighbours cover each
    other's gaps within REL_TAIL.

    With ``max_span`` (and the alias level ``log_alias`` of the windows), a tilt is moved
    down until its window spans at most ``max_span`` losses, and further tilts follow it:
    where a step's loss has a heavy far tail (small noise: single losses up to 6 at sigma
    0.8), a tilt far out weighs that tail so much that its tilted composition, and so its
    FFT window, reaches 20x beyond the untilted range (sigma 0.8, q 0.001, T 271: 1.6M
    grid points for an untilted range of 75,000). Several tilts with windows near the
    untilted range cost far less. Tightness only: every tilt's bound holds wherever it is."""
    k, k1, k2 = cum(THETA_START)
    sd = math.sqrt(k2)
    if sd <= 0:
        return [(THETA_START, k, k1, sd)]
    base = _base_ratio(cum, THETA_START, sd, dtype)
    log_tail = math.log(max(REL_TAIL / base, math.e))
    hi = max(_saddle(cum, l_max), THETA_START)  # no tilt beyond the window's top
    capped = log_alias is not None and max_span is not None

    def cap(theta: float, previous: float) -> float:
        """theta moved down to the span cap, if that still moves on from ``previous``."""
        if not capped or theta <= previous:
            return theta
        t = _span_cap(cum, log_alias, max_span, previous, theta)
        return t if t > previous + _PLACEMENT_XTOL * max(1.0, abs(previous)) else theta

    theta = cap(_bregman_step(cum, THETA_START, math.log(max(REL_BODY / base, 1.0 + 1e-9)), hi), THETA_START)
    out = []
    for _ in range(MAX_TILTS):
        k, k1, k2 = cum(theta)
        sd = math.sqrt(k2)
        out.append((theta, k, k1, sd))
        if sd <= 0 or k1 >= l_max - sd or theta >= hi:
            break
        # the covered range ends at the saddle point theta_b with D(theta, theta_b) =
        # log_tail; D increases in theta_b with derivative (theta_b - theta) K''(theta_b)
        def gap(t: float, theta=theta, k=k) -> tuple[float, float]:
            kb, k1b, k2b = cum(t)
            return k - kb - (theta - t) * k1b - log_tail, (t - theta) * k2b

        guess = min(theta + math.sqrt(2.0 * log_tail) / sd, hi)
        if guess >= hi and gap(hi)[0] <= 0.0:
            lo_b = hi
        else:
            lo_b = _newton_increasing(gap, guess, theta, hi, _PLACEMENT_XTOL)
        kb, k1b, _ = cum(lo_b)
        # stop once both tails beyond the covered range are negligible: the null tail
        # (the curve, FPR >= ALPHA_FLOOR) and the alternative tail (delta(eps) down to
        # DELTA_FLOOR; at large mu it lies far beyond the null's, issue 29)
        if (kb - (1.0 + lo_b) * k1b < math.log(ALPHA_FLOOR)
                and kb - lo_b * k1b < math.log(DELTA_FLOOR)) or k1b >= l_max - sd:
            break
        theta = cap(_bregman_step(cum, lo_b, log_tail, hi), theta)
    return out
