"""Reading attack scores and published counts from CSV, safely (shared by CLI and web).

Scores: one number per row, either a single column (an optional header line is skipped)
or a column named ``score``. Blank lines and lines starting with ``#`` are ignored.
Counts: a header naming ``true_positives`` (or ``tp``), ``false_positives`` (``fp``),
``members`` and ``nonmembers``, then one row per threshold.

Parsing never evaluates anything: text is decoded as UTF-8, split by Python's ``csv``
module and converted with ``float`` when a cell is a plain decimal number (not ``1_000``
or ``0x10``); every problem is a ValueError that names the input
and the line.
"""

from __future__ import annotations

import csv
import io
import math
import re
from typing import Any

import numpy as np

from fdpkit._inputs import NON_FINITE, is_plain_number
from fdpkit._numerics import MAX_ARRAY_SIZE

#: Most scores per class, by surface: every limit on how many scores an audit takes is set
#: here (the error messages and ``docs/guide/audits.md`` state them). The Python API
#: (:func:`fdpkit.run_audit`) and the CLI (``fdpkit audit``) run on the caller's own machine
#: and take up to the package-wide array cap, 10,000,000 (reading a CSV of 5,000,000 scores
#: and auditing them took 10 s of CPU, so 10^7 about 20 s); the CLI's limit was 5,000,000 of
#: its own, for no reason beyond caution. The web server is shared, so one request takes at
#: most 1,000,000 per class (an upload is at most 16 MiB: about 10^6 scores as written).
MAX_SCORES = MAX_ARRAY_SIZE
MAX_SCORES_WEB = 1_000_000
#: Largest number of data rows (scores, or rows of counts) accepted from one file by default
#: (the CLI's): :data:`MAX_SCORES`; a header line, blank lines and ``#`` comments are not counted.
MAX_ROWS = MAX_SCORES


def _limits_hint(max_rows: int) -> str:
    return (f"; at most {max_rows:,} are read here (per class: {MAX_SCORES_WEB:,} on the web server, "
            f"{MAX_SCORES:,} in the CLI and the Python API)")
_SCORE_NAMES = ("score", "scores")
_COUNT_ALIASES = {
    "true_positives": ("true_positives", "tp"),
    "false_positives": ("false_positives", "fp"),
    "members": ("members", "n_members", "positives"),
    "nonmembers": ("nonmembers", "n_nonmembers", "non_members", "negatives"),
}


def _text(name: str, data: bytes | str) -> str:
    if isinstance(data, (bytes, bytearray)):
        if b"\x00" in data:
            raise ValueError(f"{name} is not a text CSV file (it contains NUL bytes)")
        try:
            return bytes(data).decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ValueError(f"{name} is not UTF-8 text (byte {exc.start})") from None
    return data


def _rows(name: str, data: bytes | str):
    reader = csv.reader(io.StringIO(_text(name, data)))
    try:
        for row in reader:
            cells = [c.strip() for c in row]
            if not any(cells) or cells[0].startswith("#"):
                continue
            yield reader.line_num, cells
    except csv.Error as exc:
        raise ValueError(f"{name} is not valid CSV (line {reader.line_num}): {exc}") from None


#: The start of something meant as a number ("0x10", "1_000", "-.5e"): never a header.
_NUMBER_LIKE = re.compile(r"[+-]?\.?\d")  # any script's digit: "١٢" is a malformed number


#: What one score per line means, for a line that holds several ("1;2", "1 2").
_SCORES_HINT = " (give one score per line, or comma-separated columns with one named 'score')"


def _number(name: str, line: int, cell: str, hint: str = "") -> float:
    if not is_plain_number(cell):
        if hint and re.search(r"[;\s]", cell):
            raise ValueError(f"{name}, line {line}: {cell[:40]!r} is not a number{hint}")
        kind = "a plain decimal number" if _NUMBER_LIKE.match(cell) else "a number"
        raise ValueError(f"{name}, line {line}: {cell[:40]!r} is not {kind}")
    v = float(cell)
    if math.isnan(v):
        raise ValueError(f"{name}, line {line}: NaN is not a score")
    if math.isinf(v):  # as the JSON scores: an attack's score is a finite number
        raise ValueError(f"{name}, line {line}: {cell[:40]!r} is not a finite score")
    return v


def _same_width(name: str, line: int, cells: list[str], width: int) -> None:
    """Every line has the fields of the first: "1\n0,5\n0,7" (decimal commas) was read as the
    scores 1, 0, 0, and a row with a field more than the header read another column."""
    if len(cells) != width:
        raise ValueError(f"{name}, line {line} has {len(cells)} field{'s' if len(cells) != 1 else ''}, the first line "
                         f"{width}" + (" (a decimal comma? write 0.5, not 0,5)" if len(cells) > width else ""))


def _is_header(cell: str) -> bool:
    """A first line that is not a number at all ("score", "attack 1"); "0x10" or "1_000" is a
    malformed number, not a header, and "nan" is a NaN score."""
    return not (_NUMBER_LIKE.match(cell) or NON_FINITE.fullmatch(cell))


def read_scores_csv(data: bytes | str, name: str = "scores", *, max_rows: int = MAX_ROWS) -> np.ndarray:
    """Scores from CSV text or bytes (see module docs).

    Examples
    --------
    >>> read_scores_csv("score\\n0.5\\n1.5\\n").tolist()
    [0.5, 1.5]
    >>> read_scores_csv("0.5\\nabc\\n", "members")
    Traceback (most recent call last):
    ...
    ValueError: members, line 2: 'abc' is not a number
    """
    col: int | None = None
    values: list[float] = []
    header = None
    width = 0
    for line, cells in _rows(name, data):
        if col is not None:
            _same_width(name, line, cells, width)
        if col is None:
            width = len(cells)
            lowered = [c.lower() for c in cells]
            named = [i for i, c in enumerate(lowered) if c in _SCORE_NAMES]
            if len(named) > 1:  # "score,score" or "score,scores": which one is the attack's?
                raise ValueError(f"{name} has {len(named)} columns named score on line {line} "
                                 f"({', '.join(cells[i] for i in named)}); name one column 'score'")
            if named:
                col = named[0]
                continue
            if len(cells) != 1:
                raise ValueError(f"{name} has {len(cells)} columns on line {line}; give one column of scores "
                                 "or name one column 'score'")
            col = 0
            if _is_header(cells[0]) and not values:
                header = cells[0]
                continue  # a one-column header
        if col >= len(cells) or cells[col] == "":
            raise ValueError(f"{name}, line {line}: no score in column {col + 1}")
        if len(values) == max_rows:  # the limit counts scores, not the header line
            raise ValueError(f"{name} has more than {max_rows:,} scores{_limits_hint(max_rows)}")
        values.append(_number(name, line, cells[col], _SCORES_HINT))
    if not values:
        if header is not None:  # "1;2": the one line was read as a header
            raise ValueError(f"{name} has no scores: its only line {header[:40]!r} is not a number{_SCORES_HINT}")
        raise ValueError(f"{name} has no scores")
    return np.asarray(values, dtype=float)


def read_counts_csv(data: bytes | str, name: str = "counts", *, max_rows: int = MAX_ROWS) -> dict[str, np.ndarray]:
    """Counts at one or more thresholds from CSV (see module docs), as arrays named like
    :func:`fdpkit.audit_from_counts`'s arguments.

    Examples
    --------
    >>> c = read_counts_csv("tp,fp,members,nonmembers\\n900,100,1000,1000\\n")
    >>> {k: v.tolist() for k, v in c.items()}
    {'true_positives': [900.0], 'false_positives': [100.0], 'members': [1000.0], 'nonmembers': [1000.0]}
    """
    index: dict[str, int] | None = None
    out: dict[str, list[float]] = {k: [] for k in _COUNT_ALIASES}
    width = 0
    for line, cells in _rows(name, data):
        if index is not None:
            _same_width(name, line, cells, width)
        if index is None:
            width = len(cells)
            lowered = [c.lower().replace(" ", "_").replace("-", "_") for c in cells]
            index = {}
            for key, aliases in _COUNT_ALIASES.items():
                hits = [i for i, c in enumerate(lowered) if c in aliases]
                if not hits:
                    raise ValueError(f"{name} needs a header with the columns true_positives, false_positives, "
                                     f"members and nonmembers; {key} is missing")
                if len(hits) > 1:  # "tp,true_positives": the first was read, the other ignored
                    raise ValueError(f"{name} has {len(hits)} columns for {key} ({', '.join(cells[i] for i in hits)}); "
                                     "keep one")
                index[key] = hits[0]
            continue
        if len(out["true_positives"]) == max_rows:  # the header line is not counted
            raise ValueError(f"{name} has more than {max_rows:,} rows of counts")
        for key, i in index.items():
            if i >= len(cells) or cells[i] == "":
                raise ValueError(f"{name}, line {line}: no value for {key}")
            out[key].append(_number(name, line, cells[i]))
    if index is None or not out["true_positives"]:
        raise ValueError(f"{name} has no rows of counts")
    return {k: np.asarray(v, dtype=float) for k, v in out.items()}


def scores_csv(scores: Any) -> str:
    """Scores as a one-column CSV with a ``score`` header (what :func:`read_scores_csv` reads)."""
    arr = np.asarray(scores, dtype=float)
    return "score\n" + "\n".join(repr(float(v)) for v in arr) + "\n"
