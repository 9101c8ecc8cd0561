"""Grids of DP-SGD settings: a Cartesian product of parameter lists, or explicit rows.

A *setting* is a plain dict of the keyword arguments of :func:`fdpkit.dpsgd`
(``noise_multiplier`` and either ``sample_rate`` or ``batch_size`` + ``dataset_size``, and
either ``steps`` or ``epochs``; optionally ``sampling``, ``relation`` and, for truncated
Poisson sampling, ``max_batch_size``). Settings are validated up front by building their mechanisms, so a bad
value fails before any work starts and the error names the parameter the user typed.

Settings that differ only in their step count form one *group*: a group is the unit of
work sent to an executor, so that the accounting of the single step can be shared (see
:mod:`fdpkit.sweep.evaluate`).
"""

from __future__ import annotations

import itertools
import math
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from fdpkit._numerics import InputTypeError, _short
from fdpkit.errors import ParameterError
from fdpkit.vocabulary import spelling

#: Inputs a sweep grid may vary, in the order of the output columns.
INPUT_COLUMNS = ("noise_multiplier", "sample_rate", "batch_size", "dataset_size", "steps", "epochs",
                 "sampling", "relation", "max_batch_size")
#: Inputs that are strings (the rest are numbers).
_TEXT_INPUTS = ("sampling", "relation")
#: Inputs that must be whole numbers.
_INT_INPUTS = ("batch_size", "dataset_size", "steps", "max_batch_size")
#: Largest number of settings one sweep accepts (a bound on memory for the table).
MAX_SETTINGS = 1_000_000


def _values(name: str, values: Any) -> list[Any]:
    """One parameter's list of values, validated as real numbers (or strings); errors are
    :class:`~fdpkit.errors.ParameterError` naming ``name`` (wrong types: ``InputTypeError``,
    also a TypeError)."""
    if values is None:
        return []
    if isinstance(values, (str, bytes)) and name not in _TEXT_INPUTS:
        raise InputTypeError(f"{name} must be a list of numbers, got {values!r}", name)
    if isinstance(values, str) or np.ndim(values) == 0:
        values = [values]
    out: list[Any] = []
    for v in values:
        if name in _TEXT_INPUTS:
            if not isinstance(v, str):
                raise InputTypeError(f"{name} values must be strings, got {v!r}", name)
            # the spelling fdpkit.dpsgd reads ("Shuffled", "fixed_size"): a row's scheme is then the
            # one its refusal, note and truncation are looked up by, and repeats are found
            out.append(spelling(v))
            continue
        if isinstance(v, (bool, np.bool_)) or isinstance(v, (str, bytes)):
            raise InputTypeError(f"{name} values must be numbers, got {v!r}", name)
        try:
            x = float(v)
        except OverflowError:  # an int beyond float: not finite
            x = math.inf
        except (TypeError, ValueError):
            raise InputTypeError(f"{name} values must be numbers, got {v!r}", name) from None
        if not math.isfinite(x) or x <= 0:
            raise ParameterError(f"{name} values must be positive and finite, got {v!r}", name)
        if name in _INT_INPUTS:
            if x != int(x):
                raise ParameterError(f"{name} values must be whole numbers, got {v!r}", name)
            out.append(int(x))
        else:
            out.append(x)
    if not out:
        raise ParameterError(f"{name} must not be empty", name)
    if len(set(out)) != len(out):
        raise ParameterError(f"{name} has repeated values: {list(values)!r}", name)
    return out


def cartesian(**params: Any) -> list[dict[str, Any]]:
    """Every combination of the given parameter lists, in the order of :data:`INPUT_COLUMNS`.

    >>> [s["steps"] for s in cartesian(noise_multiplier=[1.0], sample_rate=[0.01], steps=[100, 400])]
    [100, 400]
    """
    unknown = sorted(set(params) - set(INPUT_COLUMNS))
    if unknown:
        raise ValueError(f"unknown sweep parameter(s) {', '.join(unknown)}; known: {', '.join(INPUT_COLUMNS)}")
    lists = {k: _values(k, params[k]) for k in INPUT_COLUMNS if params.get(k) is not None}
    size = math.prod(len(v) for v in lists.values()) if lists else 0
    if size == 0:
        raise ParameterError("the sweep grid is empty: give noise_multiplier, a sample rate and steps",
                             "noise_multiplier")
    if size > MAX_SETTINGS:
        raise ValueError(f"the sweep grid has {size} settings; at most {MAX_SETTINGS} are allowed")
    keys = list(lists)
    return [dict(zip(keys, combo)) for combo in itertools.product(*(lists[k] for k in keys))]


def explicit(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Explicit settings (a table of rows), validated like :func:`cartesian`'s values."""
    if isinstance(rows, (str, bytes, Mapping)) or not isinstance(rows, Iterable):  # rows=5: was a TypeError
        raise InputTypeError(f"rows must be a list of mappings of parameter names to values, got {_short(rows)}",
                             "rows")
    out = []
    for i, row in enumerate(rows):
        if i == MAX_SETTINGS:  # counted while read: a generator of 10**9 rows is refused, not built
            raise ParameterError(f"rows has more than {MAX_SETTINGS} settings; at most {MAX_SETTINGS} are allowed",
                                 "rows")
        if not isinstance(row, Mapping):
            raise InputTypeError(f"rows[{i}] must be a mapping of parameter names to values, got {_short(row)}", "rows")
        unknown = sorted(_short(k) for k in set(row) - set(INPUT_COLUMNS))  # {1: 2}: was a TypeError in join
        if unknown:
            raise ParameterError(f"rows[{i}] has unknown parameter(s) {', '.join(unknown)}", "rows")
        if row.get("noise_multiplier") is None:  # {}: was a bare KeyError when the mechanism was built
            raise ParameterError(f"rows[{i}] has no noise_multiplier", "rows")
        out.append({k: _values(k, [row[k]])[0] for k in INPUT_COLUMNS if row.get(k) is not None})
    if not out:
        raise ParameterError("rows must not be empty", "rows")
    return out


def setting_key(setting: Mapping[str, Any]) -> tuple:
    """A hashable identity of a setting (its inputs), used for resuming and grouping."""
    return tuple((k, setting[k]) for k in INPUT_COLUMNS if setting.get(k) is not None)


def group_by_steps(settings: Sequence[Mapping[str, Any]]) -> list[list[dict[str, Any]]]:
    """Settings grouped so that the members of a group differ only in ``steps``/``epochs``
    (first-appearance order kept, inside a group sorted by step count)."""
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for s in settings:
        key = tuple((k, s[k]) for k in INPUT_COLUMNS if k not in ("steps", "epochs") and s.get(k) is not None)
        groups.setdefault(key, []).append(dict(s))
    return [sorted(g, key=lambda s: (s.get("steps") or 0, s.get("epochs") or 0)) for g in groups.values()]
