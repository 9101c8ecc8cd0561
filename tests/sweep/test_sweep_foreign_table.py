"""A Parquet sweep table re-saved by another program (pandas, Polars) loses the digest of its
rows, and resumed as an old table, unchecked: a mu changed there came back as if computed.
Every fdpkit wrote its Parquet tables with PyArrow from a dict of columns (``created_by``
"parquet-cpp-arrow ...", only ``fdpkit.*`` key-value metadata, or none), so a table without a
digest that has another writer or other metadata is refused; a table an earlier fdpkit wrote
(no digest, no other sign) still resumes."""

from __future__ import annotations

import json
import warnings

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import fdpkit as fp
from fdpkit.cli import run
from fdpkit.sweep import run_sweep
from fdpkit.sweep.store import metadata_path

DISC = 1e-3
ARGS = dict(noise_multiplier=[1.0], sample_rate=[0.01], steps=[10, 20], discretization=DISC,
            executor="inprocess", metrics=["mu", "epsilon"])


def _strip(rows):
    return [{k: v for k, v in r.items() if k != "seconds"} for r in rows]


def _first_mu_times(table: pa.Table, factor: float) -> pa.Table:
    mu = table.column("mu").to_pylist()
    mu[0] = round(mu[0] * factor, 4)
    return table.set_column(table.column_names.index("mu"), "mu", pa.array(mu))


@pytest.mark.parametrize("metadata", [None, "discretization only"])
def test_a_table_an_earlier_fdpkit_wrote_still_resumes(metadata, tmp_path):
    # before digests: no key-value metadata at all (before issue 29), or the discretization keys only
    out = tmp_path / "t.parquet"
    first = run_sweep(**ARGS, output=out)
    t = pq.read_table(out)
    keep = {} if metadata is None else {k: v for k, v in t.schema.metadata.items() if b"rows_sha256" not in k}
    pq.write_table(t.replace_schema_metadata(keep or None), out)
    with pytest.warns(UserWarning, match="carries no digest of its rows .* its rows are reused unchecked"):
        again = run_sweep(**ARGS, output=out)
    assert again.computed == 0 and again.reused == 2 and _strip(again.rows) == _strip(first.rows)
    with warnings.catch_warnings():  # rewritten with its digest: checked from now on, no warning
        warnings.simplefilter("error")
        assert run_sweep(**ARGS, output=out).reused == 2


def test_a_csv_table_whose_sidecar_was_deleted_resumes_with_a_warning(tmp_path, capsys):
    # indistinguishable from a table an fdpkit before issue 29 wrote (no sidecar): resumed, but
    # the user is told that its rows were not checked, naming the sidecar
    out = tmp_path / "t.csv"
    run_sweep(**ARGS, output=out)
    metadata_path(out).unlink()
    with pytest.warns(UserWarning, match=f"no digest of its rows .*{metadata_path(out).name}' lost it since"):
        assert run_sweep(**ARGS, output=out).reused == 2
    metadata_path(out).unlink()  # the command line: one warning line, the table resumed
    code = run(["--quiet", "sweep", "--noise-multiplier", "1", "--sample-rate", "0.01", "--steps", "10,20",
                "--discretization", str(DISC), "--executor", "inprocess", "--metrics", "mu,epsilon",
                "--output", str(out)])
    lines = capsys.readouterr().err.splitlines()
    assert code == 0 and len(lines) == 1 and lines[0].startswith(f"warning: output '{out}' carries no digest"), lines


def test_a_table_resaved_by_pandas_is_refused(tmp_path):
    # what DataFrame.to_parquet writes (pandas is not installed here: the same file through
    # PyArrow): the table's columns with the key-value metadata {"pandas": ...} alone, the
    # fdpkit.* keys (and the digest) gone; the mu was changed in the DataFrame
    out = tmp_path / "t.parquet"
    first = run_sweep(**ARGS, output=out)
    pandas_meta = {"index_columns": [{"kind": "range", "name": None, "start": 0, "stop": 2, "step": 1}],
                   "column_indexes": [], "columns": [], "creator": {"library": "pyarrow", "version": pa.__version__},
                   "pandas_version": "2.2.3"}
    t = _first_mu_times(pq.read_table(out), 0.7)
    pq.write_table(t.replace_schema_metadata({"pandas": json.dumps(pandas_meta)}), out)
    resaved = out.read_bytes()
    with pytest.raises(fp.ParameterError, match="written by another program \\(its metadata has the key 'pandas'\\), "
                                                "without the digest .* its numbers cannot be checked") as e:
        run_sweep(**ARGS, output=out)
    assert e.value.parameter == "output" and out.read_bytes() == resaved  # before: reused, mu 0.7 times
    again = run_sweep(**ARGS, output=out, overwrite=True)
    assert again.computed == 2 and _strip(again.rows) == _strip(first.rows)


def test_a_table_written_by_another_parquet_writer_is_refused(tmp_path):
    # Polars, DuckDB or Spark write no pandas key; the file names its writer (created_by). Not
    # installed here: PyArrow's file with the writer's name put in its footer (same length)
    out = tmp_path / "t.parquet"
    run_sweep(**ARGS, output=out)
    pq.write_table(_first_mu_times(pq.read_table(out), 0.7).replace_schema_metadata(None), out)
    data = out.read_bytes()
    mine = pq.ParquetFile(out).metadata.created_by.encode()
    assert data.count(mine) == 1
    other = b"Polars".ljust(len(mine))
    out.write_bytes(data.replace(mine, other))
    assert pq.ParquetFile(out).metadata.created_by == other.decode()
    with pytest.raises(fp.ParameterError, match="written by another program \\(created by 'Polars *'\\)") as e:
        run_sweep(**ARGS, output=out)
    assert e.value.parameter == "output"


def test_a_foreign_table_with_fdpkit_digest_is_checked_by_the_digest(tmp_path):
    # a table whose metadata keeps the digest and gains a key (a tool that adds its own) is
    # judged by its digest alone: unchanged rows resume
    out = tmp_path / "t.parquet"
    run_sweep(**ARGS, output=out)
    t = pq.read_table(out)
    pq.write_table(t.replace_schema_metadata({**t.schema.metadata, b"pandas": b"{}"}), out)
    assert run_sweep(**ARGS, output=out).reused == 2
