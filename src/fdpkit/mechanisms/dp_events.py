r"""dp_accounting's ``DpEvent``\ s as fdpkit mechanisms (no accounting here).

dp_accounting, jax_privacy and TF Privacy describe what ran as a tree of ``DpEvent``\ s.
:func:`from_dp_event` turns that tree into fdpkit's mechanisms, so the same description
gets a certified trade-off curve, mu with its regret and attack-risk readings. It reads
the events by class name and attribute (duck typing), so it accepts

- the event objects themselves (``dp_accounting.GaussianDpEvent(1.0)``),
- their named-tuple form (``event.to_named_tuple()``, dp_accounting's serialisation), and
- that named tuple as JSON: a dict with ``"class_name"`` and the event's fields (nested
  events as nested dicts), as ``json.dumps`` writes ``to_named_tuple()._asdict()``
  recursively (:func:`dp_event_to_dict`).

The relation is dp_accounting's default, add-remove one record. Mapping (each row is
exact unless it says "bound"; a bound is always pessimistic):

    NoOp                                  PureDP(0)  (the identity curve, mu = 0)
    NonPrivate, noise 0                   ApproxDP(0, 1): f = 0, mu = inf ("the output may
                                          reveal the record with certainty")
    Gaussian(s)                           Gaussian(sigma=s)  (sensitivity 1)
    Laplace(b)                            Laplace(scale=b)
    DiscreteLaplace(a, D)                 D = 1: RandomizedResponse(a) (its loss is +-a,
                                          the curve of binary RR); D > 1: PureDP(a D), a bound
    RandomizedResponse(p, k)              RandomizedResponse(log(1 + k (1 - p) / p)): binary
                                          RR at the same pure epsilon, a bound for k > 2
    PoissonSampled(q, E)                  Subsampled(E, q)
    TruncatedSubsampledGaussian           dpsgd(..., sampling="truncated-poisson"), 1 step
    SelfComposed(E, n)                    Repeated(E, n)
    Composed([E1, ...])                   Composed((E1, ...))
    ZCDp(rho, xi)                         ZCDP(rho) if xi = 0, else RDP(t, xi + rho t) on
                                          orders 1.25 ... 256
    MixtureOfGaussians(s, c, p)           one nonzero sensitivity c with probability q:
                                          Subsampled(Gaussian(s / c), q) (add-remove, both
                                          directions: a bound); other mixtures refused
    SampledWithoutReplacement             refused: dp_accounting's RDP accountant analyses
                                          it under replace-one only (its PLD accountant not
                                          at all); fdpkit's add/remove subsampling does not
                                          apply
    anything else                         ValueError naming the event type

The other way, :func:`to_dp_event` writes a mechanism as a DpEvent's JSON dict where an event
means exactly the same thing under add-remove (Gaussian, Laplace, Poisson subsampling,
repetition, composition, zCDP, and DP-SGD with Poisson sampling under add-remove as
``SelfComposed(PoissonSampled(q, Gaussian(sigma)), T)`` per phase); anything else is refused
rather than written as an event that would read as more private.
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction
from typing import Any, Mapping

import numpy as np

from fdpkit.mechanisms.base import MAX_SPEC_DEPTH, MAX_SPEC_NODES, Mechanism
from fdpkit.errors import ParameterError
from fdpkit.mechanisms.basic import ApproxDP, Gaussian, Laplace, PureDP, RandomizedResponse
from fdpkit.mechanisms.combinators import Composed, Repeated, Subsampled
from fdpkit.mechanisms.renyi_guarantees import RDP, ZCDP
from fdpkit.mechanisms.training import DPSGD, dpsgd

#: Rényi orders for (xi, rho)-zCDP events with xi > 0.
XI_ORDERS = (1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0, 16.0, 20.0, 24.0, 32.0,
             48.0, 64.0, 128.0, 256.0)
#: Largest pure epsilon fdpkit's pure mechanisms take (beyond it: no privacy to speak of).
EPSILON_MAX = 100.0
SUPPORTED = ("NoOpDpEvent", "NonPrivateDpEvent", "GaussianDpEvent", "LaplaceDpEvent",
             "DiscreteLaplaceDpEvent", "RandomizedResponseDpEvent", "PoissonSampledDpEvent",
             "TruncatedSubsampledGaussianDpEvent", "SelfComposedDpEvent", "ComposedDpEvent",
             "ZCDpEvent", "MixtureOfGaussiansDpEvent")


def _no_op() -> Mechanism:
    return PureDP(0.0)


def _non_private() -> Mechanism:
    return ApproxDP(0.0, 1.0)


def _class_name(event: Any) -> str:
    if isinstance(event, Mapping):
        name = event.get("class_name")
        if not isinstance(name, str):
            raise ParameterError(f"event must be a DpEvent, its named tuple or a dict with 'class_name', got "
                                 f"a dict with keys {sorted(map(str, event))}", "event")
        return name
    name = getattr(event, "class_name", None)  # dp_accounting's named-tuple form
    if isinstance(name, bytes):
        name = name.decode()
    return name if isinstance(name, str) else type(event).__name__


def _get(event: Any, field: str, path: str) -> Any:
    if isinstance(event, Mapping):
        if field not in event:
            raise ParameterError(f"{path}: {_class_name(event)} needs the field {field!r}", "event")
        return event[field]
    if not hasattr(event, field):
        raise ParameterError(f"{path}: {_class_name(event)} needs the field {field!r}", "event")
    return getattr(event, field)


def _real(event: Any, field: str, path: str, *, low: float = 0.0, high: float = math.inf) -> float:
    v = _get(event, field, path)
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real) or math.isnan(float(v)):
        raise ParameterError(f"{path}.{field} must be a number, got {v!r}", "event")
    v = float(v)
    if not low <= v <= high:
        raise ParameterError(f"{path}.{field} must be in [{low:g}, {high:g}], got {v!r}", "event")
    return v


def _count(event: Any, field: str, path: str) -> int:
    v = _get(event, field, path)
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real) or not math.isfinite(float(v)) \
            or v != int(v) or v < 0:
        raise ParameterError(f"{path}.{field} must be a whole number >= 0, got {v!r}", "event")
    return int(v)


def _is_no_op(m: Mechanism) -> bool:
    return isinstance(m, PureDP) and m.epsilon == 0.0


def _pure(epsilon: float) -> Mechanism:
    if epsilon == 0.0:
        return _no_op()
    return _non_private() if epsilon > EPSILON_MAX else PureDP(epsilon)


def _convert(event: Any, path: str, depth: int = 0, count: list | None = None) -> Mechanism:
    count = [0] if count is None else count
    count[0] += 1
    if depth > MAX_SPEC_DEPTH:
        raise ParameterError(f"event is nested more than {MAX_SPEC_DEPTH} levels deep", "event")
    if count[0] > MAX_SPEC_NODES:
        raise ParameterError(f"event has more than {MAX_SPEC_NODES:,} parts", "event")
    name = _class_name(event)
    if name == "NoOpDpEvent":
        return _no_op()
    if name == "NonPrivateDpEvent":
        return _non_private()
    if name == "GaussianDpEvent":
        s = _real(event, "noise_multiplier", path, high=math.inf)
        return _non_private() if s == 0 else _no_op() if math.isinf(s) else Gaussian(s)
    if name == "LaplaceDpEvent":
        b = _real(event, "noise_multiplier", path)
        return _non_private() if b == 0 else _no_op() if math.isinf(b) else Laplace(b)
    if name == "DiscreteLaplaceDpEvent":
        a = _real(event, "noise_parameter", path)
        d = _count(event, "sensitivity", path)
        if d == 0:
            return _no_op()
        if a == 0:
            return _non_private()
        eps = a * d
        if d == 1 and 0 < eps <= EPSILON_MAX:
            return RandomizedResponse(eps)
        return _pure(eps)
    if name == "RandomizedResponseDpEvent":
        p = _real(event, "noise_parameter", path, high=1.0)
        k = _count(event, "num_buckets", path)
        if k < 1:
            raise ParameterError(f"{path}.num_buckets must be >= 1, got {k}", "event")
        if k == 1 or p == 1.0:
            return _no_op()
        if p == 0.0:
            return _non_private()
        eps = math.log1p(k * (1.0 - p) / p)
        return RandomizedResponse(eps) if eps <= EPSILON_MAX else _non_private()
    if name == "PoissonSampledDpEvent":
        q = _real(event, "sampling_probability", path, high=1.0)
        inner = _convert(_get(event, "event", path), f"{path}.event", depth + 1, count)
        if q == 0.0 or _is_no_op(inner):
            return _no_op()
        return inner if q == 1.0 else Subsampled(inner, q)
    if name == "TruncatedSubsampledGaussianDpEvent":
        n = _count(event, "dataset_size", path)
        q = _real(event, "sampling_probability", path, high=1.0)
        b = _count(event, "truncated_batch_size", path)
        s = _real(event, "noise_multiplier", path)
        if n == 0 or b == 0 or q == 0.0:
            return _no_op()
        if s == 0:
            return _non_private()
        return dpsgd(s, q, 1, sampling="truncated-poisson", max_batch_size=min(b, n), dataset_size=n)
    if name == "SelfComposedDpEvent":
        inner = _convert(_get(event, "event", path), f"{path}.event", depth + 1, count)
        n = _count(event, "count", path)
        if n == 0 or _is_no_op(inner):
            return _no_op()
        try:
            return inner if n == 1 else Repeated(inner, n)
        except ValueError as exc:  # Repeated's "times" is this event's count
            message = str(exc)
            raise ParameterError(f"{path}.count{message[5:]}" if message.startswith("times") else message, "event") from None
    if name == "ComposedDpEvent":
        events = _get(event, "events", path)
        if isinstance(events, (str, bytes, Mapping)) or not hasattr(events, "__iter__"):
            raise ParameterError(f"{path}.events must be a list of events, got {events!r}", "event")
        parts = [_convert(e, f"{path}.events[{i}]", depth + 1, count) for i, e in enumerate(events)]
        parts = [m for m in parts if not _is_no_op(m)]
        if not parts:
            return _no_op()
        return parts[0] if len(parts) == 1 else Composed(tuple(parts))
    if name == "ZCDpEvent":
        rho = _real(event, "rho", path)
        xi = _real(event, "xi", path) if (isinstance(event, Mapping) and "xi" in event) or \
            (not isinstance(event, Mapping) and hasattr(event, "xi")) else 0.0
        if xi == 0.0:
            return _no_op() if rho == 0.0 else ZCDP(rho)
        return RDP(XI_ORDERS, tuple(xi + rho * t for t in XI_ORDERS))
    if name == "MixtureOfGaussiansDpEvent":
        s = _real(event, "standard_deviation", path)
        cs = [float(c) for c in _get(event, "sensitivities", path)]
        ps = [float(p) for p in _get(event, "sampling_probs", path)]
        if len(cs) != len(ps) or not cs:
            raise ParameterError(f"{path}: sensitivities and sampling_probs must be non-empty and of one "
                                 f"length, got {len(cs)} and {len(ps)}", "event")
        if any(p < 0 for p in ps) or not math.isclose(sum(ps), 1.0, rel_tol=1e-9):
            raise ParameterError(f"{path}.sampling_probs must be probabilities summing to 1, got {ps!r}", "event")
        mass: dict[float, float] = {}
        for c, p in zip(cs, ps):
            if p > 0:
                mass[abs(c)] = mass.get(abs(c), 0.0) + p
        nonzero = [c for c in mass if c != 0.0]
        if not nonzero:
            return _no_op()
        if s == 0:
            return _non_private()
        if len(nonzero) > 1:
            raise ParameterError(f"{path}: MixtureOfGaussiansDpEvent with several nonzero sensitivities "
                                 f"{sorted(nonzero)} is not supported (fdpkit analyses one nonzero "
                                 "sensitivity: a Poisson subsampled Gaussian)", "event")
        c = nonzero[0]
        q = min(1.0, mass[c])
        return Gaussian(s / c) if q >= 1.0 else Subsampled(Gaussian(s / c), q)
    if name == "SampledWithoutReplacementDpEvent":
        raise ParameterError(f"{path}: SampledWithoutReplacementDpEvent is analysed only under replace-one "
                             "(dp_accounting's RDP accountant; its PLD accountant refuses it); fdpkit reads events under "
                             "add-remove, where sampling without replacement has no sound subsampling "
                             "theorem. For DP-SGD with fixed-size batches use "
                             "fdpkit.dpsgd(..., sampling='fixed-size', relation='replace-one')", "event")
    raise ParameterError(f"{path}: unsupported DpEvent type {name!r}; fdpkit reads "
                         f"{', '.join(SUPPORTED)}", "event")


def from_dp_event(event: Any) -> Mechanism:
    """An fdpkit mechanism from a dp_accounting ``DpEvent`` (object, named tuple or its
    JSON dict), under add-remove; see the module docs for the mapping.

    Raises
    ------
    ValueError
        Naming the unsupported event type (and where in the tree it sits), or a bad field.

    Examples
    --------
    >>> from_dp_event({"class_name": "SelfComposedDpEvent", "count": 4,
    ...                "event": {"class_name": "GaussianDpEvent", "noise_multiplier": 2.0}})
    Repeated(inner=Gaussian(sigma=2.0, sensitivity=1.0), times=4)
    >>> from_dp_event({"class_name": "SingleEpochTreeAggregationDpEvent"})
    Traceback (most recent call last):
    ...
    fdpkit.errors.ParameterError: event: unsupported DpEvent type 'SingleEpochTreeAggregationDpEvent'; fdpkit reads ...
    """
    return _convert(event, "event")


def dp_event_to_dict(event: Any) -> dict:
    """The JSON form of a DpEvent: its ``to_named_tuple()`` as nested dicts."""
    nt = event.to_named_tuple() if hasattr(event, "to_named_tuple") else event

    def plain(v: Any) -> Any:
        if hasattr(v, "_asdict"):
            return {k: plain(x) for k, x in v._asdict().items()}
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        if isinstance(v, bytes):
            return v.decode()
        return v

    if not hasattr(nt, "_asdict"):
        raise ParameterError(f"event must be a DpEvent or its named tuple, got {type(event).__name__}", "event")
    return plain(nt)


def _ratio_down(noise: float, sensitivity: float) -> float:
    """noise / sensitivity rounded down (a smaller noise multiplier: never more private)."""
    r = noise / sensitivity
    if sensitivity != 1.0 and Fraction(r) > Fraction(noise) / Fraction(sensitivity):
        r = float(np.nextafter(r, 0.0))
    return r


def _event(class_name: str, **fields: Any) -> dict:
    return {"module_name": "dp_accounting.dp_event", "class_name": class_name, **fields}


def _dpsgd_event(m: DPSGD, path: str) -> dict:
    if m.sampling != "poisson" or m.relation != "add-remove" or m.examples_per_user is not None:
        what = (f"examples_per_user={m.examples_per_user}" if m.examples_per_user is not None
                else f"sampling={m.sampling!r}, relation={m.relation!r}")
        raise ParameterError(f"{path}: DP-SGD with {what} has no DpEvent of the same meaning (a DpEvent reads as "
                             "Poisson sampling under add-remove, which would understate this run's privacy loss)",
                             "mechanism")
    phases = [_event("SelfComposedDpEvent", count=p.steps,
                     event=_event("PoissonSampledDpEvent", sampling_probability=p.sample_rate,
                                  event=_event("GaussianDpEvent", noise_multiplier=p.noise_multiplier)))
              for p in m.phases]
    return phases[0] if len(phases) == 1 else _event("ComposedDpEvent", events=phases)


def _to_event(m: Any, path: str, depth: int) -> dict:
    if depth > MAX_SPEC_DEPTH:
        raise ParameterError(f"mechanism is nested more than {MAX_SPEC_DEPTH} levels deep", "mechanism")
    if isinstance(m, Gaussian):
        return _event("GaussianDpEvent", noise_multiplier=_ratio_down(m.sigma, m.sensitivity))
    if isinstance(m, Laplace):
        return _event("LaplaceDpEvent", noise_multiplier=_ratio_down(m.scale, m.sensitivity))
    if isinstance(m, PureDP) and m.epsilon == 0:
        return _event("NoOpDpEvent")
    if isinstance(m, ZCDP):
        return _event("ZCDpEvent", rho=m.rho, xi=0.0)
    if isinstance(m, Subsampled):
        return _event("PoissonSampledDpEvent", sampling_probability=m.sample_rate,
                      event=_to_event(m.inner, f"{path}.inner", depth + 1))
    if isinstance(m, Repeated):
        return _event("SelfComposedDpEvent", event=_to_event(m.inner, f"{path}.inner", depth + 1), count=m.times)
    if isinstance(m, Composed):
        return _event("ComposedDpEvent",
                      events=[_to_event(p, f"{path}.parts[{i}]", depth + 1) for i, p in enumerate(m.parts)])
    if not isinstance(m, Mechanism):
        raise ParameterError(f"mechanism must be an fdpkit mechanism, got {type(m).__name__}", "mechanism")
    run = m.training_run()  # a training run asks the mechanism (issue 23), no type check
    if run is not None:
        return _dpsgd_event(run, path)
    raise ParameterError(f"{path}: {type(m).__name__} has no DpEvent of the same meaning (dp_accounting's events "
                         "describe Gaussian, Laplace, Poisson subsampling, repetition, composition, zCDP and "
                         "Poisson DP-SGD under add-remove; another event would read as more private)", "mechanism")


def to_dp_event(mechanism: Any) -> dict:
    """The DpEvent of ``mechanism`` in its JSON form (as :func:`dp_event_to_dict` writes a
    dp_accounting event), where an event means exactly the same thing under add-remove.

    The inverse of :func:`from_dp_event` up to the form of the tree (DP-SGD comes back as
    repeated subsampled Gaussian steps, with the same curve). :func:`from_dp_event`,
    ``fdpkit report --mechanism FILE`` and the web API read the dict; dp_accounting builds
    its event from it class by class (``getattr(dp_event, d["class_name"])(**fields)``).

    Parameters
    ----------
    mechanism : Mechanism
        ``Gaussian``, ``Laplace``, ``PureDP(0)`` (the NoOp event), ``ZCDP``, ``Subsampled``,
        ``Repeated``, ``Composed`` of these, or DP-SGD with Poisson sampling under add-remove
        (``SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(sigma)), T)``, one per
        phase, composed; Abadi et al. 2016, Alg. 1).

    Raises
    ------
    fdpkit.errors.ParameterError
        (``mechanism``) for a mechanism no event describes exactly: DP-SGD with other
        sampling or relation, user-level group privacy, pure or approximate DP, curves, RDP.

    Examples
    --------
    >>> ev = to_dp_event(dpsgd(1.0, 0.01, 100))
    >>> ev["class_name"], ev["count"], ev["event"]["sampling_probability"]
    ('SelfComposedDpEvent', 100, 0.01)
    >>> from_dp_event(ev)
    Repeated(inner=Subsampled(inner=Gaussian(sigma=1.0, sensitivity=1.0), sample_rate=0.01), times=100)
    """
    return _to_event(mechanism, "mechanism", 0)
