"""Resumable sweep output: finished rows are saved in chunks as they arrive.

While a sweep runs, every finished group is written atomically (temporary file + rename)
as one small JSON file in a checkpoint folder beside the output, ``<output>.partial/``.
When all settings are done the table is written atomically to the output (CSV or
Parquet) and the checkpoint folder is removed. A sweep that is killed or interrupted
leaves the finished chunks; the same command run again reads them (and the rows of an
existing output file) and computes only the settings that are missing, so the final table
equals an uninterrupted run. The output file itself is never half-written.

Rows carry their ``delta`` and ``discretization`` columns, so a row is reused only for a
sweep that asks for the same numbers. The table's metadata holds a digest of its rows
(:data:`DIGEST_KEY`, :func:`rows_digest`): a resumed sweep reuses a table's rows as results,
so a table whose rows no longer match it (a mu edited from 1.57 to 1.2 by hand or by a
spreadsheet) is refused like any other file the sweep did not write.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import os
import shutil
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from fdpkit._numerics import InputTypeError, json_safe
from fdpkit.errors import ParameterError
from fdpkit.sweep.grid import INPUT_COLUMNS
from fdpkit.report.render import write_atomic

FORMATS = ("csv", "parquet")
_INT_COLUMNS = ("batch_size", "dataset_size", "steps", "max_batch_size")
_TEXT_COLUMNS = ("sampling", "relation", "note", "target")
#: Columns every row of a sweep table has (a file without them is not one).
_REQUIRED_COLUMNS = ("noise_multiplier", "delta", "discretization")


def output_format(path: str | os.PathLike) -> str:
    """``"csv"`` or ``"parquet"`` from the output's suffix."""
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix not in FORMATS:
        raise ParameterError(f"output must end in .csv or .parquet, got {str(path)!r}", "output")
    return suffix


def check_output_path(path: str | os.PathLike) -> Path:
    """Validate an output path before any work: a .csv/.parquet file in an existing folder."""
    if not isinstance(path, (str, os.PathLike)):  # output=5: was a TypeError from Path
        raise InputTypeError(f"output must be a file path, got {type(path).__name__}", "output")
    p = Path(path)
    output_format(p)
    if p.exists() and not p.is_file():
        raise ParameterError(f"output {str(p)!r} exists and is not a regular file", "output")
    if not p.parent.is_dir():
        raise ParameterError(f"output folder {str(p.parent)!r} does not exist", "output")
    return p


def not_a_table(path: str | os.PathLike, why: str) -> ParameterError:
    """The error for an existing output file that a sweep may not resume (and so would
    overwrite): it names ``output``, the file and ``why``."""
    return ParameterError(f"output {str(path)!r} exists but is not a sweep table this sweep can resume ({why}); "
                          "give another file name, or overwrite=True to replace it", "output")


def partial_dir(path: str | os.PathLike) -> Path:
    """The checkpoint folder of an output file: ``<output>.partial`` beside it."""
    p = Path(path)
    return p.with_name(p.name + ".partial")


def _from_json(v: Any) -> Any:
    if v in ("inf", "-inf", "nan"):
        return float(v)
    return v


class Checkpoint:
    """The checkpoint folder of one output file.

    Each chunk is one JSON file, ``{"rows": [...], "rows_sha256": ...}``: the rows and their
    digest (:func:`rows_digest`) in the same file, written at once (temporary file + rename),
    so that a crash leaves the chunk with its digest or no chunk. A resumed sweep reuses a
    chunk's rows only when they match the digest; a chunk edited after the sweep saved it
    (or unreadable) is not reused, its settings are recomputed and :attr:`skipped` says why.
    A chunk written before fdpkit wrote digests (a bare JSON list of rows) is reused as it
    is, unchecked, as a table without a digest is, but only in a folder an earlier fdpkit
    began: a folder this code begins holds :data:`DIGESTS_FILE`, and there a bare list is a
    chunk turned back into one (its digest taken out), not reused.
    """

    def __init__(self, output: str | os.PathLike) -> None:
        self.dir = partial_dir(output)
        self._count = 0
        #: The chunks :meth:`rows` did not reuse, as messages naming each chunk.
        self.skipped: list[str] = []

    def rows(self) -> list[dict[str, Any]]:
        """The rows saved so far; a chunk that is unreadable or does not match its digest is
        skipped (and named in :attr:`skipped`), as is a row holding a value no sweep writes."""
        self.skipped = []
        if not self.dir.is_dir():
            return []
        out: list[dict[str, Any]] = []
        digested = (self.dir / DIGESTS_FILE).is_file()
        for f in sorted(self.dir.glob("part-*.json")):
            self._count += 1  # a new chunk's name never repeats one read here
            rows, why = _chunk_rows(f, digested)
            if why is not None:
                self.skipped.append(f"checkpoint chunk {str(f)!r} is not reused, {why}: its settings are "
                                    "recomputed")
                continue
            out += [r for r in rows if bad_value(r) is None]  # anything else is recomputed
        return out

    def save(self, rows: Sequence[dict[str, Any]]) -> None:
        """Save finished rows as one new chunk with their digest, atomically (one file). A
        folder without chunks yet gets :data:`DIGESTS_FILE` first: every chunk in it has a digest."""
        self.dir.mkdir(exist_ok=True)
        if not any(self.dir.glob("part-*.json")) and not (self.dir / DIGESTS_FILE).is_file():
            write_atomic(self.dir / DIGESTS_FILE, f"every chunk in this folder carries {DIGEST_KEY}\n".encode())
        self._count += 1
        name = f"part-{os.getpid()}-{self._count:06d}.json"
        saved = json_safe([dict(r) for r in rows])
        # the digest of the rows as they read back (non-finite floats go through "inf")
        digest = rows_digest([{k: _from_json(v) for k, v in r.items()} for r in saved])
        data = json.dumps({"rows": saved, DIGEST_KEY: digest}, allow_nan=False)
        write_atomic(self.dir / name, data.encode())

    def clear(self) -> None:
        """Delete the checkpoint folder."""
        shutil.rmtree(self.dir, ignore_errors=True)


#: The file that marks a checkpoint folder begun by an fdpkit that saves every chunk with its
#: digest: a bare list of rows in it is refused (:meth:`Checkpoint.rows`).
DIGESTS_FILE = "chunks-have-digests"


def _chunk_rows(f: Path, digested: bool = False) -> tuple[list[dict[str, Any]], str | None]:
    """(rows, None) of one checkpoint chunk, or ([], why) when it is not reused: unreadable,
    not a chunk, rows that do not match the digest saved with them, or (``digested``: the
    folder's chunks all carry digests) a bare list of rows."""
    try:
        chunk = json.loads(f.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return [], "it is not readable JSON"  # a chunk is written at once: someone else wrote this
    if isinstance(chunk, dict) and "rows" in chunk:
        want, saved = chunk.get(DIGEST_KEY), chunk["rows"]
    else:
        want, saved = None, chunk  # written before chunks carried a digest: a bare list of rows
        if digested:
            return [], (f"it is a bare list of rows without the digest ({DIGEST_KEY}) that the sweep which began this "
                        "folder saves with every chunk")
    if not isinstance(saved, list) or not all(isinstance(r, dict) for r in saved):
        return [], "it is not a list of rows"
    rows = [{k: _from_json(v) for k, v in r.items()} for r in saved]
    if saved is not chunk:
        try:
            same = isinstance(want, str) and rows_digest(rows) == want
        except (TypeError, ValueError):  # a value no sweep writes (a list, an object)
            same = False
        if not same:
            return [], (f"its rows do not match the digest the sweep saved with them ({DIGEST_KEY}; a value was "
                        "changed after the sweep wrote it)")
    return rows, None


def columns(rows: Iterable[dict[str, Any]]) -> list[str]:
    """Column order: inputs, then delta/discretization, then metrics in first-seen order."""
    seen: dict[str, None] = {}
    for r in rows:
        for k in r:
            seen.setdefault(k, None)
    head = [c for c in INPUT_COLUMNS if c in seen] + [c for c in ("delta", "discretization") if c in seen]
    return head + [c for c in seen if c not in head]


def to_csv_bytes(rows: Sequence[dict[str, Any]]) -> bytes:
    """Rows as CSV (UTF-8): a header in :func:`columns` order, floats written with ``repr``
    so they read back exactly, missing values empty."""
    cols = columns(rows)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for r in rows:
        w.writerow(["" if r.get(c) is None else (repr(r[c]) if isinstance(r[c], float) else r[c]) for c in cols])
    return buf.getvalue().encode()


def to_parquet_bytes(rows: Sequence[dict[str, Any]], metadata: dict[str, Any] | None = None) -> bytes:
    """Rows as a Parquet file's bytes (needs PyArrow, the ``[sweep]`` extra); ``metadata``
    (JSON values) goes into the file's key-value metadata under ``fdpkit.<key>``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    cols = columns(rows)
    table = pa.table({c: [r.get(c) for r in rows] for c in cols})
    if metadata:
        table = table.replace_schema_metadata(
            {f"fdpkit.{k}": json.dumps(json_safe(v), allow_nan=False) for k, v in metadata.items()})
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


#: The metadata key of a sweep table's digest of its rows (:func:`rows_digest`).
DIGEST_KEY = "rows_sha256"


def _canonical(row: Mapping[str, Any]) -> str:
    """One row as text that survives a CSV or Parquet round trip: its columns sorted, missing
    values left out, numbers as the repr of their float (CSV reads a whole-number column
    through float too), strings as they are."""
    cells = []
    for k in sorted(row):
        v = row[k]
        if v is None:
            continue
        text = ("s" + v) if isinstance(v, str) else ("n" + repr(float(v)))
        cells.append([k, text])
    return json.dumps(cells, ensure_ascii=False, separators=(",", ":"))


def rows_digest(rows: Iterable[Mapping[str, Any]]) -> str:
    """SHA-256 (hex) of a table's rows, whatever their order and column order: the sorted
    digests of the rows' canonical text (:func:`_canonical`), hashed. Every column counts:
    inputs, delta, discretization, metrics, note."""
    each = sorted(hashlib.sha256(_canonical(r).encode()).hexdigest() for r in rows)
    return hashlib.sha256("\n".join(each).encode()).hexdigest()


def metadata_path(path: str | os.PathLike) -> Path:
    """Where a CSV output's metadata is written: ``<output>.meta.json`` beside it."""
    p = Path(path)
    return p.with_name(p.name + ".meta.json")


def write_table(path: str | os.PathLike, rows: Sequence[dict[str, Any]],
                metadata: dict[str, Any] | None = None, *, digest: bool = False) -> Path:
    """Write rows to ``path`` atomically, as Parquet for ``.parquet`` and CSV otherwise.
    ``metadata`` (e.g. the sweep's discretization rule) goes into a Parquet file's
    key-value metadata, or beside a CSV file as :func:`metadata_path` (JSON); with
    ``digest`` (a sweep table, which a sweep resumes), :func:`rows_digest` goes with it
    under :data:`DIGEST_KEY` and :func:`read_table` checks it."""
    p = Path(path)
    if digest:
        metadata = {**(metadata or {}), DIGEST_KEY: rows_digest(rows)}
    parquet = output_format(p) == "parquet"
    data = to_parquet_bytes(rows, metadata) if parquet else to_csv_bytes(rows)
    if not metadata or parquet:
        write_atomic(p, data)
        return p

    def sidecar(meta: dict[str, Any]) -> None:
        write_atomic(metadata_path(p), (json.dumps(json_safe(meta), indent=2, allow_nan=False) + "\n").encode())

    # a CSV and its sidecar are two files, replaced one after the other: while the table is
    # replaced the sidecar accepts the old rows and the new ones, so that a crash between the
    # writes leaves a pair that reads (an unchecked old table: the table first)
    old = _previous_digest(p) if digest else None
    if old is not None and old != metadata[DIGEST_KEY]:
        sidecar({**metadata, DIGEST_KEY: [old, metadata[DIGEST_KEY]]})
    write_atomic(p, data)
    sidecar(metadata)
    return p


def _previous_digest(p: Path) -> str | None:
    """The digest of the rows ``p`` holds now, when it is a table fdpkit wrote that matches
    the digest beside it; None otherwise (no table, or one without a digest or edited)."""
    try:
        if not p.is_file() or _file_metadata(p).get(DIGEST_KEY) is None:
            return None
        return rows_digest(read_table(p))
    except (OSError, ValueError):
        return None


def read_metadata(path: str | os.PathLike) -> dict[str, Any]:
    """The metadata :func:`write_table` wrote with ``path`` ({} when there is none), without
    the rows' digest (:data:`DIGEST_KEY`, which only :func:`read_table` reads)."""
    meta = _file_metadata(Path(path))
    meta.pop(DIGEST_KEY, None)
    return meta


def _file_metadata(p: Path) -> dict[str, Any]:
    if output_format(p) == "parquet":
        import pyarrow.parquet as pq

        raw = pq.read_schema(p).metadata or {}
        return {k.decode()[len("fdpkit."):]: json.loads(v) for k, v in raw.items()
                if k.decode().startswith("fdpkit.")}
    m = metadata_path(p)
    meta = json.loads(m.read_text(encoding="utf-8")) if m.is_file() else {}
    return meta if isinstance(meta, dict) else {}


def _parse_cell(col: str, text: str) -> Any:
    """One CSV cell as its column's type; a ValueError for anything a sweep never writes: NaN,
    an integer column's fraction or infinity ("1.5", "inf", "1e400" steps)."""
    if text == "":
        return None
    if col in _TEXT_COLUMNS:
        return text
    value = float(text)
    if math.isnan(value):
        raise ValueError(text)
    if col in _INT_COLUMNS:
        if not math.isfinite(value) or value != int(value):
            raise ValueError(text)
        return int(value)
    return value


#: Columns holding a probability (a TPR, the advantage): in [0, 1].
def _is_probability(col: str) -> bool:
    return col == "advantage" or col.startswith("tpr_at_")


def bad_value(row: Mapping[str, Any]) -> str | None:
    """Why a saved row holds a value no sweep writes (None: it holds none): NaN, a negative
    number (every input and metric of a sweep is >= 0), a TPR or advantage above 1, or an
    integer column that is not a whole number. A resumed sweep reuses saved rows as they
    are, so a row edited by hand or by a spreadsheet ("nan", "-3") must not come back as a
    result."""
    for col, v in row.items():
        if col in _TEXT_COLUMNS or v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return f"{col} {v!r} is not a number"
        if math.isnan(v) or v < 0 or (_is_probability(col) and v > 1):
            return f"{col} {v!r} is out of range"
        if col in _INT_COLUMNS and (not math.isfinite(v) or v != int(v)):
            return f"{col} {v!r} is not a whole number"
    return None


def _check_header(path: Path, header: Sequence[str]) -> None:
    missing = [c for c in _REQUIRED_COLUMNS if c not in header]
    if missing:
        raise not_a_table(path, f"without the column{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
    if len(set(header)) != len(header):
        raise not_a_table(path, "a column name is repeated")


def read_table(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Rows of an existing sweep output (CSV or Parquet); [] when there is none.

    Raises
    ------
    ParameterError
        (``output``) The file is not a sweep table: not UTF-8, empty, without the columns
        every sweep row has (``noise_multiplier``, ``delta``, ``discretization``), a line with
        another number of fields than the header, a value that does not parse, or a value no
        sweep writes (:func:`bad_value`: NaN, a negative number, a TPR above 1), or rows that
        do not match the digest written with them (:func:`rows_digest`; a table written
        without one, by an earlier fdpkit, is read as it is), or a Parquet table without a
        digest that another program wrote (:func:`_foreign_writer`: re-saved by pandas or
        Polars, which drop the digest).
    """
    p = Path(path)
    if not p.is_file():
        return []
    if output_format(p) == "parquet":
        import pyarrow.parquet as pq

        try:
            table = pq.read_table(p)
        except Exception as exc:  # pyarrow raises several types for a corrupt file
            raise ParameterError(f"output {str(p)!r} exists but is not a readable Parquet file: {exc}",
                                 "output") from None
        _check_header(p, table.column_names)
        data = table.to_pydict()
        n = table.num_rows
        rows = [{k: data[k][i] for k in data if data[k][i] is not None} for i in range(n)]
        for i, row in enumerate(rows):
            why = bad_value(row)
            if why is not None:
                raise not_a_table(p, f"row {i + 1}: {why}")
        return _check_digest(p, rows)
    try:
        text = p.read_text(encoding="utf-8-sig")  # a table re-saved by a spreadsheet may start with a BOM
    except UnicodeDecodeError:
        raise not_a_table(p, "not UTF-8 text") from None
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        raise not_a_table(p, "it is empty") from None
    except csv.Error as exc:
        raise not_a_table(p, f"not CSV: {exc}") from None
    _check_header(p, header)
    rows = []
    try:
        for line in reader:
            if not line:
                continue  # a blank line
            if len(line) != len(header):
                raise not_a_table(p, f"line {reader.line_num} has {len(line)} fields, the header {len(header)}")
            try:
                row = {c: _parse_cell(c, t) for c, t in zip(header, line)}
            except ValueError:
                raise not_a_table(p, f"line {reader.line_num} has a value that is not a number") from None
            why = bad_value(row)
            if why is not None:
                raise not_a_table(p, f"line {reader.line_num}: {why}")
            rows.append({k: v for k, v in row.items() if v is not None})
    except csv.Error as exc:
        raise not_a_table(p, f"not CSV: {exc}") from None
    return _check_digest(p, rows)


def unchecked(path: str | os.PathLike) -> str | None:
    """Why the rows of the existing table ``path`` cannot be checked (None: they carry their
    digest, :data:`DIGEST_KEY`, or there is no table): written by an fdpkit before digests, or
    its metadata was removed since. :func:`read_table` reads such a table as it is."""
    p = Path(path)
    try:
        if not p.is_file() or _file_metadata(p).get(DIGEST_KEY) is not None:
            return None
    except (OSError, ValueError):
        return None  # read_table says what is wrong with it
    where = "its key-value metadata" if output_format(p) == "parquet" else repr(str(metadata_path(p)))
    return (f"output {str(p)!r} carries no digest of its rows ({DIGEST_KEY}: an fdpkit before digests wrote it, or "
            f"{where} lost it since), so its rows are reused unchecked; delete it to recompute them")


def _check_digest(p: Path, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` of ``p``, when they match the digest written with them (a table without one,
    written before fdpkit wrote digests, is taken as it is, unless another program wrote it:
    :func:`_foreign_writer`)."""
    try:
        meta = _file_metadata(p)
    except (OSError, ValueError):
        raise not_a_table(p, f"its metadata {str(metadata_path(p))!r} is not readable JSON") from None
    want = meta.get(DIGEST_KEY)
    # a list: the table was being replaced (write_table), and either the old or the new rows read
    if want is not None and rows_digest(rows) not in (want if isinstance(want, list) else [want]):
        where = "key-value metadata" if output_format(p) == "parquet" else repr(str(metadata_path(p)))
        raise not_a_table(p, f"its rows do not match the digest the sweep wrote with them ({DIGEST_KEY} in "
                             f"its {where}): a value was changed after the sweep wrote it")
    if want is None and output_format(p) == "parquet":
        writer = _foreign_writer(p)
        if writer is not None:
            raise not_a_table(p, f"it was written by another program ({writer}), without the digest of its rows "
                                 f"the sweep writes ({DIGEST_KEY}): its numbers cannot be checked")
    return rows


#: How every fdpkit writes Parquet (PyArrow >= 14, ``pyarrow.parquet.write_table``): the
#: file's ``created_by`` starts with this.
_PYARROW_WRITER = "parquet-cpp-arrow"


def _foreign_writer(p: Path) -> str | None:
    """What shows that a Parquet table without a digest was written by another program than
    fdpkit (None: nothing does): key-value metadata that no fdpkit writes (every fdpkit wrote a
    table from a dict of columns, with only ``fdpkit.*`` keys, or none; pandas adds ``pandas``,
    R ``r``) or a writer other than PyArrow (Polars, DuckDB, Spark). A table re-saved by pandas
    or Polars has lost its digest, and may hold numbers changed there; a table written by an
    fdpkit before digests has neither sign."""
    import pyarrow.parquet as pq

    keys = sorted(k.decode("utf-8", "replace") for k in (pq.read_schema(p).metadata or {}))
    foreign = [k for k in keys if not k.startswith("fdpkit.")]
    if foreign:
        return f"its metadata has the key{'s' if len(foreign) > 1 else ''} {', '.join(map(repr, foreign))}"
    created_by = pq.ParquetFile(p).metadata.created_by or ""
    if not created_by.startswith(_PYARROW_WRITER):
        return f"created by {created_by!r}" if created_by else "no writer named in the file"
    return None
