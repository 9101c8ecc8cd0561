"""Mechanism value objects -> dp_accounting privacy loss distributions (public API only).

Pessimistic estimates and connect-the-dots discretisation throughout (Doroshenko et al.
2022), add-or-remove adjacency, so that every delta(eps) the PLD reports is an upper bound
on the mechanism's true delta(eps).
"""

from __future__ import annotations

from dp_accounting import dp_event  # noqa: F401  (kept for future event-based accounting)
from dp_accounting.pld import common, privacy_loss_distribution as pldlib

from fdpkit.accounting import _pld_adapter as _adapter
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
    if isinstance(mechanism, Repeated):
        return _adapter.self_compose(
            build_pld(mechanism.inner, discretization), mechanism.times, TAIL_MASS_TRUNCATION
        )
    if isinstance(mechanism, Composed):
        plds = [build_pld(p, discretization) for p in mechanism.parts]
        out = plds[0]
        for p in plds[1:]:
            out = _adapter.compose(out, p, TAIL_MASS_TRUNCATION)
        return out
    raise ValueError(f"mechanism must be an fdpkit mechanism, got {type(mechanism).__name__}")
