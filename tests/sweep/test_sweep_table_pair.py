"""A CSV sweep table and its digest sidecar are two files, replaced one after the other: a
crash between the two writes must leave a pair that a resumed sweep reads (the old rows or
the new ones), never one it refuses as edited. Before, the sidecar was written first, so a
crash before the table left the new digest beside the old rows: refused until overwrite."""

from __future__ import annotations

import pytest

from fdpkit.sweep import store


class Crash(RuntimeError):
    pass


def _rows(mu: float) -> list[dict]:
    return [{"noise_multiplier": 1.0, "sample_rate": 0.01, "steps": 100, "delta": 1e-5,
             "discretization": 1e-4, "mu": mu}]


@pytest.mark.parametrize("crash_at", [1, 2])  # 1: before the table is replaced; 2: before the final sidecar
def test_a_crash_between_the_two_writes_leaves_a_readable_pair(tmp_path, monkeypatch, crash_at):
    out = tmp_path / "sweep.csv"
    store.write_table(out, _rows(0.5), {"rule": "x"}, digest=True)
    real, calls = store.write_atomic, []

    def crashing(path, data):
        calls.append(path)
        if len(calls) == crash_at + 1:  # the transitional sidecar is write 1, the table write 2
            raise Crash("killed")
        real(path, data)

    monkeypatch.setattr(store, "write_atomic", crashing)
    with pytest.raises(Crash):
        store.write_table(out, _rows(0.7), {"rule": "x"}, digest=True)
    monkeypatch.setattr(store, "write_atomic", real)
    assert store.read_table(out)[0]["mu"] == (0.5 if crash_at == 1 else 0.7)
    # the next write settles the pair, and an edit is still refused
    store.write_table(out, _rows(0.9), {"rule": "x"}, digest=True)
    assert store.read_table(out)[0]["mu"] == 0.9
    out.write_text(out.read_text().replace("0.9", "0.5"))
    with pytest.raises(ValueError, match="digest"):
        store.read_table(out)
