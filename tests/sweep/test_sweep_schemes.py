"""Sampling scheme and neighbouring relation as sweep dimensions: each row equals
privacy_report of its setting; pairs with no sound analysis are rows carrying the refusal
(no numbers); shuffled batches carry the no-amplification note."""

from __future__ import annotations

import csv

import pytest

import fdpkit as fp
from fdpkit.accounting import account
from fdpkit.mechanisms.training import REFUSED
from fdpkit.sweep import run_sweep as sweep
from fdpkit.sweep.evaluate import SHUFFLED_NOTE
from fdpkit.sweep.store import read_table

DISC = 1e-3
GRID = dict(noise_multiplier=[2.0], batch_size=[10], dataset_size=[100], steps=[20],
            sampling=["poisson", "truncated-poisson", "fixed-size", "shuffled"],
            relation=["add-remove", "replace-one", "zero-out"], max_batch_size=[15])
NUMBERS = ("mu", "regret", "epsilon")


@pytest.fixture(scope="module")
def grid_result():
    return sweep(**GRID, discretization=DISC, executor="inprocess", metrics=list(NUMBERS))


def test_every_pair_is_a_row(grid_result):
    assert len(grid_result) == 12
    pairs = [(r["sampling"], r["relation"]) for r in grid_result]
    assert len(set(pairs)) == 12


def test_refused_pairs_carry_the_refusal_and_no_number(grid_result):
    refused = [r for r in grid_result if (r["sampling"], r["relation"]) in REFUSED]
    assert {(r["sampling"], r["relation"]) for r in refused} == {("shuffled", "add-remove"),
                                                                 ("fixed-size", "add-remove")}
    for r in refused:
        assert r["note"].startswith("refused: ") and "cannot be accounted" in r["note"]
        assert not any(k in r for k in NUMBERS)


def test_shuffled_rows_say_no_amplification_and_give_the_closed_form(grid_result):
    for r in grid_result:
        if r["sampling"] == "shuffled" and r["relation"] != "add-remove":
            assert r["note"] == SHUFFLED_NOTE and "not a guarantee" in r["note"]
            m = fp.dpsgd(2.0, None, 20, batch_size=10, dataset_size=100, sampling="shuffled",
                         relation=r["relation"])
            assert r["mu"] == fp.privacy_report(m, discretization=DISC).mu


def test_rows_equal_privacy_report_per_scheme_and_relation(grid_result):
    for r in grid_result:
        if (r["sampling"], r["relation"]) in REFUSED:
            continue
        kw = dict(batch_size=10, dataset_size=100, sampling=r["sampling"], relation=r["relation"])
        if r["sampling"] == "truncated-poisson":
            kw["max_batch_size"] = 15
        rep = fp.privacy_report(fp.dpsgd(2.0, None, 20, **kw), deltas=(1e-5,), discretization=DISC)
        assert r["mu"] == rep.mu and r["epsilon"] == rep.epsilon_for_delta(1e-5) and r["regret"] == rep.regret
        if r["sampling"] in ("poisson", "truncated-poisson", "fixed-size"):
            assert "note" not in r
    by = {(r["sampling"], r["relation"]): r["mu"] for r in grid_result if "mu" in r}
    # zero-out is the add/remove PLD for Poisson; replace-one (sensitivity 2) is worse
    assert by[("poisson", "zero-out")] == by[("poisson", "add-remove")] < by[("poisson", "replace-one")]
    # no amplification for shuffled batches: far above the Poisson numbers
    assert by[("shuffled", "zero-out")] > by[("poisson", "zero-out")]


def test_scheme_table_round_trips_with_notes(tmp_path):
    out = tmp_path / "s.csv"
    grid = dict(GRID, sampling=["shuffled"], relation=["add-remove", "zero-out"])
    r = sweep(**grid, discretization=DISC, executor="inprocess", metrics=["mu"], output=out)
    back = read_table(out)
    assert [b.get("note") for b in back] == [x.get("note") for x in r]
    assert "mu" not in back[0] and back[1]["mu"] == r[1]["mu"]
    again = sweep(**grid, discretization=DISC, executor="inprocess", metrics=["mu"], output=out)
    assert again.computed == 0


def test_cli_sampling_and_relation_options(tmp_path):
    from typer.testing import CliRunner

    from fdpkit.cli import app

    out = tmp_path / "c.csv"
    res = CliRunner().invoke(app, ["sweep", "--noise-multiplier", "2", "--batch-size", "10", "--dataset-size",
                                   "100", "--steps", "20", "--sampling", "poisson,shuffled", "--relation",
                                   "add-remove,replace-one", "--discretization", str(DISC), "--executor",
                                   "inprocess", "--output", str(out)])
    assert res.exit_code == 0, res.output
    with out.open() as fh:
        rows = list(csv.DictReader(fh))
    assert [(r["sampling"], r["relation"]) for r in rows] == [
        ("poisson", "add-remove"), ("poisson", "replace-one"), ("shuffled", "add-remove"), ("shuffled", "replace-one")]
    assert rows[2]["mu"] == "" and rows[2]["note"].startswith("refused")
    res = CliRunner().invoke(app, ["sweep", "--noise-multiplier", "2", "--sample-rate", "0.1", "--steps", "20",
                                   "--sampling", "bogus"])
    assert res.exit_code == 2 and "sampling" in res.output


def test_unknown_scheme_is_a_clear_error():
    with pytest.raises(ValueError, match="sampling"):
        sweep([1.0], [0.1], [10], sampling=["bogus"], executor="inprocess")


def test_schemes_spelled_as_dpsgd_reads_them_are_the_canonical_rows():
    # "Shuffled", "Fixed_Size", "Truncated-Poisson" are what fp.dpsgd accepts: the grid's rows
    # are those of the canonical names (the refusal row, the note, the truncation), not a
    # failed sweep, a missing note or a max_batch_size dropped
    grid = dict(noise_multiplier=[2.0], batch_size=[10], dataset_size=[100], steps=[20], max_batch_size=[15],
                discretization=DISC, executor="inprocess", metrics=["mu"])
    odd = sweep(**grid, sampling=[" Shuffled", "Fixed_Size", "Truncated-Poisson"], relation=["add-remove", "Zero_Out"])
    same = sweep(**grid, sampling=["shuffled", "fixed-size", "truncated-poisson"], relation=["add-remove", "zero-out"])
    assert odd.rows == same.rows
    assert any(r.get("note") == SHUFFLED_NOTE for r in odd)
    with pytest.raises(ValueError, match="sampling has repeated values"):
        sweep(**grid, sampling=["poisson", "Poisson"])


def test_epsilon_only_rows_skip_the_curve_and_equal_the_report():
    # metrics=["epsilon"]: only the PLD's privacy profile is built (no trade-off curve), and
    # the number is account's (the report's), for every scheme (shuffled: the closed form)
    grid = dict(noise_multiplier=[2.0], batch_size=[50], dataset_size=[1000], steps=[10],
                sampling=["poisson", "truncated-poisson", "shuffled"],
                relation=["replace-one"], max_batch_size=[60])
    r = sweep(**grid, discretization=DISC, executor="inprocess", metrics=["epsilon"])
    for row in r:
        kw = {k: row[k] for k in ("batch_size", "dataset_size", "sampling", "relation")}
        if row["sampling"] == "truncated-poisson":
            kw["max_batch_size"] = row["max_batch_size"]
        # account's epsilon: the one privacy_report states (the report also builds the curve)
        acc = account(fp.dpsgd(2.0, None, 10, **kw), discretization=DISC)
        assert row["epsilon"] == acc.epsilon_for_delta(1e-5), row
        assert set(row) >= {"epsilon", "discretization"} and "mu" not in row
