"""Mechanism value objects: frozen descriptions of what ran, with no algorithm inside
(in the spirit of dp_accounting's ``dp_event.py``). They serialise to and from plain
dicts/JSON so that the CLI, reports and the web calculator can read them."""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from typing import Any, ClassVar

from fdpkit._numerics import check_real

_REGISTRY: dict[str, type["Mechanism"]] = {}


def _number(name: str, value: Any, *, positive: bool = False, allow_zero: bool = True,
            allow_inf: bool = False, upper: float | None = None) -> float:
    """A mechanism parameter through fdpkit's one numeric validator (no bools, no strings)."""
    return check_real(name, value, low=0.0 if positive else None, low_open=positive and not allow_zero,
                      high=upper, allow_inf=allow_inf, scalar=True) * 1.0


@dataclass(frozen=True)
class Mechanism:
    """Base class. Subclasses are frozen dataclasses registered under ``kind``."""

    kind: ClassVar[str] = "mechanism"

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


def mechanism_from_dict(data: Any) -> Mechanism:
    """Rebuild a mechanism from :meth:`Mechanism.to_dict` output (or hand-written JSON, or
    the JSON form of a dp_accounting ``DpEvent``: see :func:`fdpkit.from_dp_event`).

    Nesting deeper than :data:`MAX_SPEC_DEPTH` or more than :data:`MAX_SPEC_NODES`
    mechanisms are refused while parsing (a ValueError naming ``mechanism``).

    >>> mechanism_from_dict({"kind": "gaussian", "sigma": 2.0}).describe()
    'Gaussian(sigma=2.0, sensitivity=1.0)'
    """
    return _from_dict(data, 0, [0])


def _from_dict(data: Any, depth: int, count: list) -> Mechanism:
    if isinstance(data, Mechanism):
        return data
    if depth > MAX_SPEC_DEPTH:
        raise ValueError(f"mechanism is nested more than {MAX_SPEC_DEPTH} levels deep")
    count[0] += 1
    if count[0] > MAX_SPEC_NODES:
        raise ValueError(f"mechanism has more than {MAX_SPEC_NODES:,} parts")
    if not isinstance(data, dict):
        raise ValueError(f"mechanism must be an object with a 'kind', got {type(data).__name__}")
    if depth == 0 and "kind" not in data and "class_name" in data:  # a dp_accounting DpEvent's JSON
        from fdpkit.mechanisms.dp_events import from_dp_event

        return from_dp_event(data)
    kind = data.get("kind")
    if kind == "dpsgd":
        from fdpkit.mechanisms.dpsgd import DPSGD

        return DPSGD.from_dict(data)
    cls = _REGISTRY.get(kind)
    if cls is None:
        known = ", ".join(sorted(_REGISTRY))
        raise ValueError(f"mechanism kind must be one of {known}, got {kind!r}")
    names = {f.name for f in fields(cls)}
    extra = set(data) - names - {"kind"}
    if extra:
        raise ValueError(f"unknown field(s) for {kind!r}: {', '.join(sorted(extra))}")
    kwargs = {k: v for k, v in data.items() if k != "kind"}
    if "inner" in kwargs:
        kwargs["inner"] = _from_dict(kwargs["inner"], depth + 1, count)
    if "parts" in kwargs:
        if not isinstance(kwargs["parts"], (list, tuple)):
            raise ValueError(f"parts must be a list of mechanisms, got {kwargs['parts']!r}")
        if len(kwargs["parts"]) > MAX_SPEC_NODES:
            raise ValueError(f"mechanism has more than {MAX_SPEC_NODES:,} parts")
        kwargs["parts"] = tuple(_from_dict(p, depth + 1, count) for p in kwargs["parts"])
    try:
        return cls(**kwargs)
    except TypeError as err:
        if isinstance(err, ValueError):  # a bad value (InputTypeError): its message names the field
            raise
        raise ValueError(f"invalid fields for {kind!r}: {err}") from None


def mechanism_from_json(text: str) -> Mechanism:
    """Parse a JSON mechanism spec."""
    if not isinstance(text, (str, bytes, bytearray)):
        raise ValueError(f"text must be a JSON string, got {type(text).__name__}")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"mechanism spec is not valid JSON: {err}") from None
    except RecursionError:
        raise ValueError("mechanism spec is nested too deeply") from None
    return mechanism_from_dict(data)
