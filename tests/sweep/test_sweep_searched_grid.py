"""A sweep row of a heavy-tailed setting reads the grid Eq. (5) of ``accounting._resolution``
searched, as :func:`fdpkit.privacy_report` does (``tests/accounting/test_accounting_grid_probe.py``)."""

import fdpkit as fp
from fdpkit.sweep import run_sweep


def test_a_sweep_row_reads_the_searched_grid_as_the_report_does():
    """A sweep's row holds privacy_report's numbers for its setting, to the last digit: the
    same searched grid (its discretization column) and the same mu."""
    mech = fp.dpsgd(0.6, 1e-7, 10_000)
    r = fp.privacy_report(mech)
    (row,) = run_sweep([0.6], [1e-7], [10_000], executor="inprocess", metrics=["mu"])
    assert row["discretization"] == r.provenance["discretization"] == 3e-4
    assert row["mu"] == r.mu
