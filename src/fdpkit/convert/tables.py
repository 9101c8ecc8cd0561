"""The seed papers' tables, regenerated: Kulynych & Honkela Figs. 4b, 5b, 6b and Gomez et
al. Table 3. Each function returns a :class:`Table` on the published grid by default."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from fdpkit._numerics import check_real

from fdpkit.convert.gdp import epsilon_for_delta, mu_for_epsilon_delta
from fdpkit.curves import GaussianCurve
from fdpkit.risk.attack import multiplicative_advantage, precision_at_recall

KH_ROWS = (1e-2, 1e-3, 1e-4, 1e-5)
KH_MUS = (0.1, 0.25, 0.5, 1.0, 1.5, 2.0)
KH_DELTAS = (1e-5, 1e-6, 1e-7, 1e-8)
GOMEZ_EPSILONS = (0.1, 0.5, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0)
GOMEZ_DELTAS = (1e-5, 1e-6, 1e-9)


@dataclass(frozen=True)
class Table:
    """A two-way table of numbers with its provenance.

    Attributes
    ----------
    name, title, source : str
    row_param, col_param, value_name : str
    rows, cols : tuple of float
    cells : tuple of tuple of float (``cells[i][j]`` for ``rows[i]``, ``cols[j]``)
    digits : int
        Significant digits used by :meth:`formatted`.
    """

    name: str
    title: str
    source: str
    row_param: str
    col_param: str
    value_name: str
    rows: tuple[float, ...]
    cols: tuple[float, ...]
    cells: tuple[tuple[float, ...], ...] = field(repr=False)
    digits: int = 3

    def to_rows(self) -> list[dict[str, Any]]:
        """One dict per cell: {row_param: r, col_param: c, value_name: v}."""
        return [
            {self.row_param: r, self.col_param: c, self.value_name: self.cells[i][j]}
            for i, r in enumerate(self.rows)
            for j, c in enumerate(self.cols)
        ]

    def formatted(self) -> list[list[str]]:
        """Header row plus one row per ``rows`` entry, numbers as strings."""
        head = [f"{self.row_param} \\ {self.col_param}"] + [f"{c:g}" for c in self.cols]
        body = [[f"{r:g}"] + [f"{v:.{self.digits}g}" for v in row] for r, row in zip(self.rows, self.cells)]
        return [head] + body

    def to_dict(self) -> dict[str, Any]:
        """The object as JSON-ready data (dicts, lists, numbers and strings)."""
        return {
            "name": self.name, "title": self.title, "source": self.source,
            "row_param": self.row_param, "col_param": self.col_param,
            "value_name": self.value_name, "rows": list(self.rows), "cols": list(self.cols),
            "cells": [list(r) for r in self.cells],
        }


#: Most rows or columns of a table (a table is for reading, not bulk computation).
MAX_TABLE_SIDE = 1000


def _values(name: str, values: Any) -> tuple[float, ...]:
    """A table axis: a non-empty 1-D sequence of real numbers (the shared validator)."""
    if isinstance(values, (str, bytes)) or np.ndim(values) != 1:
        raise ValueError(f"{name} must be a non-empty list of numbers, got {values!r}")
    arr = check_real(name, list(values))
    if not 0 < arr.size <= MAX_TABLE_SIDE:
        raise ValueError(f"{name} must have 1 to {MAX_TABLE_SIDE} values, got {arr.size}")
    return tuple(float(v) for v in arr)


def _grid(rows: Sequence[float], cols: Sequence[float], fn: Callable[[float, float], float],
          names: tuple[str, str] = ("rows", "cols")):
    try:
        return tuple(tuple(float(fn(r, c)) for c in cols) for r in rows)
    except ValueError as exc:  # a value out of its range: name the table's own parameters
        raise ValueError(f"{names[0]}, {names[1]}: {exc}") from None


def multiplicative_advantage_table(alphas: Sequence[float] = KH_ROWS, mus: Sequence[float] = KH_MUS) -> Table:
    """Worst-case TPR/FPR of mu-GDP at FPR alpha (Kulynych & Honkela Fig. 4b).

    Examples
    --------
    >>> t = multiplicative_advantage_table()
    >>> round(t.cells[0][3], 2)
    9.24
    """
    alphas, mus = _values('alphas', alphas), _values('mus', mus)
    return Table(
        "multiplicative_advantage", "Worst-case multiplicative advantage TPR/FPR of mu-GDP",
        "Kulynych & Honkela, Fig. 4b", "alpha", "mu", "tpr_over_fpr",
        alphas, mus,
        _grid(alphas, mus, lambda a, m: multiplicative_advantage(GaussianCurve(m), a), ('alphas', 'mus')), 4,
    )


def precision_at_recall_table(recalls: Sequence[float] = KH_ROWS, mus: Sequence[float] = KH_MUS) -> Table:
    """Worst-case precision at recall of mu-GDP (Kulynych & Honkela Fig. 5b).

    Examples
    --------
    >>> round(precision_at_recall_table().cells[0][0], 3)
    0.567
    """
    recalls, mus = _values('recalls', recalls), _values('mus', mus)
    return Table(
        "precision_at_recall", "Worst-case precision at recall under mu-GDP",
        "Kulynych & Honkela, Fig. 5b", "recall", "mu", "precision",
        recalls, mus,
        _grid(recalls, mus, lambda b, m: precision_at_recall(GaussianCurve(m), b), ('recalls', 'mus')),
    )


def epsilon_for_delta_table(deltas: Sequence[float] = KH_DELTAS, mus: Sequence[float] = KH_MUS) -> Table:
    """epsilon at delta implied by mu-GDP (Kulynych & Honkela Fig. 6b).

    Examples
    --------
    >>> round(epsilon_for_delta_table().cells[0][3], 1)
    4.4
    """
    deltas, mus = _values('deltas', deltas), _values('mus', mus)
    return Table(
        "epsilon_for_delta", "epsilon at delta implied by mu-GDP",
        "Kulynych & Honkela, Fig. 6b", "delta", "mu", "epsilon",
        deltas, mus, _grid(deltas, mus, lambda d, m: epsilon_for_delta(m, d), ('deltas', 'mus')), 2,
    )


def mu_for_epsilon_delta_table(
    epsilons: Sequence[float] = GOMEZ_EPSILONS, deltas: Sequence[float] = GOMEZ_DELTAS
) -> Table:
    """mu such that delta_mu(eps) = delta (Gomez et al. Table 3).

    Examples
    --------
    >>> round(mu_for_epsilon_delta_table().cells[0][0], 2)
    0.03
    """
    epsilons, deltas = _values('epsilons', epsilons), _values('deltas', deltas)
    return Table(
        "mu_for_epsilon_delta", "mu-GDP with the same delta at epsilon",
        "Gomez et al., Table 3", "epsilon", "delta", "mu",
        epsilons, deltas, _grid(epsilons, deltas, lambda e, d: mu_for_epsilon_delta(e, d), ('epsilons', 'deltas')), 2,
    )


def seed_tables() -> list[Table]:
    """All four seed tables on their published grids."""
    return [
        multiplicative_advantage_table(), precision_at_recall_table(),
        epsilon_for_delta_table(), mu_for_epsilon_delta_table(),
    ]
