"""Mechanism value objects -> dp_accounting privacy loss distributions.

Single steps: dp_accounting's pessimistic estimates and connect-the-dots discretisation
(Doroshenko et al. 2022), add-or-remove adjacency, so that every delta(eps) the PLD reports
is an upper bound on the mechanism's true delta(eps). Compositions (``Repeated``,
``Composed``, nested in any way) are flattened into distinct single steps with their
multiplicities and composed by :mod:`fdpkit.accounting.tilted` (round-off bounded by
construction, never optimistic; one pass per adjacency direction for all factors), not by
dp_accounting's ``self_compose``/``compose``, whose FFT round-off and total masses above 1
break the curve at large step counts (issue 11). The result is returned as a
dp_accounting ``PrivacyLossDistribution`` built from the composed arrays.
"""

from __future__ import annotations

import contextlib
from typing import Iterator

from dp_accounting.pld import common, privacy_loss_distribution as pldlib

from fdpkit.accounting import _pld_adapter as _adapter
from fdpkit.accounting import tilted
from fdpkit.accounting.from_curve import pld_from_curve
from fdpkit.curves import PiecewiseLinearCurve, UniformSamplingCurve
from fdpkit.mechanisms import (
    DPSGD,
    ApproxDP,
    Composed,
    CurveMechanism,
    Gaussian,
    Laplace,
    Mechanism,
    PureDP,
    RandomizedResponse,
    Repeated,
    Subsampled,
    UniformSampling,
)

#: Tail mass dp_accounting may truncate in each composition; pessimistic mode moves it to
#: the infinite loss (right tail) or the lowest loss (left tail).
TAIL_MASS_TRUNCATION = 1e-15

#: While :func:`shared_single_steps` is active: (single-step mechanism, discretization) ->
#: its PMF arrays, so that accounting several step counts of one mechanism builds the
#: single step once (the arrays are never modified).
_SHARED: dict | None = None


@contextlib.contextmanager
def shared_single_steps(store: dict | None = None) -> Iterator[None]:
    """Reuse single-step PMFs across the compositions accounted inside the block (a sweep
    over step counts of one DP-SGD setting builds its subsampled Gaussian once). The
    numbers are identical to accounting each mechanism alone; the cache ends with the block,
    unless the caller passes its own ``store`` (a dict it keeps, e.g. an accountant asked
    every epoch: the next block reuses what this one built).
    """
    global _SHARED
    outer = _SHARED
    if outer is None:
        _SHARED = {} if store is None else store
    try:
        yield
    finally:
        if outer is None:
            _SHARED = None


class _PhaseStep(tuple):
    """One single step of phase ``i`` of a DP-SGD run (a hashable key)."""

    def __new__(cls, run, i: int):
        return super().__new__(cls, (run, i))

    def build(self, discretization: float):
        from fdpkit.accounting.dpsgd import _phase_pld

        run, i = self
        return _phase_pld(run, run.phases[i], discretization)[0]


def _phase_count(run, phase) -> int:
    return phase.participations if run.sampling == "shuffled" else phase.steps


def _single_step_pld(step, discretization: float):
    return step.build(discretization) if isinstance(step, _PhaseStep) else build_pld(step, discretization)


def shared_step_arrays(key, build):
    """The PMF arrays of one single step: ``_adapter.pmf_arrays(build())``, built once per
    hashable ``key`` while :func:`shared_single_steps` is active (the key must identify the
    single step and its discretization completely; the arrays are never modified)."""
    if _SHARED is None:
        return _adapter.pmf_arrays(build())
    if key not in _SHARED:
        arrays = _adapter.pmf_arrays(build())
        for a in arrays:
            if a is not None:  # shared: any later in-place change would be a bug, and raises
                a.losses.flags.writeable = False
                a.probs.flags.writeable = False
        _SHARED[key] = arrays
    return _SHARED[key]


def _single_step_arrays(mechanism: Mechanism, discretization: float):
    if _SHARED is None:
        return _adapter.pmf_arrays(_single_step_pld(mechanism, discretization))
    key = (mechanism, discretization)
    try:
        hash(key)
    except TypeError:  # a mechanism holding an unhashable value: no sharing
        return _adapter.pmf_arrays(_single_step_pld(mechanism, discretization))
    if key not in _SHARED:
        _SHARED[key] = _adapter.pmf_arrays(_single_step_pld(mechanism, discretization))
    return _SHARED[key]


def build_pld(mechanism: Mechanism, discretization: float):
    """The pessimistic PLD of ``mechanism`` at ``discretization`` (value_discretization_interval)."""
    if isinstance(mechanism, DPSGD):
        from fdpkit.accounting.dpsgd import dpsgd_pld

        return dpsgd_pld(mechanism, discretization)
    if isinstance(mechanism, Gaussian):
        return pldlib.from_gaussian_mechanism(
            mechanism.sigma, sensitivity=mechanism.sensitivity, pessimistic_estimate=True,
            value_discretization_interval=discretization, use_connect_dots=True,
        )
    if isinstance(mechanism, Laplace):
        return pldlib.from_laplace_mechanism(
            mechanism.scale, sensitivity=mechanism.sensitivity, pessimistic_estimate=True,
            value_discretization_interval=discretization, use_connect_dots=True,
        )
    if isinstance(mechanism, (PureDP, RandomizedResponse)):
        params = common.DifferentialPrivacyParameters(mechanism.epsilon, 0.0)
        return pldlib.from_privacy_parameters(params, value_discretization_interval=discretization)
    if isinstance(mechanism, ApproxDP):
        params = common.DifferentialPrivacyParameters(mechanism.epsilon, mechanism.delta)
        return pldlib.from_privacy_parameters(params, value_discretization_interval=discretization)
    if isinstance(mechanism, CurveMechanism):
        curve = PiecewiseLinearCurve.from_tpr(mechanism.alpha, mechanism.tpr, mechanism.bound)
        return pld_from_curve(curve, discretization)
    if isinstance(mechanism, UniformSampling):
        return pld_from_curve(UniformSamplingCurve(mechanism.mu, mechanism.n), discretization)
    if isinstance(mechanism, Subsampled):
        inner, q = mechanism.inner, mechanism.sample_rate
        if q == 1.0:
            return build_pld(inner, discretization)
        if isinstance(inner, Gaussian):
            return pldlib.from_gaussian_mechanism(
                inner.sigma, sensitivity=inner.sensitivity, pessimistic_estimate=True,
                value_discretization_interval=discretization, sampling_prob=q,
                use_connect_dots=True,
            )
        if isinstance(inner, Laplace):
            return pldlib.from_laplace_mechanism(
                inner.scale, sensitivity=inner.sensitivity, pessimistic_estimate=True,
                value_discretization_interval=discretization, sampling_prob=q,
                use_connect_dots=True,
            )
        raise ValueError(
            "subsampling is supported for Gaussian and Laplace inner mechanisms, got "
            f"{type(inner).__name__}"
        )
    if isinstance(mechanism, (Repeated, Composed)):
        return _compose(_flatten(mechanism), discretization)
    raise ValueError(f"mechanism must be an fdpkit mechanism, got {type(mechanism).__name__}")


def _flatten(mechanism: Mechanism, times: int = 1, out: list | None = None) -> list:
    """[(single-step mechanism, multiplicity)], equal steps merged, in first-seen order."""
    out = [] if out is None else out
    if isinstance(mechanism, Repeated):
        return _flatten(mechanism.inner, times * mechanism.times, out)
    if isinstance(mechanism, Composed):
        for part in mechanism.parts:
            _flatten(part, times, out)
        return out
    if isinstance(mechanism, Subsampled) and mechanism.sample_rate == 1.0:
        return _flatten(mechanism.inner, times, out)
    if isinstance(mechanism, DPSGD) and mechanism.examples_per_user is None:
        # a DP-SGD run is its phases' single steps: composed in the same single pass (an
        # already composed PMF keeps only its non-negative losses and must not be composed again)
        for i, ph in enumerate(mechanism.phases):
            _append(out, _PhaseStep(mechanism, i), times * _phase_count(mechanism, ph))
        return out
    _append(out, mechanism, times)
    return out


def _append(out: list, step, times: int) -> None:
    for i, (m, t) in enumerate(out):
        if m == step:
            out[i] = (m, t + times)
            return
    out.append((step, times))


def _compose(steps: list, discretization: float):
    """The composition of ``steps`` [(mechanism, times)] as a PLD (see module docs)."""
    if len(steps) == 1 and steps[0][1] == 1:
        return _single_step_pld(steps[0][0], discretization)
    return compose_arrays([(_single_step_arrays(m, discretization), t) for m, t in steps])


def build_pld_for_composition(mechanism: Mechanism, discretization: float):
    """The pessimistic PLD of ``mechanism`` with its whole loss range, for callers that compose
    it again with other PLDs (the ledger's running total): its single steps are composed by
    dp_accounting (``self_compose``/``compose``, pessimistic rounding), because the
    round-off-bounded output of :func:`build_pld` keeps only the non-negative losses, which
    is all a privacy profile or curve reads but not enough to compose with."""
    steps = _flatten(mechanism)
    out = None
    for step, times in steps:
        p = _single_step_pld(step, discretization)
        if times > 1:
            p = _adapter.self_compose(p, times, TAIL_MASS_TRUNCATION)
        out = p if out is None else _adapter.compose(out, p, TAIL_MASS_TRUNCATION)
    return out


def compose_plds(steps: list):
    """The composition of ``steps`` [(single-step PLD, times)] built elsewhere (DP-SGD's
    sampling schemes), by the same round-off-bounded composition as :func:`build_pld`."""
    if len(steps) == 1 and steps[0][1] == 1:
        return steps[0][0]
    return compose_arrays([(_adapter.pmf_arrays(p), t) for p, t in steps])


def compose_arrays(arrays: list):
    """[((remove, add or None), times)] -> the composed PLD (:mod:`fdpkit.accounting.tilted`)."""
    remove = [(r, t) for (r, _), t in arrays]
    if all(a is None for (_, a), _ in arrays):
        return _adapter.pld_from_arrays(tilted.compose(remove))
    add = [(r if a is None else a, t) for (r, a), t in arrays]
    out_remove, out_add = _adapter._both(lambda: tilted.compose(remove), lambda: tilted.compose(add),
                                         threads=tilted.threads_pay(remove, add))
    return _adapter.pld_from_arrays(out_remove, out_add)
