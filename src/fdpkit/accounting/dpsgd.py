r"""DP-SGD as it ran -> a certified trade-off curve, for every sampling scheme fdpkit knows.

One step adds N(0, sigma^2 C^2 I) to the sum of clipped gradients (clipping norm C). Per
scheme and neighbouring relation (see :mod:`fdpkit.mechanisms.dpsgd`):

- **Poisson** (each example in a batch independently with probability q): dp_accounting's
  PLD of the Poisson subsampled Gaussian, add/remove (zero-out is the same PLD,
  dp_accounting's REPLACE_SPECIAL) or replace-one (REPLACE_ONE), composed over the steps.
- **Truncated Poisson** (Poisson batches cut to ``max_batch_size``): dp_accounting 0.6.0's
  ``from_truncated_subsampled_gaussian_mechanism`` (a mixture of the sampled Gaussian and a
  replace-one sampled Gaussian of sensitivity 2 on the truncation event). Not tightened:
  an audit (issue 29) found it 3-10x above a simple attainable instance when the cap
  equals the expected batch size; it is sound, and may be that loose.
- **Fixed-size batches without replacement**, replace-one or zero-out: Dong, Roth & Su
  2022, Thm. 4.2: if a step on a fixed batch is f-DP for batches differing in one example,
  the step on a batch of m of n examples drawn without replacement is C_q(f)-DP with
  q = m/n and

      C_q(f) = min{f_q, f_q^{-1}}**,   f_q = q f + (1 - q) Id.                      (4.2)

  Here f = G_{Delta/sigma} with Delta = 2 for replace-one *and* zero-out: Thm. 4.2 compares
  batches that differ in one element, and under zero-out a batch holding the example
  differs from one without it by another example's gradient replaced by its own (up to
  2C). (Delta = 1 would be optimistic: whether the example is in a fixed-size batch changes
  how many others are, and their gradients can reveal it; issue 29 and
  ``tests/dpsgd/test_dpsgd_fixed_size_instance.py``. For the same reason the Poisson
  add/remove pair does not dominate fixed-size zero-out.) C_q(f) is exactly the symmetric curve of the Poisson *add/remove* sampled
  Gaussian of sensitivity Delta: its two PLD directions are T(P, (1-q)P + qQ) = f_q and
  its inverse, and fdpkit's curve of a PLD is the convex hull of the minimum of the
  directions' symmetric curves, whose privacy profile is the larger of theirs (the
  conjugate of min{f, g}** is max{f*, g*}). So fdpkit builds that one-step curve (a
  certified lower bound at the discretization), turns it back into a pessimistic PLD of
  the *curve* (:func:`fdpkit.accounting.from_curve.pld_from_curve`, connect-the-dots on
  its privacy profile), and composes that PLD over the steps: the curve certified for
  C_q(f)^{(x)T} (Dong et al. Thm. 3.2).

Every phase's single step is composed over its steps (and the phases with each other) in
one pass of :func:`fdpkit.accounting.pld.compose_plds`, the round-off-bounded composition
of :mod:`fdpkit.accounting.tilted` that :func:`fdpkit.accounting.build_pld` uses.
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
examples; exactly G_{k mu} for Gaussian DP, a sound lower bound on a certified curve
(:func:`fdpkit.group_curve`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from fdpkit._lazy import lazy_module

from fdpkit.accounting.pld import (build_pld, compose_arrays, compose_plds, gaussian_pld, native_steps,
                                   shared_step_arrays, step_sigma)
from fdpkit.accounting import single_step
from fdpkit.accounting import curve as _curve
from fdpkit.accounting.from_curve import pld_from_curve
from fdpkit.accounting.profile import PldProfile
from fdpkit.curves import GaussianCurve, PiecewiseLinearCurve, TradeOffCurve, group_curve
from fdpkit.mechanisms import Mechanism
from fdpkit.mechanisms.dpsgd import DPSGD, FIXED_SIZE_SENSITIVITY, Phase

if TYPE_CHECKING:
    from dp_accounting import privacy_accountant
    from dp_accounting.pld import privacy_loss_distribution as pldlib
else:  # dp_accounting (and scipy.signal, scipy.stats) load when a PLD is first built
    privacy_accountant = lazy_module("dp_accounting.privacy_accountant")
    pldlib = lazy_module("dp_accounting.pld.privacy_loss_distribution")

#: fdpkit's neighbouring relation -> the name of dp_accounting's ``NeighboringRelation``.
_RELATION_NAMES = {"add-remove": "ADD_OR_REMOVE_ONE", "zero-out": "REPLACE_SPECIAL", "replace-one": "REPLACE_ONE"}


def _neighbour(relation: str):
    """dp_accounting's ``NeighboringRelation`` for one of fdpkit's relation names."""
    return getattr(privacy_accountant.NeighboringRelation, _RELATION_NAMES[relation])


# ------------------------------------------------------------------------- one phase
def _poisson_step(sigma: float, q: float, relation: str, d: float):
    return gaussian_pld(sigma, 1.0, q, d, relation)


def _truncated_step(m: DPSGD, ph: Phase, d: float):
    """dp_accounting 0.6.0's ``from_truncated_subsampled_gaussian_mechanism``, its two
    Gaussian steps built natively: the mixture, with the truncation probability
    t = P[Bin(n - 1, q) >= B], of the sampled Gaussian and a replace-one sampled Gaussian of
    noise sigma / 2 and sampling probability P[Bin(n, q) > B] B / (t n)."""
    from scipy import stats

    n, q, b, s = m.dataset_size, ph.sample_rate, ph.max_batch_size, ph.noise_multiplier
    if not native_steps():
        return pldlib.from_truncated_subsampled_gaussian_mechanism(
            dataset_size=n, sampling_probability=q, truncated_batch_size=b, noise_multiplier=step_sigma(s, 1.0),
            value_discretization_interval=d, use_connect_dots=True,
            neighboring_relation=_neighbour(m.relation))
    sens_1 = _poisson_step(s, q, m.relation, d)
    t = float(stats.binom.sf(b - 1, n - 1, q))
    if t == 0.0:
        return sens_1
    q2 = float(stats.binom.sf(b, n, q)) * b / t / n
    sens_2 = gaussian_pld(s / 2, 1.0, q2, d, "replace-one")
    if t == 1.0:
        return sens_2
    from fdpkit.accounting import _pld_adapter as adapter

    r1, a1 = adapter.pmf_arrays(sens_1)
    (r2, _) = adapter.pmf_arrays(sens_2)
    remove = single_step.mixture(r2, r1, t)
    if a1 is None:
        return adapter.pld_from_arrays(remove)
    return adapter.pld_from_arrays(remove, single_step.mixture(r2, a1, t))


def fixed_size_step_curve(sigma: float, q: float, relation: str, d: float) -> PiecewiseLinearCurve:
    """Certified curve of one fixed-size step: C_q(G_{Delta/sigma}) (Eq. 4.2 above)."""
    delta = FIXED_SIZE_SENSITIVITY  # every relation: see the module docs (not SENSITIVITY[relation])
    return _curve.curve_from_pld(gaussian_pld(sigma, delta, q, d))


def _phase_pld(m: DPSGD, ph: Phase, d: float):
    s = ph.noise_multiplier
    if m.sampling == "poisson":
        step = _poisson_step(s, ph.sample_rate, m.relation, d)
    elif m.sampling == "truncated-poisson":
        step = _truncated_step(m, ph, d)
    elif m.sampling == "fixed-size":
        step = pld_from_curve(fixed_size_step_curve(s, ph.sample_rate, m.relation, d), d)
    else:  # shuffled: P Gaussians of sensitivity Delta (no amplification)
        step = gaussian_pld(s, m.sensitivity, 1.0, d)
        return step, ph.participations
    return step, ph.steps


def dpsgd_pld(m: DPSGD, discretization: float):
    """The pessimistic PLD of an example-level (or user-sampled) DP-SGD run."""
    if m.examples_per_user is not None:
        raise ValueError("examples_per_user (group privacy) applies to a whole DP-SGD run, not to a "
                         "part of a composed mechanism: account the DP-SGD run on its own")
    # every phase's single step with its count, composed in one round-off-bounded pass
    # (fdpkit.accounting.tilted: never optimistic, no collapse at large step counts)
    # full-batch phases (q = 1) are the Gaussian mechanism: all of them together are one
    # exact Gaussian step (fdpkit.accounting.curve.full_batch_gaussian), not T numeric steps
    full = _curve.full_batch_phases(m)
    rest = [ph for ph in m.phases if not any(ph is f for f in full)]
    gaussian = _curve.full_batch_gaussian(m, full) if full else None
    if not rest:
        return build_pld(gaussian, discretization)
    if gaussian is None and len(rest) == 1 and _phase_count(m, rest[0]) == 1:
        return compose_plds([_phase_pld(m, rest[0], discretization)])
    # the single steps are built once per (scheme, relation, sigma, q, ...) while
    # fdpkit.accounting.shared_single_steps is active (a sweep over step counts)
    parts = [(shared_step_arrays(_step_key(m, ph, discretization),
                                 lambda ph=ph: _phase_pld(m, ph, discretization)[0]),
              _phase_count(m, ph)) for ph in rest]
    if gaussian is not None:
        parts.append((shared_step_arrays(("gaussian-step", gaussian, float(discretization)),
                                         lambda: build_pld(gaussian, discretization)), 1))
    return compose_arrays(parts)


def _phase_count(m: DPSGD, ph: Phase) -> int:
    return ph.participations if m.sampling == "shuffled" else ph.steps


def _step_key(m: DPSGD, ph: Phase, d: float) -> tuple:
    """Everything one single step of phase ``ph`` depends on (not its step count)."""
    return ("dpsgd-step", m.sampling, m.relation, m.sensitivity, ph.noise_multiplier, ph.sample_rate,
            m.dataset_size if m.sampling == "truncated-poisson" else None, ph.max_batch_size, float(d))


def shuffled_mu(m: DPSGD) -> float:
    """mu = Delta sqrt(sum_phases P / sigma^2) of shuffled batches (no amplification)."""
    # a hypotenuse of sqrt(P) / sigma, never a square of sigma (sigma = 1e-200 or 1e200)
    mu = m.sensitivity * math.hypot(*(math.sqrt(ph.participations) / ph.noise_multiplier for ph in m.phases))
    if not math.isfinite(mu):
        raise ValueError(f"noise_multiplier={min(ph.noise_multiplier for ph in m.phases)!r} is too small: "
                         "mu = sqrt(P) x sensitivity / noise_multiplier leaves float range")
    return mu


# ----------------------------------------------------------------------------- account
def account_dpsgd(m: DPSGD, discretization: float) -> _curve.Accounting:
    """Account a DP-SGD run (see the module docs); group privacy applied last."""
    k = m.examples_per_user or 1
    if m.sampling == "shuffled":
        return _curve.Accounting(m, GaussianCurve(k * shuffled_mu(m)), "closed form", None)
    exact = _curve.closed_form_curve(m)  # full batches (q = 1) in every phase: G_mu exactly
    if exact is not None:
        return _curve.Accounting(m, exact, "closed form", None)
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


def account(mechanism: Mechanism, *, discretization: float = _curve.DISCRETIZATION_DEFAULT,
            budget: Any = None) -> _curve.Accounting:
    """Account ``mechanism``: :func:`fdpkit.accounting.curve.account`, plus every DP-SGD
    sampling scheme, relation and privacy unit.

    >>> from fdpkit.mechanisms import dpsgd
    >>> account(dpsgd(2.0, batch_size=10, dataset_size=100, steps=4, sampling="shuffled",
    ...               relation="replace-one")).curve
    GaussianCurve(mu=1.0)
    """
    if isinstance(mechanism, DPSGD):
        d = _curve._check_discretization(discretization)
        from fdpkit.accounting.cost import check_leaf_grids, estimate_cost

        if budget is not None:
            estimate_cost(mechanism, d).check(budget)
        elif _curve.closed_form_curve(mechanism) is None and mechanism.sampling != "shuffled":
            check_leaf_grids(mechanism, d)  # no budget: still refuse a step beyond the memory
        return account_dpsgd(mechanism, d)
    return _curve.account(mechanism, discretization=discretization, budget=budget)


def tradeoff_curve(mechanism: Mechanism, *, discretization: float = _curve.DISCRETIZATION_DEFAULT,
                   budget: Any = None) -> TradeOffCurve:
    """The certified trade-off curve of ``mechanism`` (see :func:`account`)."""
    return account(mechanism, discretization=discretization, budget=budget).curve


__all__ = ["account", "account_dpsgd", "dpsgd_pld", "poisson_comparison", "shuffled_mu",
           "tradeoff_curve", "fixed_size_step_curve"]
