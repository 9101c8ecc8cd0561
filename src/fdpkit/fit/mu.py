"""Tight mu-GDP for a trade-off curve (Gomez et al. Eq. 5), on its FPR range.

Tight mu (Gomez et al., Eq. 5)
    mu* = inf{mu >= 0 : G_mu(alpha) <= f(alpha) for all alpha}. Since G_mu(alpha) <= beta
    iff mu >= Phi^{-1}(1 - alpha) - Phi^{-1}(beta) = isf(alpha) - isf(TPR), and both G_mu
    and f are convex, for a piecewise-linear f it suffices to check the vertices
    (Prop. C.1, Eq. 21): mu* = max_i isf(alpha_i) - isf(TPR_i). fdpkit evaluates this with
    survival functions on TPR, so vertices at alpha = 1e-12 keep their digits.

FPR range
    Numeric curves are fitted on the attacks whose FPR and FNR are both at least alpha_min
    (default 1e-10, Gomez et al.'s choice): alpha >= alpha_min and f(alpha) >= alpha_min.
    For a symmetric curve this is the symmetric counterpart of Gomez et al.'s
    [alpha_min, 1 - alpha_min]: the part of [alpha_min, 1 - alpha_min] it leaves out has
    beta < alpha_min, which mirrors FPR < alpha_min. The fitted mu then certifies: every such
    attack has TPR <= 1 - G_mu(FPR); overall f >= G_mu - tau with tau = 1 - G_mu(alpha_min)
    (for f(alpha) < alpha_min, G_mu(alpha) <= alpha_min <= tau), hence
    delta(eps) <= delta_mu(eps) + tau. Closed forms with a finite mu over all of [0, 1]
    are fitted exactly (alpha_min = 0, tau = 0). Exact curves with f(0) < 1 have no finite
    mu at all (Gomez et al. Prop. 6.2): mu = inf, and ``reason`` says why.

The regret of the fit is :func:`fdpkit.fit.regret.regret`; the advantage and Bayes risk
of a curve are in :mod:`fdpkit.risk.bayes`.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from fdpkit.errors import ParameterError
from fdpkit._lazy import lazy_module

if TYPE_CHECKING:
    from scipy import optimize
else:  # loaded on first use (start-up time, issue 30)
    optimize = lazy_module("scipy.optimize")

from fdpkit._numerics import MU_SAFETY_RTOL, check_scalar, norm_isf, norm_sf, safe_g
from fdpkit.curves import GaussianCurve, TradeOffCurve, _repr
from fdpkit.fit.regret import _check_curve, regret

#: Default lower end of the FPR range on which numeric curves are fitted (Gomez et al.).
ALPHA_MIN_DEFAULT = 1e-10
#: Grid size (uniform in logit alpha) for curves that are neither closed-form nor
#: piecewise linear; the best grid point is refined with Brent's method.
_DENSE_GRID = 20001
#: Relative margin added to numerically maximised quantities that must not be optimistic.
_NUMERIC_RTOL = 1e-9


@dataclass(frozen=True)
class GDPFit:
    """A tight, pessimistic μ-GDP summary of a trade-off curve.

    Attributes
    ----------
    mu : float
        Smallest μ with G_μ(FPR) ≤ f(FPR) for every FPR ≥ ``alpha_min`` with
        f(FPR) ≥ ``alpha_min`` (attacks whose FPR and FNR are both ≥ ``alpha_min``); ∞ when
        none exists.
    regret : float
        Δ(f, G_μ) (Gomez et al. Def. 2.6): how much the summary over-reports risk.
        ∞ when μ is infinite.
    alpha_min : float
        Lower end of the FPR range the guarantee is certified on (0: all of [0, 1]).
    tau : float
        1 − G_μ(``alpha_min``): what the range leaves out. f ≥ G_μ − τ everywhere.
    reason : str
        How the fit was obtained, and why μ is infinite when it is.
    """

    mu: float
    regret: float
    alpha_min: float
    tau: float
    reason: str

    def __post_init__(self) -> None:
        # mu = -0.0 (the diagonal's vertices give isf(a) + isf(1 - a) = -0.0) reads "-0"
        object.__setattr__(self, "mu", self.mu + 0.0)

    def statement(self) -> str:
        """The guarantee in one sentence."""
        if not math.isfinite(self.mu):
            return f"No finite mu-GDP guarantee: {self.reason}"
        if self.alpha_min == 0:
            return f"{safe_g(self.mu, up=True)}-GDP for every attack (exact over all FPR in [0, 1])."
        return (
            f"{safe_g(self.mu, up=True)}-GDP for every attack with FPR and FNR >= {self.alpha_min:.3g}; "
            f"overall TPR <= 1 - G_mu(FPR) + {safe_g(self.tau, 4, up=True)}."
        )

    def to_dict(self) -> dict[str, Any]:
        """The object as JSON-ready data (dicts, lists, numbers and strings)."""
        return asdict(self)

    def __repr__(self) -> str:
        rng = "all FPR" if self.alpha_min == 0 else f"FPR and FNR >= {self.alpha_min:.3g}"
        return f"GDPFit(mu={safe_g(self.mu, 6, up=True)}, regret={self.regret:.3g}, {rng})"

    def _repr_html_(self) -> str:
        """A compact notebook card with the fitted Gaussian curve."""
        rows = [("μ", _repr.num(self.mu, up=True)), ("regret", _repr.num(self.regret)),
                ("FPR range", "all of [0, 1]" if self.alpha_min == 0 else f"FPR, FNR ≥ {self.alpha_min:.3g}"),
                ("τ", _repr.num(self.tau, up=True))]
        svg = ""
        if math.isfinite(self.mu):
            svg = _repr.tradeoff_svg(np.asarray(GaussianCurve(self.mu).beta(_repr.grid())),
                                     title=f"Gaussian trade-off curve, mu = {safe_g(self.mu, up=True)}")
        return _repr.card("Tight μ-GDP fit", rows, svg, self.reason)



# ----------------------------------------------------------------------------- fit


#: Vertices per block of the branch and bound in :func:`_mu_on_vertices` (the result is
#: exact for any size; 16 evaluates the fewest isf values on the headline DP-SGD curve,
#: whose isf(alpha) + isf(beta) is nearly flat: 1.1 ms against 2.9 ms at 64, issue 27).
_MU_BLOCK = 16


def _isf_beta(b: np.ndarray, t: np.ndarray) -> np.ndarray:
    """isf(beta) = -isf(TPR), from whichever of beta/TPR is small (accurately stored)."""
    out = np.empty(len(b))
    small = b <= 0.5
    out[small] = norm_isf(b[small])
    out[~small] = -norm_isf(t[~small])
    return out


def _mu_on_vertices(
    alpha: np.ndarray, tpr: np.ndarray, beta: np.ndarray, alpha_min: float, monotone: bool = False
) -> float:
    """max_i isf(alpha_i) + isf(beta_i) over the vertices of the fitting range (isf(beta) =
    -isf(TPR), each taken from whichever of beta/TPR is the small, accurately stored one).

    The range is {alpha >= alpha_min and f(alpha) >= alpha_min}: attacks whose FPR and FNR
    are both at least alpha_min. Its ends cut segments, so f is evaluated there exactly.

    Exact branch and bound: isf is decreasing, alpha increases and beta decreases along
    the vertices, so on a block of vertices i..j every value is at most
    isf(alpha_i) + isf(beta_j). The block ends are evaluated first; only blocks whose bound
    exceeds the best end value are evaluated in full. ``monotone``: the caller guarantees
    alpha strictly increasing and beta non-increasing (a symmetric curve's stored half), so
    the fitting range is an index range, found by binary search."""
    if alpha_min == 0.0 and alpha[0] == 0.0 and tpr[0] > 0.0:
        return math.inf  # TPR > 0 at FPR 0 (the mirror of beta = 0 at FPR < 1)
    if monotone:  # the same vertices as the mask below, as one slice
        lo = int(np.searchsorted(alpha, alpha_min, side="left")) if alpha_min > 0 else \
            int(np.searchsorted(alpha, 0.0, side="right"))
        hi = min(int(np.searchsorted(alpha, 1.0, side="left")),
                 len(beta) - int(np.searchsorted(beta[::-1], alpha_min, side="left")))
        a, t, b = alpha[lo:max(lo, hi)], tpr[lo:max(lo, hi)], beta[lo:max(lo, hi)]
    else:
        inside = (alpha >= alpha_min) & (beta >= alpha_min) & (alpha > 0) & (alpha < 1)
        a, t, b = alpha[inside], tpr[inside], beta[inside]
    best = -math.inf
    with np.errstate(invalid="ignore", divide="ignore"):
        if alpha_min > 0:
            ends_a = [alpha_min]
            # the alpha where beta falls to alpha_min (beta is non-increasing)
            if beta[-1] < alpha_min <= beta[0]:
                ends_a.append(float(np.interp(-alpha_min, -beta, alpha)))
            ends = np.array(ends_a)
            eb = np.interp(ends, alpha, beta)
            et = np.interp(ends, alpha, tpr)
            ok = eb >= alpha_min * (1 - 1e-12)
            if ok.any():
                ev = norm_isf(ends[ok]) + _isf_beta(np.maximum(eb[ok], 0.0), et[ok])
                best = max(best, float(np.nanmax(ev)))
        n = len(a)
        if n == 0:
            return float(max(0.0, best))
        if n <= 8 * _MU_BLOCK:
            return float(max(0.0, best, np.nanmax(norm_isf(a) + _isf_beta(b, t))))
        s = np.append(np.arange(0, n - 1, _MU_BLOCK), n - 1)
        isf_a, isf_b = norm_isf(a[s]), _isf_beta(b[s], t[s])
        best = max(best, float(np.nanmax(isf_a + isf_b)))
        bound = isf_a[:-1] + isf_b[1:]
        cand = np.flatnonzero(~(bound <= best))  # NaN bounds are searched too
        if cand.size:
            starts = s[cand] + 1
            lens = s[cand + 1] - starts  # block interiors (ends are done)
            cand, starts, lens = cand[lens > 0], starts[lens > 0], lens[lens > 0]
            if lens.size:
                offsets = np.repeat(starts - (np.cumsum(lens) - lens), lens)
                idx = np.arange(int(lens.sum())) + offsets
                vals = norm_isf(a[idx]) + _isf_beta(b[idx], t[idx])
                best = max(best, float(np.nanmax(vals)))
    return float(max(0.0, best))


def _mu_dense(curve: TradeOffCurve, alpha_min: float) -> float:
    lo = max(alpha_min, 1e-300)
    x = np.linspace(math.log(lo / (1 - lo)), -math.log(lo / (1 - lo)), _DENSE_GRID)
    a = 1.0 / (1.0 + np.exp(-x))

    def h(alpha: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            vals = norm_isf(alpha) - norm_isf(curve._tpr(alpha))
        return np.where(curve._beta(alpha) >= alpha_min, vals, -np.inf)

    vals = h(a)
    i = int(np.nanargmax(vals))
    best = float(vals[i])
    if math.isfinite(best):
        xl, xr = x[max(i - 1, 0)], x[min(i + 1, len(x) - 1)]
        res = optimize.minimize_scalar(
            lambda u: -float(h(np.array([1.0 / (1.0 + math.exp(-u))]))[0]),
            bounds=(xl, xr), method="bounded", options={"xatol": 1e-10},
        )
        best = max(best, -float(res.fun))
    return max(0.0, best) * (1.0 + _NUMERIC_RTOL)


def fit_gdp(curve: TradeOffCurve, alpha_min: float = ALPHA_MIN_DEFAULT) -> GDPFit:
    """The tight pessimistic μ-GDP guarantee of a curve, with its regret and FPR range.

    Parameters
    ----------
    curve : TradeOffCurve
        The mechanism's curve; an exact curve or a pessimistic (``bound="lower"``) one.
    alpha_min : float, default 1e-10
        Lower end of the FPR range for curves without a closed-form μ (Gomez et al. use
        1e-10). Must be in [0, 0.5).

    Returns
    -------
    GDPFit

    Notes
    -----
    Gomez et al., Eq. (5) and (21); Prop. 6.1 (pure ε-DP); Prop. 6.2 (f(0) < 1).
    On a curve from error points (:func:`fdpkit.curve_from_points`), ``fit_gdp(curve,
    alpha_min=0)`` is R fdp's ``est_gdp()``: the smallest μ with G_μ below every point,
    and the returned fit is its certificate (range, τ, how it was found).

    Examples
    --------
    >>> from fdpkit import GaussianCurve, RandomizedResponseCurve
    >>> fit_gdp(GaussianCurve(1.5)).mu
    1.5
    >>> fit = fit_gdp(RandomizedResponseCurve(1.0))
    >>> round(fit.mu, 4), round(fit.regret, 4), fit.alpha_min
    (1.232, 0.0575, 0.0)
    """
    curve = _check_curve("curve", curve)
    alpha_min = check_scalar("alpha_min", alpha_min)
    if not (0.0 <= alpha_min < 0.5):
        raise ParameterError(f"alpha_min must be in [0, 0.5), got {alpha_min!r}", "alpha_min")
    if curve.bound == "upper":
        raise ParameterError(
            "curve.bound is 'upper': an optimistic curve cannot certify a guarantee; "
            "use an exact curve or a pessimistic (lower) bound", "curve")
    exact = curve._mu_exact()
    if exact is not None:
        return GDPFit(
            float(exact), regret(curve, GaussianCurve(exact)), 0.0, 0.0,
            f"exact over all FPR in [0, 1] ({type(curve).__name__} closed form)",
        )
    f0 = curve.f0
    # TPR at FPR 0, read from the accurately stored side: f(0) = 1 - 1e-191 rounds to 1.0
    tpr0 = float(curve._tpr(np.zeros(1))[0])
    if curve.bound == "exact" and (f0 < 1.0 or tpr0 > 0.0):
        return GDPFit(
            math.inf, math.inf, 0.0, 0.0,
            f"f(0) = 1 - {safe_g(tpr0, 3, up=True)} < 1: with probability {safe_g(tpr0, 3, up=True)} an output identifies "
            "membership with certainty, so no finite mu holds (Gomez et al. Prop. 6.2)",
        )
    if alpha_min > 0 and float(curve._beta(np.array([alpha_min]))[0]) < alpha_min:
        return GDPFit(
            math.inf, math.inf, alpha_min, 0.0,
            f"every attack with FPR >= {alpha_min:.3g} has FNR < {alpha_min:.3g}: the "
            "fitting range is empty because the curve is (nearly) perfectly "
            "distinguishing there, so no finite mu is certified; lower alpha_min to fit "
            "deeper in the tail",
        )
    half = curve._half_breakpoints()
    bp = curve._breakpoints() if half is None else half[:2]
    if bp is not None:
        if half is not None:  # symmetric: isf(alpha) + isf(beta) is mirror-invariant
            mu = _mu_on_vertices(half[0], half[1], half[2], alpha_min, monotone=True)
        else:
            vb = getattr(curve, "_vertex_betas", None)
            betas = vb() if vb is not None else 1.0 - bp[1]
            mu = _mu_on_vertices(bp[0], bp[1], betas, alpha_min)
        how = "maximum over the curve's vertices (Gomez et al. Eq. 21)"
    else:
        mu = _mu_dense(curve, alpha_min)
        how = "dense search plus Brent refinement, rounded up"
    if not math.isfinite(mu):
        if alpha_min == 0.0 and tpr0 > 0.0:
            why = (f"f(0) = 1 - {safe_g(tpr0, 3, up=True)} < 1, so no finite mu holds over all FPRs (Gomez et "
                   "al. Prop. 6.2); fit on attacks with FPR and FNR >= alpha_min > 0 instead")
        else:
            why = f"the curve has beta = 0 at an FPR >= {alpha_min:.3g}: no finite mu holds there"
        return GDPFit(math.inf, math.inf, alpha_min, 0.0, why)
    mu *= 1.0 + MU_SAFETY_RTOL
    tau = float(norm_sf(norm_isf(alpha_min) - mu)) if alpha_min > 0 else 0.0
    reason = f"{how} on attacks with FPR and FNR >= {alpha_min:.3g}"
    if f0 < 1.0:
        reason += f"; f(0) = 1 - {1 - f0:.3g} < 1, so the guarantee cannot extend to FPR 0"
    return GDPFit(mu, regret(curve, GaussianCurve(mu)), alpha_min, tau, reason)


#: The lowest alpha_min :func:`fit_gdp_adapted` lowers the range to. Every numeric curve
#: fdpkit builds is a certified lower bound at every FPR (the round-off-bounded composition's
#: tail bounds are rigorous, and near the diagonal beta is summed from the small end, issue
#: 29), so the range may go as deep as the curve's diagonal crossing requires (mu ~ 20 at
#: sigma 5, q 0.1, T = 10^6 crosses at FPR 4e-24); this only keeps it inside float range.
ALPHA_MIN_FLOOR = 1e-300


def fit_gdp_adapted(curve: TradeOffCurve, alpha_min: float = ALPHA_MIN_DEFAULT,
                    floor: float = ALPHA_MIN_FLOOR) -> GDPFit:
    """:func:`fit_gdp`, with the FPR range widened where it is empty at ``alpha_min``.

    At large mu (above 2 z(alpha_min) = 12.7 for alpha_min = 1e-10; Gomez et al. Eq. 21) a
    tight curve has beta < alpha_min at FPR alpha_min, the range {alpha, beta >= alpha_min}
    is empty and :func:`fit_gdp` reads mu = inf although the curve supports a finite mu
    deeper in the tail. Here alpha_min is then lowered by decades, down to ``floor``, and
    the first finite fit is returned: its ``alpha_min`` (stated with the mu, and in its
    ``reason``) is the range it holds on. Every fit is a pessimistic one (a smaller range
    only adds vertices, so mu can only grow). Decades whose range is still empty cost one
    curve evaluation each; once a range is non-empty and its mu is still infinite, lower
    decades cannot help (their ranges contain it) and the search stops. If none is finite,
    the fit at ``alpha_min`` is returned unchanged.

    >>> from fdpkit import GaussianCurve
    >>> fit_gdp_adapted(GaussianCurve(20.0)).mu
    20.0
    """
    fit = fit_gdp(curve, alpha_min=alpha_min)
    if math.isfinite(fit.mu) or not (0.0 < alpha_min) or curve._mu_exact() is not None:
        return fit
    floor = check_scalar("floor", floor)
    if not (0.0 < floor <= alpha_min):
        raise ParameterError(f"floor must be in (0, alpha_min], got {floor!r}", "floor")
    k = math.floor(-math.log10(alpha_min) + 1e-9)
    a = alpha_min
    while a > floor * (1.0 + 1e-9):
        k += 1
        a = max(float(f"1e-{k}"), floor)  # whole decades, written exactly
        if float(curve._beta(np.array([a]))[0]) < a:
            continue  # the range is still empty (fit_gdp would say so)
        f = fit_gdp(curve, alpha_min=a)
        if math.isfinite(f.mu):
            return GDPFit(f.mu, f.regret, f.alpha_min, f.tau,
                          f"{f.reason} (alpha_min lowered from {alpha_min:.3g}: at that FPR the "
                          "curve is already below FNR alpha_min, so no finite mu fits there)")
        return fit
    if not float(curve._beta(np.array([floor]))[0]) < floor:
        return fit
    # empty at every decade down to the floor: lowering alpha_min further cannot help
    return GDPFit(fit.mu, fit.regret, fit.alpha_min, fit.tau,
                  f"every attack with FPR >= {floor:.3g} has FNR below its FPR: the curve is (nearly) "
                  "perfectly distinguishing at every FPR a float can hold, so no finite mu is certified "
                  f"(a Gaussian curve like that has mu > 2 z({floor:.3g}) = {2.0 * float(norm_isf(floor)):.3g})")
