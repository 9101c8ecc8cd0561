"""Mechanism value objects: frozen descriptions of what ran, with no algorithm inside
(in the spirit of dp_accounting's ``dp_event.py``). They serialise to and from plain
dicts/JSON so that the CLI, reports and the web calculator can read them."""

from __future__ import annotations

import json
import sys
from dataclasses import MISSING, dataclass, fields
from typing import Any, ClassVar

from fdpkit._numerics import _short, check_real
from fdpkit.errors import ParameterError

_REGISTRY: dict[str, type["Mechanism"]] = {}


def _number(name: str, value: Any, *, positive: bool = False, allow_zero: bool = True,
            allow_inf: bool = False, upper: float | None = None) -> float:
    """A mechanism parameter through fdpkit's one numeric validator (no bools, no strings)."""
    return check_real(name, value, low=0.0 if positive else None, low_open=positive and not allow_zero,
                      high=upper, allow_inf=allow_inf, scalar=True) * 1.0


def check_sample_rate_normal(q: float, name: str = "sample_rate") -> None:
    """Refuse a sample rate below the smallest normal float (2.2e-308): its privacy loss
    ln(1 + q (e^l - 1)) cannot be evaluated, and such a rate is zero for every practical
    purpose (a report at q = 1e-300 already shows what the discretization alone costs)."""
    if 0.0 < q < sys.float_info.min:
        raise ParameterError(f"{name} must be at least {sys.float_info.min:.3g} (the smallest normal "
                             f"floating-point number), got {q!r}", name)


@dataclass(frozen=True)
class Mechanism:
    """Base class. Subclasses are frozen dataclasses registered under ``kind``."""

    kind: ClassVar[str] = "mechanism"
    #: Whether the privacy loss of this node is unbounded (Gaussian noise; a Rényi
    #: guarantee bounds no loss either): the report then states no pure-DP epsilon.
    unbounded_loss: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "kind" in cls.__dict__:
            _REGISTRY[cls.kind] = cls

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form: {"kind": ..., parameters...}; nested mechanisms as dicts."""
        out: dict[str, Any] = {"kind": self.kind}
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, Mechanism):
                v = v.to_dict()
            elif isinstance(v, tuple) and v and isinstance(v[0], Mechanism):
                v = [m.to_dict() for m in v]
            out[f.name] = v
        return out

    def to_json(self) -> str:
        """The mechanism spec as JSON text (``mechanism_from_json`` reads it back)."""
        return json.dumps(self.to_dict())

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Mechanism":
        """This kind rebuilt from its spec dict (:meth:`to_dict` output, ``kind`` optional).

        The registry hook: :func:`fdpkit.mechanisms.mechanism_from_dict` looks the ``kind`` up
        among the registered subclasses and calls this. The default reads the dataclass
        fields (nested ``inner``/``parts`` specs parsed in turn); a subclass whose spec is
        not its fields (DP-SGD's training terms) overrides it.

        Examples
        --------
        >>> from fdpkit.mechanisms import Gaussian
        >>> Gaussian.from_dict({"sigma": 2.0})
        Gaussian(sigma=2.0, sensitivity=1.0)
        """
        if cls is Mechanism:
            return _from_dict(data, 0, [0])
        if not isinstance(data, dict):
            raise ParameterError(f"mechanism must be an object, got {type(data).__name__}", "mechanism")
        if data.get("kind", cls.kind) != cls.kind:
            raise ParameterError(f"kind must be {cls.kind!r} for {cls.__name__}, got {data['kind']!r}", "mechanism")
        return _fields_from_dict(cls, data, 0, [1])

    def children(self) -> tuple["Mechanism", ...]:
        """The mechanisms this one is made of (``inner`` or ``parts``; none for a leaf): what
        :func:`fdpkit.mechanisms.walk` descends into."""
        return ()

    def elementary(self) -> "Mechanism | None":
        """The same mechanism in elementary mechanisms (Gaussian, Subsampled, Repeated,
        Composed, ...), or None where it has no such form (DP-SGD overrides this). An
        elementary mechanism is its own elementary form."""
        return self

    def training_run(self) -> "Mechanism | None":
        """This mechanism as a training run (phases of sampled noisy steps with a sampling
        scheme, neighbouring relation, privacy unit and dataset size, as DP-SGD states them),
        or None for every other mechanism. Accounting, reports and statements ask this
        instead of testing the type, so a new kind of training run plugs in by overriding
        it (DP-SGD returns itself)."""
        return None

    def setting(self) -> dict[str, Any] | None:
        """Sampling scheme, neighbouring relation and privacy unit where the mechanism states
        them (DP-SGD does); None for the others (see :func:`fdpkit.guarantee.setting.setting_of`)."""
        return None

    def label(self) -> str:
        """A short name for titles (DP-SGD is recognised); defaults to :meth:`describe`."""
        return self.describe()

    def describe(self) -> str:
        """A one-line human description."""
        params = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in fields(self))
        return f"{type(self).__name__}({params})"


#: Deepest nesting of mechanism specs accepted (``inner``/``parts`` levels), checked while parsing.
MAX_SPEC_DEPTH = 32
#: Most mechanism objects one spec may contain, counted while parsing.
MAX_SPEC_NODES = 10_000


def _from_dict(data: Any, depth: int, count: list) -> Mechanism:
    """A spec (nested ``depth`` levels deep) through its registered class's ``from_dict``;
    ``count`` is the running number of mechanisms parsed (one list shared by the whole spec)."""
    if isinstance(data, Mechanism):
        return data
    if depth > MAX_SPEC_DEPTH:
        raise ParameterError(f"mechanism is nested more than {MAX_SPEC_DEPTH} levels deep", "mechanism")
    count[0] += 1
    if count[0] > MAX_SPEC_NODES:
        raise ParameterError(f"mechanism has more than {MAX_SPEC_NODES:,} parts", "mechanism")
    if not isinstance(data, dict):
        raise ParameterError(f"mechanism must be an object with a 'kind', got {type(data).__name__}", "mechanism")
    kind = data.get("kind")
    cls = _REGISTRY.get(kind) if isinstance(kind, str) else None  # a list or object: no kind (was a TypeError)
    if cls is None:
        known = ", ".join(sorted(_REGISTRY))
        raise ParameterError(f"mechanism kind must be one of {known}, got {_short(kind)}", "mechanism")
    if getattr(cls.from_dict, "__func__", None) is not _FIELDS_FROM_DICT:  # the class reads its own spec
        return cls.from_dict(data)
    return _fields_from_dict(cls, data, depth, count)


def _fields_from_dict(cls: type[Mechanism], data: dict, depth: int, count: list) -> Mechanism:
    """The default :meth:`Mechanism.from_dict`: ``cls`` from its dataclass fields."""
    kind = cls.kind
    names = {f.name for f in fields(cls)}
    extra = set(data) - names - {"kind"}
    if extra:
        raise ParameterError(f"unknown field(s) for {kind!r}: {', '.join(sorted(extra))}", "mechanism")
    kwargs = {k: v for k, v in data.items() if k != "kind"}
    fs = [f for f in fields(cls) if f.init]
    missing = [f.name for f in fs if f.name not in kwargs and f.default is MISSING and f.default_factory is MISSING]
    if missing:  # (cls(**kwargs) said "Gaussian.__init__() missing 1 required positional argument: 'sigma'")
        raise ParameterError(f"mechanism {kind!r} needs {' and '.join(repr(m) for m in missing)} "
                             f"(its fields: {', '.join(f.name for f in fs)})", "mechanism")
    if "inner" in kwargs:
        kwargs["inner"] = _from_dict(kwargs["inner"], depth + 1, count)
    if "parts" in kwargs:
        if not isinstance(kwargs["parts"], (list, tuple)):
            raise ParameterError(f"parts must be a list of mechanisms, got {kwargs['parts']!r}", "mechanism")
        if len(kwargs["parts"]) > MAX_SPEC_NODES:
            raise ParameterError(f"mechanism has more than {MAX_SPEC_NODES:,} parts", "mechanism")
        kwargs["parts"] = tuple(_from_dict(p, depth + 1, count) for p in kwargs["parts"])
    try:
        return cls(**kwargs)
    except TypeError as err:
        if isinstance(err, ValueError):  # a bad value (InputTypeError): its message names the field
            raise
        raise ParameterError(f"invalid fields for {kind!r}: {err}", "mechanism") from None


#: The base class's own ``from_dict`` (subclasses that keep it are read field by field).
_FIELDS_FROM_DICT = Mechanism.from_dict.__func__
