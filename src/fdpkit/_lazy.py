"""Deferred imports of heavy third-party modules (issue 30: start-up time).

``lazy_module("dp_accounting.pld.privacy_loss_distribution")`` returns a stand-in that
imports the module on first attribute access and forwards every attribute to it, so that
``pldlib.from_gaussian_mechanism(...)`` reads as before, while importing the fdpkit module that
holds it costs nothing: dp_accounting (and through it ``scipy.signal`` and ``scipy.stats``,
about half a second) loads only where a privacy-loss distribution is built. Type checkers
see the real module through an ``if TYPE_CHECKING:`` import beside it.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class LazyModule:
    """A module imported on first attribute access (see the module docstring)."""

    __slots__ = ("_name", "_module")

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def _load(self) -> ModuleType:
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return self._module

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._load(), attr)

    def __repr__(self) -> str:
        state = "loaded" if self._module is not None else "not loaded yet"
        return f"<lazy module {self._name!r} ({state})>"


def lazy_module(name: str) -> Any:
    """A stand-in for the module ``name`` that imports it on first attribute access.

    Examples
    --------
    >>> import sys
    >>> m = lazy_module("colorsys")
    >>> m.rgb_to_hsv(1.0, 0.0, 0.0)
    (0.0, 1.0, 1.0)
    >>> "colorsys" in sys.modules
    True
    """
    return LazyModule(name)
