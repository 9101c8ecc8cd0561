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


#: Heavy-tailed settings whose grid the library's rule searches (Eq. 5), fast to account.
HEAVY = dict(noise_multiplier=[0.7], sample_rate=[1e-7, 1e-6], steps=[1000])


def _count_accountings(monkeypatch):
    """Calls of the accountant's DP-SGD route in this process (each is one grid accounted)."""
    from fdpkit.accounting import entry_point

    calls = []
    real = entry_point.account_dpsgd

    def counted(m, d):
        calls.append(d)
        return real(m, d)

    monkeypatch.setattr(entry_point, "account_dpsgd", counted)
    return calls


def test_the_search_runs_in_the_workers_not_the_main_process(monkeypatch, tmp_path):
    # the main process searched every heavy-tailed setting's grid one after the other before
    # any work (accounting 2-3 grids each), and the worker accounted the chosen grid again
    calls = _count_accountings(monkeypatch)
    out = tmp_path / "h.csv"
    r = run_sweep(**HEAVY, executor="processes", workers=2, metrics=["mu"], output=out)
    assert calls == []
    for row in r:
        rep = fp.privacy_report(fp.dpsgd(0.7, row["sample_rate"], 1000))
        assert row["discretization"] == rep.provenance["discretization"] and row["mu"] == rep.mu
    calls.clear()
    again = run_sweep(**HEAVY, executor="processes", workers=2, metrics=["mu"], output=out)
    assert again.computed == 0 and again.reused == 2 and again.rows == r.rows and calls == []


def test_a_searched_row_accounts_each_grid_once_as_the_report_does(monkeypatch):
    # in one process: the sweep accounts the grids the reports account, no more (the chosen
    # grid was accounted by the search and again for the row)
    calls = _count_accountings(monkeypatch)
    reports = [fp.privacy_report(fp.dpsgd(0.7, q, 1000)) for q in HEAVY["sample_rate"]]
    by_reports = list(calls)
    calls.clear()
    r = run_sweep(**HEAVY, executor="inprocess", metrics=["mu", "epsilon"])
    assert sorted(calls) == sorted(by_reports) and len(calls) > 2
    assert [row["mu"] for row in r] == [rep.mu for rep in reports]
    assert [row["epsilon"] for row in r] == [rep.epsilon_for_delta(1e-5) for rep in reports]
    eps_only = run_sweep(**HEAVY, executor="inprocess", metrics=["epsilon"])
    assert [row["epsilon"] for row in eps_only] == [row["epsilon"] for row in r]
