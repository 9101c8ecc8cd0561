"""Cumulant generating functions of composed privacy-loss PMFs and Chernoff bounds
(helpers of :mod:`fdpkit.accounting.tilted`, Step 2 and the window/tail bounds).

For factors j (masses p_j on losses l, composed T_j times),
K(theta) = sum_j T_j ln sum_l p_j(l) e^{theta l}; Chernoff: under the theta-tilted measure,
P[Y >= x] <= exp(K(theta + lambda) - K(theta) - lambda x) and
P[Y <= x] <= exp(K(theta - lambda) - K(theta) + lambda x) for every lambda > 0. Terms below
e^-600 of the largest are raised to it, which only raises K: every bound stays valid (the
tilted measures are normalised by the same computed K).
"""

from __future__ import annotations

import math

import numpy as np

from fdpkit.curves.hull import upper_concave_hull

#: Exponents (relative to the largest term, 0) are raised to at least this (see
#: :meth:`_Cumulants.lam`): e^-600 ~ 3e-261 keeps every product in the sums normal.
_FLOOR_EXPONENT = -600.0
_FLOOR = math.exp(_FLOOR_EXPONENT)
#: Block length of the factorised exponentials of :meth:`_Shape.lam` ...
_EXP_BLOCK = 64
#: ... used while |theta| d _EXP_BLOCK (the log of the largest in-block factor) is at most this.
_EXP_SPAN = 30.0
#: ... on factors of at least this many blocks (on fewer, numpy's per-call overhead wins).
_EXP_MIN_BLOCKS = 16
#: Shapes of at most this many points read max_l (ln p + theta l) directly (see _Shape._top).
_DIRECT_TOP_MAX = 1 << 16


class _Shape:
    """What a factor's cumulant Lambda(theta) = ln sum_l p(l) e^{theta l} depends on: its
    grid losses and log masses, with a memo of Lambda and its first two derivatives (the
    step count does not enter, so compositions of one single step share it)."""

    __slots__ = ("losses", "logp", "memo", "probs", "d", "_extents", "_lattice", "_blocks",
                 "_block_losses", "_offsets", "_direct", "_hull", "_norms")

    def __init__(self, lo: int, probs: np.ndarray, d: float) -> None:
        self.probs = probs
        self.d = d
        self.losses = (lo + np.arange(len(probs))) * d
        with np.errstate(divide="ignore"):
            self.logp = np.log(probs)
        self.memo: dict[float, tuple[float, float, float]] = {}
        self._extents: tuple[float, float] | None = None
        self._lattice: int | None = None
        # the factorised exponentials of lam: masses in blocks of _EXP_BLOCK, the losses of
        # the blocks' first points and the in-block offsets; the last partial block and the
        # masses below e^-600 (whose products could leave the normal range) go direct
        nb = len(probs) // _EXP_BLOCK
        self._blocks = probs[:nb * _EXP_BLOCK].reshape(nb, _EXP_BLOCK)
        self._block_losses = (lo + np.arange(nb) * _EXP_BLOCK) * d
        self._offsets = np.arange(_EXP_BLOCK) * d
        tiny = np.flatnonzero((probs > 0) & (self.logp < _FLOOR_EXPONENT))
        self._direct = np.concatenate([tiny[tiny < nb * _EXP_BLOCK],
                                       np.arange(nb * _EXP_BLOCK, len(probs))]).astype(np.intp)
        self._hull: tuple[np.ndarray, np.ndarray] | None = None
        self._norms: dict[float, float] = {}

    def _top(self, theta: float) -> float:
        """max_l (ln p(l) + theta l) (any value near the maximum would do: it only scales
        the sum). Read directly on shapes of up to :data:`_DIRECT_TOP_MAX` points (tens of
        microseconds; a composition asks a few dozen times, less than a hull costs to
        build); on larger ones from the upper concave hull of the points (l, ln p), kept
        once per shape. Which one depends on the shape's size only, so a single step
        shared by several compositions (a sweep) gives the same numbers as alone."""
        if len(self.probs) <= _DIRECT_TOP_MAX:
            e = self.losses * theta
            e += self.logp
            return float(e.max())
        if self._hull is None:
            nz = np.flatnonzero(self.probs > 0)
            h = nz[upper_concave_hull(self.losses[nz], self.logp[nz])] if nz.size else nz
            self._hull = (self.losses[h], self.logp[h])
        hl, hp = self._hull
        return float((hl * theta + hp).max()) if len(hl) else -math.inf

    def extents(self) -> tuple[float, float]:
        """(max |ln p|, max |loss|) over the masses > 0 (for the input-rounding bound)."""
        if self._extents is None:
            finite = np.isfinite(self.logp)
            self._extents = (float(np.abs(self.logp[finite]).max(initial=0.0)),
                             float(np.abs(self.losses[finite]).max(initial=0.0)))
        return self._extents

    def lattice(self) -> int:
        """The gcd g of the gaps between masses > 0 (0 for a single mass): the factor lives
        on lo + g Z."""
        if self._lattice is None:
            nz = np.flatnonzero(self.probs > 0)
            self._lattice = math.gcd(*[int(v) for v in np.unique(np.diff(nz))]) if nz.size > 1 else 0
        return self._lattice

    def lam(self, theta: float) -> tuple[float, float, float]:
        """(Lambda, mean, variance) tilted by theta (memoised)."""
        out = self.memo.get(theta)
        if out is not None:
            return out
        top = self._top(theta) if len(self._block_losses) >= _EXP_MIN_BLOCKS else -math.inf
        if math.isfinite(top) and abs(theta) * self.d * _EXP_BLOCK <= _EXP_SPAN:
            w = self._tilted(theta, top)
        else:
            e = self.losses * theta
            e += self.logp
            top = float(e.max())
            e -= top
            np.maximum(e, _FLOOR_EXPONENT, out=e)
            w = np.exp(e, out=e)
        # terms below e^-600 of the largest are raised to it: an upper bound on Lambda (what
        # the Chernoff bounds need; it adds at most n e^-600 relative), and no subnormal
        # arithmetic: their products with the losses and squared deviations in the mean
        # and variance stay normal numbers (subnormals are tens of times slower on x86).
        # einsum, not np.dot: a BLAS dot of a few thousand terms may wake a thread pool,
        # which costs far more than the sum itself
        losses = self.losses
        s = float(w.sum())
        mean = float(np.einsum("i,i->", w, losses)) / s
        dev = losses - mean
        dev *= dev
        var = max(float(np.einsum("i,i->", w, dev)) / s, 0.0)
        out = (top + math.log(s), mean, var)
        self.memo[theta] = out
        return out

    def tilted_norm(self, theta: float) -> float:
        """||x||_2 of the tilted masses x = p e^{theta l - Lambda(theta)} (memoised: the
        tilt placement asks for it at the same theta for every step count)."""
        out = self._norms.get(theta)
        if out is None:
            x = np.exp(self.logp + theta * self.losses - self.lam(theta)[0])
            out = self._norms[theta] = math.sqrt(float(np.einsum("i,i->", x, x)))
        return out

    def _tilted(self, theta: float, top: float) -> np.ndarray:
        """max(e^{e_i}, e^-600) for e = ln p + theta l - top, with one
        exponential per block and per offset instead of one per mass: p e^{theta l - top}
        = p exp(theta l_block - top) exp(theta offset) (libm's exp is scalar code, most of
        lam's time). Each factor is a correctly rounded exp of an argument accurate to a
        few u of its terms, as e's own is, so the terms carry the same relative rounding.
        A mass p >= e^-600 has theta l - top <= 600, so no factor overflows (the clip at
        700 only reaches zero masses, which stay 0 and are raised to the floor)."""
        direct = self._direct
        rest = None
        if direct.size:
            rest = self.losses[direct] * theta
            rest += self.logp[direct]
            rest -= top
            np.exp(np.maximum(rest, _FLOOR_EXPONENT, out=rest), out=rest)
        nb = len(self._block_losses)
        eb = self._block_losses * theta
        eb -= top
        np.minimum(eb, 700.0, out=eb)
        np.exp(eb, out=eb)
        ek = np.exp(self._offsets * theta)
        w = np.empty(len(self.probs))
        wb = w[:nb * _EXP_BLOCK].reshape(nb, _EXP_BLOCK)
        np.multiply(self._blocks, eb[:, None], out=wb)
        wb *= ek
        if rest is not None:
            w[direct] = rest
        np.maximum(w, _FLOOR, out=w)
        return w


class _Cumulants:
    """K(theta) = sum_j T_j Lambda_j(theta) and its first two derivatives (memoised per
    factor shape; ``evaluations`` counts the Lambda_j computed for this object)."""

    def __init__(self, factors: list, d: float) -> None:
        self.f = factors
        self.d = d
        self.shapes = [f.shape if getattr(f, "shape", None) is not None else _Shape(f.lo, f.probs, d)
                       for f in factors]
        self.losses = [sh.losses for sh in self.shapes]
        self.logp = [sh.logp for sh in self.shapes]
        self.evaluations = 0
        #: the span cap's memo across its searches (``_tilt_placement._span_cap``: its spans
        #: and starting lambdas), and the window edges of the tilts it placed:
        #: (theta, log_eps, upper) -> x (``tilted._windows`` reads them)
        self.spans: dict = {}
        self.edges: dict[tuple[float, float, bool], float] = {}

    def lam(self, j: int, theta: float) -> tuple[float, float, float]:
        """(Lambda_j, mean, variance) of factor j tilted by theta."""
        sh = self.shapes[j]
        if theta not in sh.memo:
            self.evaluations += 1
        return sh.lam(theta)

    def __call__(self, theta: float) -> tuple[float, float, float]:
        k = k1 = k2 = 0.0
        for j, f in enumerate(self.f):
            lam, mean, var = self.lam(j, theta)
            k += f.times * lam
            k1 += f.times * mean
            k2 += f.times * var
        return k, k1, k2


def _newton_increasing(fn, x: float, lo: float, hi: float, xtol_rel: float,
                       cap: float = math.inf, max_iter: int = 40) -> float:
    """A root of an increasing function by safeguarded Newton steps: ``fn(x)`` returns
    (f(x), f'(x)); f(lo) < 0 is known and ``hi`` (f(hi) > 0, may be +inf) bounds the search
    together with ``cap``. Steps leaving the bracket are replaced by bisection (or, with
    no finite upper end yet, by doubling the distance from ``lo``); non-finite values
    count as "too far". Returns the last point evaluated once the next step is below
    ``xtol_rel`` times the distance from the bracket's start.

    Only used to place tilts, windows and Chernoff parameters: every value that enters a
    bound is evaluated exactly at the point returned (any point gives a valid bound), so
    the solver's accuracy decides tightness, never soundness. With the cumulants' first two
    derivatives at hand (each evaluation gives K, K' and K'' at once), Newton needs 2-5
    evaluations where a bisection needed 8-16."""
    origin = lo
    hi = min(hi, cap)
    # a first guess beyond the cap starts at the cap (a Gaussian guess from a tiny K'' can
    # lie 1e9 out; returning it unevaluated placed a tilt's cap at theta 9.5e8, issue 29's
    # sigma 0.3, q 1e-9: a heavy-tailed step whose K' overflows long before)
    x = min(x, cap)
    for _ in range(max_iter):
        f, df = fn(x)
        if not math.isfinite(f):
            hi = x
            new = 0.5 * (lo + x)
        else:
            if f == 0.0:
                return x
            if f < 0.0:
                lo = x
            else:
                hi = x
            new = x - f / df if df > 0.0 and math.isfinite(df) else math.nan
            if not (lo < new < hi):  # also NaN
                new = 0.5 * (lo + hi) if math.isfinite(hi) else lo + 2.0 * max(lo - origin, abs(x - origin), 1e-6)
        # at the cap, stop only where the root lies beyond it (f(cap) < 0)
        if abs(new - x) <= xtol_rel * max(abs(x - origin), 1e-12) or new >= cap and x >= cap and lo >= x:
            return x
        x = min(new, cap)
    return x


#: Relative accuracy of the Chernoff parameter lambda of a tail bound (the bound is used, and
#: a poor lambda can leave it trivial) ...
_LAMBDA_XTOL = 1e-3
#: ... and of a window edge (a choice: x(lambda) is flat at its optimum, a 2 % error in
#: lambda moves the edge by well under 1 % of its distance from the mean, and the Gaussian
#: first guess is usually within it, so one or two evaluations do).
_EDGE_LAMBDA_XTOL = 0.02
#: Largest lambda tried, in units of the Gaussian first guess.
_LAMBDA_CAP = 2.0 ** 20
#: Bisections of :func:`_chernoff_x` after a Newton search that stalled far from its root.
_STALL_BISECTIONS = 40


def _chernoff_x(cum: _Cumulants, theta: float, kt: float, sd: float, log_eps: float,
                upper: bool, lam_out: list | None = None) -> float:
    """A loss x with P_theta[Y > x] (upper) or P_theta[Y < x] (lower) <= e^{log_eps}:
    x = min over lambda > 0 of (K(theta +- lambda) - K(theta) - log_eps) / lambda (signs
    reversed for the lower side). The minimum is where g(lambda) = lambda K'(theta +- lambda)
    -+ (K(theta +- lambda) - K(theta) - log_eps) vanishes (g increasing, g(0) = log_eps < 0),
    found by :func:`_newton_increasing` from the Gaussian guess sqrt(-2 log_eps) / sd;
    the smallest x evaluated is returned (and its lambda appended to ``lam_out``)."""
    sign = 1.0 if upper else -1.0
    best = [math.inf, math.nan]
    below, above = [0.0], [(math.inf, math.inf)]  # largest lambda with g < 0; smallest with g >= 0, g

    def fn(lam: float) -> tuple[float, float]:
        k, k1, k2 = cum(theta + sign * lam)
        phi = k - kt - log_eps
        v = phi / lam
        if math.isfinite(v) and v < best[0]:
            best[0], best[1] = v, lam
        g = lam * sign * k1 - phi
        if g < 0.0:
            below[0] = max(below[0], lam)
        elif lam < above[0][0]:
            above[0] = (lam, g)
        return g, lam * k2

    lam0 = math.sqrt(2.0 * -log_eps) / max(sd, 1e-12)
    _newton_increasing(fn, lam0, 0.0, math.inf, _EDGE_LAMBDA_XTOL, cap=lam0 * _LAMBDA_CAP)
    # Newton from the right of a very convex g takes small steps far from the root and stops
    # on its step size (sigma 0.7, q 1e-6, T 10^5 at d 3e-5: x 251 where the minimum is 1.6, a
    # window of 8.4e6 grid points instead of 5.4e4): bisect the bracket while g there is still
    # far from 0 (-log_eps: a fraction of the exponent; any lambda gives a valid x)
    for _ in range(_STALL_BISECTIONS):
        lam_hi, g_hi = above[0]
        if not (math.isfinite(lam_hi) and g_hi > -log_eps and lam_hi - below[0] > _EDGE_LAMBDA_XTOL * lam_hi):
            break
        mid = 0.5 * (below[0] + lam_hi)
        if not math.isfinite(fn(mid)[0]):
            above[0] = (mid, math.inf)
    if lam_out is not None:
        lam_out.append(best[1])
    return sign * best[0]


def _chernoff_mass(cum: _Cumulants, theta: float, kt: float, sd: float, x: float,
                   upper: bool) -> float:
    """Bound min_lambda exp(K(theta +- lambda) - K(theta) -+ lambda x) on P_theta[Y > x]
    (upper) or P_theta[Y < x] (lower): the exponent's derivative is +-(K'(theta +- lambda) - x),
    increasing in lambda, so its root (the saddle point of x) is found by
    :func:`_newton_increasing`; the smallest exponent evaluated (exactly) is used."""
    sign = 1.0 if upper else -1.0
    k1 = cum(theta)[1]
    if sign * (x - k1) <= 0:
        return 1.0
    best = [0.0]

    def fn(lam: float) -> tuple[float, float]:
        k, k1l, k2 = cum(theta + sign * lam)
        v = k - kt - sign * lam * x
        if math.isfinite(v):
            best[0] = min(best[0], v)
        return sign * (k1l - x), k2

    lam0 = max(sign * (x - k1) / max(sd * sd, 1e-300), 1e-12)
    _newton_increasing(fn, lam0, 0.0, math.inf, _LAMBDA_XTOL, cap=lam0 * _LAMBDA_CAP)
    return math.exp(best[0])


#: Most cumulant evaluations of one :func:`_chernoff_edge`.
_EDGE_MAX_EVALUATIONS = 40


def _chernoff_edge(cum: _Cumulants, theta: float, kt: float, k1t: float, sd: float, log_eps: float,
                   upper: bool, rtol: float, guess: float | None = None,
                   most: int = _EDGE_MAX_EVALUATIONS) -> tuple[float, float]:
    """(x, lambda): the Chernoff bound of :func:`_chernoff_x` (x = +-(K(theta +- lambda) -
    K(theta) - log_eps) / lambda at the lambda returned, the best of those evaluated: a valid
    bound whatever the accuracy), to within ``rtol`` of its distance |x - K'(theta)| from
    the mean, with a certificate instead of a step-size rule, in few evaluations.

    In the side's orientation (y = +-loss, m = +-K'(theta)) the rate of the tilted loss,
    I(y) = sup_lambda (lambda y - K(theta +- lambda) + K(theta)), is convex and increasing
    for y >= m, and the edge y* solves I(y*) = -log_eps. An evaluation at lambda gives the
    point y = +-K'(theta +- lambda), I(y) = lambda y - K(theta +- lambda) + K(theta) and
    the slope I'(y) = lambda there, so: its tangent's root (K(theta +- lambda) - K(theta) -
    log_eps) / lambda, the bound itself, lies at or above y*; a point with I(y) <
    -log_eps lies below y*, and so does the root of the chord from it to a point with
    I(y) >= -log_eps (convexity). The search stops once the best bound is within rtol of
    the largest such lower end. Steps: Newton's on ln I(lambda) (dI/dlambda = lambda K''),
    exact where the tail is exponential and quick where it is Gaussian (ln I = 2 ln lambda
    + c), inside the bracket kept on lambda; bisection (geometric where the bracket spans a
    factor 4) otherwise. Newton's on I itself (:func:`_chernoff_x`) creeps in steps of a few
    percent from the right where the tilted loss runs out (I steep and convex there: sigma
    0.8, q 0.001, T 2000 at theta 4.9, 12 evaluations to a 0.6 % accuracy); ``guess`` (a
    lambda, e.g. the edge's at a nearby theta) replaces the Gaussian first guess. The
    evaluations (at most ``most``) depend on ``rtol`` and ``most`` only through when they
    stop: a smaller rtol or a larger ``most`` continues the same sequence."""
    sign = 1.0 if upper else -1.0
    target = -log_eps
    mean = sign * k1t
    lam0 = math.sqrt(2.0 * target) / max(sd, 1e-12)
    cap = lam0 * _LAMBDA_CAP
    best, best_lam = math.inf, math.nan
    lo, lo_y, lo_rate = 0.0, mean, 0.0            # largest lambda known below the edge
    hi, hi_y, hi_rate = math.inf, math.inf, math.inf  # smallest known at or beyond it
    lam = min(guess if guess is not None and 0.0 < guess < math.inf else lam0, cap)
    for _ in range(most):
        k, k1, k2 = cum(theta + sign * lam)
        v = (k - kt + target) / lam
        if v < best:  # (False for NaN)
            best, best_lam = v, lam
        y = sign * k1
        rate = lam * y - (k - kt)
        if not (math.isfinite(rate) and math.isfinite(k2)):
            hi, hi_y, hi_rate = lam, math.inf, math.inf  # too far: beyond the edge
        elif rate < target:
            lo, lo_y, lo_rate = lam, y, rate
        else:
            hi, hi_y, hi_rate = lam, y, rate
        low = lo_y
        if math.isfinite(hi_rate) and hi_rate > lo_rate:
            low = max(low, lo_y + (hi_y - lo_y) * (target - lo_rate) / (hi_rate - lo_rate))
        if best - low <= rtol * (best - mean) or lo >= cap:
            break
        new = math.nan
        slope = lam * k2
        if math.isfinite(rate) and rate > 0.0 and slope > 0.0 and math.isfinite(slope):
            new = lam + math.log(target / rate) * (rate / slope)
        if not lo < new < hi:  # (also NaN)
            if math.isinf(hi):
                new = 4.0 * max(lam, lo)
            elif lo > 0.0 and hi > 4.0 * lo:
                new = math.sqrt(lo * hi)
            else:
                new = 0.25 * hi if lo == 0.0 else 0.5 * (lo + hi)
        new = min(new, cap)
        if new == lam:
            break
        lam = new
    return sign * best, best_lam
