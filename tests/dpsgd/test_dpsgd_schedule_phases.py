"""Multi-phase DP-SGD schedules whose phases repeat a single step (the same noise multiplier
and sample rate: an Opacus history, a schedule alternating two noise levels) are composed
with that step once, its counts added: a 50-phase schedule of two alternating steps took
10.8 s as 50 factors, 0.2 s as 2 (FDPKIT_THREADS=1)."""

from __future__ import annotations

import pytest

import fdpkit as fp
from fdpkit.accounting import cost, pld, single_step

Q = 0.004

SPLIT = [(0.9, Q, 300), (1.1, Q, 200), (0.9, Q, 300)]
JOINED = [(0.9, Q, 600), (1.1, Q, 200)]


def _numbers(m) -> tuple:
    r = fp.privacy_report(m)
    return r.mu, r.epsilons, r.tprs


@pytest.mark.parametrize("kwargs", [{}, {"sampling": "truncated-poisson", "dataset_size": 10000}],
                         ids=["poisson", "truncated-poisson"])
def test_repeated_phases_compose_as_their_joined_phase(kwargs):
    # before: three factors (0.9 twice), which differed from the two-phase run in the last
    # digits (a different round-off of the same certified bound); now the same composition
    if kwargs.get("sampling") == "truncated-poisson":
        split = [{"noise_multiplier": s, "sample_rate": q, "steps": t, "max_batch_size": 60} for s, q, t in SPLIT]
        joined = [{"noise_multiplier": s, "sample_rate": q, "steps": t, "max_batch_size": 60} for s, q, t in JOINED]
    else:
        split, joined = SPLIT, JOINED
    assert _numbers(fp.dpsgd_schedule(split, **kwargs)) == _numbers(fp.dpsgd_schedule(joined, **kwargs))


def test_flatten_merges_phases_with_the_same_step():
    run = fp.dpsgd_schedule(SPLIT + [(0.9, 2 * Q, 100)])
    steps = pld._flatten(run)
    assert [(s[1], t) for s, t in steps] == [(0, 600), (1, 200), (3, 100)]
    # the cost model sees the composition that runs: the joined schedule's
    assert cost.estimate_cost(run) == cost.estimate_cost(fp.dpsgd_schedule(JOINED + [(0.9, 2 * Q, 100)]))


def test_each_distinct_step_is_built_once(monkeypatch):
    # a counting wrapper around the real builder (it still builds every step)
    calls: list = []
    real = single_step.gaussian_step

    def counted(sigma, sensitivity, sample_rate, discretization, relation):
        calls.append((sigma, sample_rate, discretization))
        return real(sigma, sensitivity, sample_rate, discretization, relation)

    monkeypatch.setattr(single_step, "gaussian_step", counted)
    run = fp.dpsgd_schedule([((1.1 if i % 2 else 0.9), Q, 20) for i in range(50)])
    fp.account(run)
    assert len(calls) == len(set(calls))  # no step built twice at one discretization
    assert len({c[:2] for c in calls}) == 2
    assert len(calls) <= 2 * 4  # the composition's and the memory check's coarse grids
