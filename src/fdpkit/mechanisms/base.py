"""Mechanism value objects: frozen descriptions of what ran, with no algorithm inside
(in the spirit of dp_accounting's ``dp_event.py``). They serialise to and from plain
dicts/JSON so that the CLI, reports and the web calculator can read them."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, fields
from typing import Any, ClassVar

_REGISTRY: dict[str, type["Mechanism"]] = {}


def _number(name: str, value: Any, *, positive: bool = False, allow_zero: bool = True,
            allow_inf: bool = False, upper: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        try:
            value = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be a number, got {value!r}") from None
    v = float(value)
    if math.isnan(v):
        raise ValueError(f"{name} must not be NaN, got {value!r}")
    if math.isinf(v) and not allow_inf:
        raise ValueError(f"{name} must be finite, got {value!r}")
    if positive and (v < 0 or (v == 0 and not allow_zero)):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'}, got {value!r}")
    if upper is not None and v > upper:
        raise ValueError(f"{name} must be <= {upper:g}, got {value!r}")
    return v


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
        return json.dumps(self.to_dict())

    def label(self) -> str:
        """A short name for titles (DP-SGD is recognised); defaults to :meth:`describe`."""
        return self.describe()

    def describe(self) -> str:
        """A one-line human description."""
        params = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in fields(self))
        return f"{type(self).__name__}({params})"


def mechanism_from_dict(data: Any) -> Mechanism:
    """Rebuild a mechanism from :meth:`Mechanism.to_dict` output (or hand-written JSON).

    >>> mechanism_from_dict({"kind": "gaussian", "sigma": 2.0}).describe()
    'Gaussian(sigma=2.0, sensitivity=1.0)'
    """
    if isinstance(data, Mechanism):
        return data
    if not isinstance(data, dict):
        raise ValueError(f"mechanism must be an object with a 'kind', got {type(data).__name__}")
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
        kwargs["inner"] = mechanism_from_dict(kwargs["inner"])
    if "parts" in kwargs:
        if not isinstance(kwargs["parts"], (list, tuple)):
            raise ValueError(f"parts must be a list of mechanisms, got {kwargs['parts']!r}")
        kwargs["parts"] = tuple(mechanism_from_dict(p) for p in kwargs["parts"])
    try:
        return cls(**kwargs)
    except TypeError as err:
        raise ValueError(f"invalid fields for {kind!r}: {err}") from None


def mechanism_from_json(text: str) -> Mechanism:
    """Parse a JSON mechanism spec."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"mechanism spec is not valid JSON: {err}") from None
    return mechanism_from_dict(data)
