r"""DP-SGD as it ran -> a certified trade-off curve, for every sampling scheme fdpkit knows.

One step adds N(0, sigma^2 C^2 I) to the sum of clipped gradients (clipping norm C). Per
scheme and neighbouring relation (see :mod:`fdpkit.mechanisms.dpsgd`):

- **Poisson** (each example in a batch independently with probability q): dp_accounting's
  PLD of the Poisson subsampled Gaussian, add/remove (zero-out is the same PLD,
  dp_accounting's REPLACE_SPECIAL) or replace-one (REPLACE_ONE), composed over the steps.
- **Truncated Poisson** (Poisson batches cut to ``max_batch_size``): dp_accounting 0.6.0's
  ``from_truncated_subsampled_gaussian_mechanism`` (a mixture of the sampled Gaussian and a
  replace-one sampled Gaussian of sensitivity 2 on the truncation event).
- **Fixed-size batches without replacement**, replace-one or zero-out: Dong, Roth & Su
  2022, Thm. 4.2: if a step on a fixed batch is f-DP for batches differing in one example,
  the step on a batch of m of n examples drawn without replacement is C_q(f)-DP with
  q = m/n and

      C_q(f) = min{f_q, f_q^{-1}}**,   f_q = q f + (1 - q) Id.                      (4.2)

  Here f = G_{Delta/sigma} with Delta = 2 (replace-one: the sum moves by up to 2C) or 1
  (zero-out). C_q(f) is exactly the symmetric curve of the Poisson *add/remove* sampled
  Gaussian of sensitivity Delta: its two PLD directions are T(P, (1-q)P + qQ) = f_q and
  its inverse, and fdpkit's curve of a PLD is the convex hull of the minimum of the
  directions' symmetric curves, whose privacy profile is the larger of theirs (the
  conjugate of min{f, g}** is max{f*, g*}). So fdpkit builds that one-step curve (a
  certified lower bound at the discretization), turns it back into a *symmetric* PLD by
  reading each hull segment of slope -e^l as an atom at loss l (rounded **up** to the grid,
  the pessimistic direction: delta(eps) = m_inf + sum_{l > eps} (1 - e^{eps-l}) p only
  grows), and composes that PLD over the steps with dp_accounting: the curve certified
  for C_q(f)^{(x)T} (Dong et al. Thm. 3.2 composition; ordering is kept because a PLD
  with larger losses dominates, Zhu, Dong & Wang 2022).
- **Shuffled fixed-size batches** (each example once per pass): no amplification is
  claimed. An example enters P steps, each a Gaussian of sensitivity Delta, the others do
  not depend on it (for replace-one / zero-out the partition into batches is the same on
  both datasets), so the run is exactly mu-GDP with mu = sqrt(sum_phases P / sigma^2) x
  Delta (Dong et al. Cor. 3.3). Poisson accounting of the same setting is *not* a
  guarantee for shuffled batches (Chua et al., ICML 2024; Annamalai et al. 2024); reports
  show it beside, labelled so.

**Privacy unit.** ``unit="user"`` without ``examples_per_user``: users are sampled, so the
maths is the same with users as units. With ``examples_per_user = k``: group privacy, Dong,
Roth & Su Thm. 2.14: an f-DP mechanism is 1 - (1 - f)^{o k}-DP for datasets differing in k
examples (o k: k-fold functional composition of the TPR map alpha -> 1 - f(alpha)); for
G_mu this is exactly G_{k mu}. On a piecewise-linear certified curve the composition is
computed exactly on the union of the breakpoints and their preimages, then nudged up.
"""

from __future__ import annotations

import math
import numpy as np
from dp_accounting import privacy_accountant
from dp_accounting.pld import privacy_loss_distribution as pldlib

from fdpkit.accounting import _pld_adapter as _adapter
from fdpkit.accounting import curve as _curve
from fdpkit.accounting.profile import PldProfile
from fdpkit.curves import GaussianCurve, PiecewiseLinearCurve, TradeOffCurve
from fdpkit.mechanisms import Mechanism
from fdpkit.mechanisms.dpsgd import DPSGD, Phase

_REL = privacy_accountant.NeighboringRelation
_NEIGHBOUR = {"add-remove": _REL.ADD_OR_REMOVE_ONE, "zero-out": _REL.REPLACE_SPECIAL,
              "replace-one": _REL.REPLACE_ONE}
#: Tail mass dp_accounting may truncate in each composition (as in fdpkit.accounting.pld).
TAIL_MASS_TRUNCATION = 1e-15
#: Losses beyond this (in nats) in a PLD rebuilt from a curve go to the infinite loss.
LOSS_CAP = 60.0
#: Relative amount by which a group curve's TPR is raised to absorb float rounding.
GROUP_TPR_RTOL = 1e-12


# ------------------------------------------------------------------------- one phase
def _poisson_step(sigma: float, q: float, relation: str, d: float):
    return pldlib.from_gaussian_mechanism(
        sigma, sensitivity=1.0, pessimistic_estimate=True, value_discretization_interval=d,
        sampling_prob=q, use_connect_dots=True, neighboring_relation=_NEIGHBOUR[relation],
    )


def _pld_from_symmetric_curve(curve: PiecewiseLinearCurve, d: float):
    """A symmetric pessimistic PLD whose privacy profile is at least the curve's, every eps.

    Each hull segment from (alpha_i, TPR_i) to (alpha_{i+1}, TPR_{i+1}) is an atom of mass
    p = TPR_{i+1} - TPR_i (under the alternative) at loss ln(p / (alpha_{i+1} - alpha_i)),
    rounded up to the grid; TPR at alpha = 0 is the mass at +inf."""
    a, t, b = curve.alphas, curve.tprs, curve.betas
    da = np.diff(a)
    dt = np.where(t[1:] <= 0.5, np.diff(t), b[:-1] - b[1:])
    keep = (dt > 0) & (da > 0)
    p, loss = dt[keep], np.log(dt[keep]) - np.log(da[keep])
    m_inf = float(t[0])
    far = loss > LOSS_CAP
    m_inf += float(p[far].sum())
    p, loss = p[~far], np.maximum(loss[~far], -LOSS_CAP)  # raising a loss is pessimistic
    idx = np.ceil(loss / d).astype(np.int64)
    lo = int(idx.min())
    probs = np.bincount(idx - lo, weights=p)
    losses = (np.arange(len(probs)) + lo) * d
    return _adapter.pld_from_arrays(_adapter.PmfArrays(losses, probs, m_inf, d))


def fixed_size_step_curve(sigma: float, q: float, relation: str, d: float) -> PiecewiseLinearCurve:
    """Certified curve of one fixed-size step: C_q(G_{Delta/sigma}) (Eq. 4.2 above)."""
    delta = 2.0 if relation == "replace-one" else 1.0
    pld = pldlib.from_gaussian_mechanism(
        sigma, sensitivity=delta, pessimistic_estimate=True, value_discretization_interval=d,
        sampling_prob=q, use_connect_dots=True,
    )
    return _curve.curve_from_pld(pld)


def _phase_pld(m: DPSGD, ph: Phase, d: float):
    s = ph.noise_multiplier
    if m.sampling == "poisson":
        step = _poisson_step(s, ph.sample_rate, m.relation, d)
    elif m.sampling == "truncated-poisson":
        step = pldlib.from_truncated_subsampled_gaussian_mechanism(
            dataset_size=m.dataset_size, sampling_probability=ph.sample_rate,
            truncated_batch_size=ph.max_batch_size, noise_multiplier=s,
            value_discretization_interval=d, use_connect_dots=True,
            neighboring_relation=_NEIGHBOUR[m.relation],
        )
    elif m.sampling == "fixed-size":
        step = _pld_from_symmetric_curve(fixed_size_step_curve(s, ph.sample_rate, m.relation, d), d)
    else:  # shuffled: P Gaussians of sensitivity Delta (no amplification)
        step = pldlib.from_gaussian_mechanism(s, sensitivity=m.sensitivity, pessimistic_estimate=True,
                                              value_discretization_interval=d, use_connect_dots=True)
        return _adapter.self_compose(step, ph.participations, TAIL_MASS_TRUNCATION)
    return _adapter.self_compose(step, ph.steps, TAIL_MASS_TRUNCATION)


def dpsgd_pld(m: DPSGD, discretization: float):
    """The pessimistic PLD of an example-level (or user-sampled) DP-SGD run."""
    if m.examples_per_user is not None:
        raise ValueError("examples_per_user (group privacy) applies to a whole DP-SGD run, not to a "
                         "part of a composed mechanism: account the DP-SGD run on its own")
    out = None
    for ph in m.phases:
        pld = _phase_pld(m, ph, discretization)
        out = pld if out is None else _adapter.compose(out, pld, TAIL_MASS_TRUNCATION)
    return out


def shuffled_mu(m: DPSGD) -> float:
    """mu = Delta sqrt(sum_phases P / sigma^2) of shuffled batches (no amplification)."""
    return m.sensitivity * math.sqrt(sum(ph.participations / ph.noise_multiplier**2 for ph in m.phases))


# ------------------------------------------------------------------------ group privacy
def _tpr_map(c: PiecewiseLinearCurve) -> tuple[np.ndarray, np.ndarray]:
    return np.asarray(c.alphas, dtype=float), np.asarray(c.tprs, dtype=float)


def group_curve(curve: TradeOffCurve, k: int) -> TradeOffCurve:
    """1 - (1 - f)^{o k}: the curve for datasets differing in ``k`` examples (Dong, Roth &
    Su Thm. 2.14). Exact G_{k mu} for a Gaussian curve; for a piecewise-linear lower bound,
    the exact k-fold composition of its TPR map (a lower bound again), nudged up by
    ``GROUP_TPR_RTOL`` against rounding."""
    if k == 1:
        return curve
    if isinstance(curve, GaussianCurve):
        return GaussianCurve(k * curve.mu)
    if not isinstance(curve, PiecewiseLinearCurve):
        raise ValueError(f"curve must be a GaussianCurve or a certified PiecewiseLinearCurve, got {type(curve).__name__}")
    a1, t1 = _tpr_map(curve)
    a, t = a1, t1
    inc = np.concatenate([[True], np.diff(t1) > 0])
    for _ in range(k - 1):
        # new(x) = f1(old(x)); breakpoints: old's and old^{-1}(f1's breakpoints)
        ok = np.concatenate([[True], np.diff(t) > 0])
        lo, hi = t[0], t[-1]
        pre = a1[inc & (a1 > lo) & (a1 < hi)]
        x = np.union1d(a, np.interp(pre, t[ok], a[ok]))
        inner = np.interp(x, a, t)
        t = np.minimum(np.interp(inner, a1, t1) * (1.0 + GROUP_TPR_RTOL), 1.0)
        a = x
    t = np.maximum(np.maximum.accumulate(t), a)
    return PiecewiseLinearCurve.lower_convex_hull(a, t, "lower")


# ----------------------------------------------------------------------------- account
def account_dpsgd(m: DPSGD, discretization: float) -> _curve.Accounting:
    """Account a DP-SGD run (see the module docs); group privacy applied last."""
    k = m.examples_per_user or 1
    if m.sampling == "shuffled":
        return _curve.Accounting(m, GaussianCurve(k * shuffled_mu(m)), "closed form", None)
    base = DPSGD(m.phases, m.sampling, m.relation, m.dataset_size, m.unit, None)
    pld = dpsgd_pld(base, discretization)
    profile = PldProfile(pld)
    c = _curve.curve_from_pld(pld, profile)
    if k > 1:
        return _curve.Accounting(m, group_curve(c, k), "PLD + group privacy", discretization)
    acc = _curve.Accounting(m, c, "PLD", discretization, pld)
    object.__setattr__(acc, "_profile", profile)
    return acc


def poisson_comparison(m: DPSGD, discretization: float) -> _curve.Accounting:
    """What Poisson accounting would say for the same noise, batch/dataset sizes and steps:
    **not** a guarantee for shuffled batches (Chua et al. 2024; Annamalai et al. 2024)."""
    return account_dpsgd(DPSGD(tuple(Phase(p.noise_multiplier, p.sample_rate, p.steps) for p in m.phases),
                               "poisson", m.relation, m.dataset_size, m.unit, m.examples_per_user),
                         discretization)


def account(mechanism: Mechanism, *, discretization: float = _curve.DISCRETIZATION_DEFAULT) -> _curve.Accounting:
    """Account ``mechanism``: :func:`fdpkit.accounting.curve.account`, plus every DP-SGD
    sampling scheme, relation and privacy unit.

    >>> from fdpkit.mechanisms import dpsgd
    >>> account(dpsgd(2.0, batch_size=10, dataset_size=100, steps=4, sampling="shuffled",
    ...               relation="replace-one")).curve
    GaussianCurve(mu=1.0)
    """
    if isinstance(mechanism, DPSGD):
        return account_dpsgd(mechanism, _curve._check_discretization(discretization))
    return _curve.account(mechanism, discretization=discretization)


def tradeoff_curve(mechanism: Mechanism, *, discretization: float = _curve.DISCRETIZATION_DEFAULT) -> TradeOffCurve:
    """The certified trade-off curve of ``mechanism`` (see :func:`account`)."""
    return account(mechanism, discretization=discretization).curve


__all__ = ["account", "account_dpsgd", "dpsgd_pld", "group_curve", "poisson_comparison", "shuffled_mu",
           "tradeoff_curve", "fixed_size_step_curve"]
