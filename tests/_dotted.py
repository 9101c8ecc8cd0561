"""Resolve a dotted fdpkit path (``fdpkit.accounting.account``) to its object, for the tests
that read names out of the docs: the API pages' ``:::`` targets and docstrings' roles."""

from __future__ import annotations

import importlib
import warnings


def resolve(dotted: str):
    """The object ``dotted`` names: the longest importable module prefix, then attributes
    (deprecated aliases resolve silently). ImportError if no prefix imports, AttributeError if
    an attribute is missing."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            for attr in parts[i:]:
                obj = getattr(obj, attr)
        return obj
    raise ImportError(dotted)
