"""Issue #23: DP-SGD is recognised by asking the mechanism (``Mechanism.training_run()``,
``Mechanism.unbounded_loss``), never by ``isinstance(…, DPSGD)``, so a new kind of training
run plugs in without editing accounting, reports or statements."""

from __future__ import annotations

import pathlib
import re
from dataclasses import dataclass

import numpy as np

import fdpkit as fp
from fdpkit.accounting.work_limits import min_noise, tree_size
from fdpkit.accounting.cost import estimate_cost
from fdpkit.guarantee.privacy import _unbounded_loss
from fdpkit.mechanisms import (
    DPSGD,
    RDP,
    ZCDP,
    Composed,
    Gaussian,
    Laplace,
    Mechanism,
    PureDP,
    Repeated,
    Subsampled,
    dpsgd,
    training_run,
)

SRC = pathlib.Path(fp.__file__).resolve().parent


@dataclass(frozen=True)
class _WrappedRun(Mechanism):
    """A mechanism kind the library does not know (no ``kind``: not registered) that is a
    training run: it must be accounted as the run it wraps."""

    run: DPSGD

    def training_run(self) -> DPSGD:
        return self.run


def test_no_isinstance_dpsgd_left_in_the_library():
    pattern = re.compile(r"isinstance\([^)]*\bDPSGD\b")
    hits = [f"{p.relative_to(SRC)}:{i}" for p in SRC.rglob("*.py")
            for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if pattern.search(line)]
    assert hits == []


def test_training_run_hook_defaults():
    run = dpsgd(1.0, 0.01, 10)
    assert run.training_run() is run and training_run(run) is run
    assert training_run(Gaussian(1.0)) is None and training_run(Repeated(run, 2)) is None
    assert training_run("not a mechanism") is None


def test_unbounded_loss_per_kind():
    assert all(k.unbounded_loss for k in (Gaussian, DPSGD, ZCDP, RDP))
    assert not any(k.unbounded_loss for k in (Laplace, PureDP, Composed, Repeated, Subsampled, Mechanism))
    assert _unbounded_loss(Composed((Laplace(1.0), Subsampled(Gaussian(2.0), 0.1))))
    assert not _unbounded_loss(Repeated(Laplace(1.0), 3))


def test_a_new_training_run_kind_plugs_in():
    for run in (dpsgd(2.0, 0.01, 50),
                dpsgd(2.0, batch_size=10, dataset_size=100, steps=4, sampling="shuffled", relation="replace-one")):
        wrapped = _WrappedRun(run)
        a, b = fp.account(wrapped), fp.account(run)
        assert a.method == b.method and a.curve.bound == b.curve.bound
        grid = np.linspace(0.0, 1.0, 1001)
        assert np.array_equal(a.curve.beta(grid), b.curve.beta(grid))
        assert estimate_cost(wrapped) == estimate_cost(run)
        assert tree_size(wrapped) == tree_size(run)
        assert min_noise(wrapped) == min_noise(run)
