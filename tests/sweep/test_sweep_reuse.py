"""Step reuse inside a sweep: settings that differ only in their step count share the
single-step PLD, and every row still equals the standalone accounting of its setting."""

from __future__ import annotations

import pytest

import fdpkit as fp
from fdpkit.accounting import account, shared_single_steps
from fdpkit.accounting import pld as acc_pld
from fdpkit.fit import fit_gdp
from fdpkit.sweep import run_sweep as sweep
from fdpkit.sweep.runner import _options
from fdpkit.sweep.evaluate import evaluate_group

#: Coarse discretization: the suite stays fast; the numbers are still certified.
DISC = 1e-3
#: The shared route runs the very same composition on the very same single-step arrays as
#: a standalone report, so per-T results agree to the last digit (no tolerance needed).
SHARED_TOL = 0.0


def _counting(monkeypatch):
    calls = []
    original = acc_pld._phase_pld

    def counted(m, ph, d):
        calls.append((m.sampling, ph.noise_multiplier, ph.sample_rate, ph.steps))
        return original(m, ph, d)

    monkeypatch.setattr(acc_pld, "_phase_pld", counted)
    return calls


def test_single_step_built_once_per_group(monkeypatch):
    calls = _counting(monkeypatch)
    group = [dict(noise_multiplier=1.5, sample_rate=0.05, steps=t) for t in (20, 60, 120)]
    rows = evaluate_group(group, _options(1e-5, (1e-3,), ["mu"], DISC))
    assert len(rows) == 3
    assert len(calls) == 1  # one single step for three step counts
    calls.clear()
    for t in (20, 60):  # outside a sweep every report builds its own
        account(fp.dpsgd(1.5, 0.05, t), discretization=DISC)
    assert len(calls) == 2


@pytest.mark.parametrize("sigma, q", [(1.0, 0.05), (2.0, 0.2)])
def test_shared_route_matches_independent_accounting_per_step_count(sigma, q):
    steps = [10, 100, 400]
    shared = sweep([sigma], [q], steps, discretization=DISC, executor="inprocess",
                   metrics=["mu", "regret", "epsilon", "tpr", "advantage"])
    for row in shared:
        rep = fp.privacy_report(fp.dpsgd(sigma, q, row["steps"]), deltas=(1e-5,), fprs=(1e-3,),
                                discretization=DISC)
        # never optimistic, and in fact identical
        assert row["mu"] >= rep.mu - SHARED_TOL and abs(row["mu"] - rep.mu) <= SHARED_TOL
        assert row["epsilon"] >= rep.epsilon_for_delta(1e-5) - SHARED_TOL
        assert row["epsilon"] == rep.epsilon_for_delta(1e-5)
        assert row["tpr_at_0.001"] == rep.tpr(1e-3) and row["regret"] == rep.regret
        assert row["advantage"] == rep.advantage
    mus = [r["mu"] for r in shared]
    assert mus == sorted(mus)  # more steps, more leakage


def test_shared_cache_keeps_schemes_and_relations_apart():
    runs = [fp.dpsgd(2.0, 0.1, 30), fp.dpsgd(2.0, 0.1, 30, relation="replace-one"),
            fp.dpsgd(2.0, None, 30, batch_size=10, dataset_size=100, sampling="fixed-size", relation="zero-out"),
            fp.dpsgd(2.0, None, 30, batch_size=10, dataset_size=100, sampling="truncated-poisson",
                     max_batch_size=15),
            fp.dpsgd(3.0, 0.1, 30), fp.dpsgd(2.0, 0.05, 30)]
    alone = [fit_gdp(account(m, discretization=DISC).curve).mu for m in runs]
    with shared_single_steps():
        together = [fit_gdp(account(m, discretization=DISC).curve).mu for m in runs]
        again = [fit_gdp(account(m, discretization=DISC).curve).mu for m in runs]
    assert together == alone == again
    assert len(set(alone)) == len(alone)


def test_schedule_with_repeated_phase_is_unchanged_by_sharing():
    from fdpkit.mechanisms import Phase
    from fdpkit.mechanisms.training import DPSGD

    m = DPSGD((Phase(2.0, 0.05, 40), Phase(1.0, 0.05, 10), Phase(2.0, 0.05, 40)))
    alone = fit_gdp(account(m, discretization=DISC).curve).mu
    with shared_single_steps():
        shared = fit_gdp(account(m, discretization=DISC).curve).mu
    assert shared == alone


def _worker_env(group, options):
    import os

    return [{"openblas": os.environ.get("OPENBLAS_NUM_THREADS"), "fdpkit": os.environ.get("FDPKIT_THREADS")}]


def test_pool_workers_run_one_blas_thread(monkeypatch):
    """N workers use N cores: each worker starts with one BLAS thread (no oversubscription)."""
    import os

    from fdpkit.sweep.executors import run_processes

    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    got = []
    run_processes([[{}]], {}, got.extend, workers=1, fn=_worker_env)
    assert got == [{"openblas": "1", "fdpkit": "1"}]
    assert "OPENBLAS_NUM_THREADS" not in os.environ  # restored in this process


def _dask_worker_env(group, options):
    import os

    return [{"openblas": os.environ.get("OPENBLAS_NUM_THREADS"), "fdpkit": os.environ.get("FDPKIT_THREADS"),
             "malloc_trim": os.environ.get("MALLOC_TRIM_THRESHOLD_")}]


def test_dask_local_workers_keep_the_default_allocator():
    """fdpkit's LocalCluster: one BLAS thread, one accounting thread, and no
    MALLOC_TRIM_THRESHOLD_ (Dask's default, which switches off glibc's dynamic mmap
    threshold and made every large NumPy temporary a fresh mmap: groups ran ~1.6x slower)."""
    from fdpkit.sweep.executors import run_dask

    got = []
    run_dask([[{}]], {}, got.extend, dask_local=1, fn=_dask_worker_env)
    assert got == [{"openblas": "1", "fdpkit": "1", "malloc_trim": None}]
