"""Issue #23: the recursive folds over mechanism trees (closed-form mu, zCDP rho, RDP
epsilons, the Rényi tail, the noise-only test) are written with the one
``fdpkit.mechanisms.fold`` and give bit-identical floats to the hand-written recursions
they replaced (kept here as the reference)."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from fdpkit.accounting import closed_form, rdp
from fdpkit.mechanisms import (
    ZCDP,
    ApproxDP,
    Composed,
    Gaussian,
    Laplace,
    PureDP,
    Repeated,
    Subsampled,
    dpsgd,
    fold,
)


# --- the former hand-written recursions (reference) -----------------------------------

def _old_gaussian_mu(m):
    if isinstance(m, Gaussian):
        return m.mu
    if m.training_run() is not None:
        return closed_form._dpsgd_mu(m.training_run())
    if isinstance(m, Subsampled) and m.sample_rate == 1.0:
        return _old_gaussian_mu(m.inner)
    if isinstance(m, Repeated):
        inner = _old_gaussian_mu(m.inner)
        return None if inner is None else inner * math.sqrt(m.times)
    if isinstance(m, Composed):
        mus = [_old_gaussian_mu(p) for p in m.parts]
        return None if any(x is None for x in mus) else math.sqrt(sum(x * x for x in mus))
    return None


def _old_zcdp_rho(m):
    if isinstance(m, ZCDP):
        return m.rho
    if isinstance(m, Gaussian):
        return 0.5 * m.mu ** 2
    if isinstance(m, Subsampled) and m.sample_rate == 1.0:
        return _old_zcdp_rho(m.inner)
    if isinstance(m, Repeated):
        inner = _old_zcdp_rho(m.inner)
        return None if inner is None else inner * m.times
    if isinstance(m, Composed):
        parts = [_old_zcdp_rho(p) for p in m.parts]
        return None if any(p is None for p in parts) else float(sum(parts))
    return None


def _old_rdp(m, t):
    if isinstance(m, Subsampled):
        if m.sample_rate == 1.0:
            return _old_rdp(m.inner, t)
        return rdp._rdp_leaf(m, t)
    if isinstance(m, Repeated):
        return m.times * _old_rdp(m.inner, t)
    if isinstance(m, Composed):
        return np.sum([_old_rdp(p, t) for p in m.parts], axis=0)
    return rdp._rdp_leaf(m, t)


def _old_noise_only(m):
    if isinstance(m, Gaussian):
        return True
    if isinstance(m, Subsampled):
        return isinstance(m.inner, Gaussian)
    if isinstance(m, Repeated):
        return _old_noise_only(m.inner)
    if isinstance(m, Composed):
        return all(_old_noise_only(p) for p in m.parts)
    return False


def _old_tail(m):
    if isinstance(m, Subsampled):
        return _old_tail(m.inner)
    if isinstance(m, Repeated):
        s, c = _old_tail(m.inner)
        return s * m.times, c * m.times
    if isinstance(m, Composed):
        parts = [_old_tail(p) for p in m.parts]
        return sum(p[0] for p in parts), sum(p[1] for p in parts)
    return rdp._tail_leaf(m)


def _tree(rng: random.Random, depth: int):
    r = rng.random()
    if depth == 0 or r < 0.35:
        kind = rng.randrange(6)
        if kind == 0:
            return Gaussian(rng.uniform(0.3, 7.0), rng.choice([1.0, 0.7, 2.0]))
        if kind == 1:
            return Laplace(rng.uniform(0.5, 5.0))
        if kind == 2:
            return ZCDP(rng.uniform(0.01, 0.9))
        if kind == 3:
            return PureDP(rng.uniform(0.1, 2.0))
        if kind == 4:
            return ApproxDP(rng.uniform(0.1, 2.0), rng.choice([0.0, 1e-6]))
        return Gaussian(rng.uniform(0.3, 7.0))
    if r < 0.55:
        return Repeated(_tree(rng, depth - 1), rng.randrange(1, 50))
    if r < 0.7:
        inner = _tree(rng, depth - 1)
        if rng.random() < 0.5:
            inner = Gaussian(rng.uniform(0.5, 5.0))
        return Subsampled(inner, rng.choice([1.0, 0.01, 0.3]))
    return Composed(tuple(_tree(rng, depth - 1) for _ in range(rng.randrange(2, 5))))


TREES = [_tree(random.Random(seed), 4) for seed in range(300)] + [
    dpsgd(2.0, 0.01, 50), Composed((dpsgd(2.0, 1.0, 10), Repeated(Gaussian(3.0), 7))),
    dpsgd(2.0, batch_size=10, dataset_size=100, steps=4, sampling="shuffled", relation="replace-one"),
]


def _same(a, b) -> bool:
    if a is None or b is None:
        return a is b
    return np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True)


@pytest.mark.parametrize("i", range(len(TREES)))
def test_folds_are_bit_identical_to_the_recursions(i):
    m = TREES[i]
    assert _same(closed_form._gaussian_mu(m), _old_gaussian_mu(m))
    e = rdp.elementary_tree(m)
    assert _same(rdp._zcdp_rho(e), _old_zcdp_rho(e))
    assert rdp._noise_only(e) is _old_noise_only(e)
    assert _same(rdp._tail(e), _old_tail(e))
    t = rdp.RDP_ORDERS_DEFAULT
    try:
        old = _old_rdp(e, t)
    except ValueError as exc:
        with pytest.raises(ValueError, match=str(exc)[:30]):
            rdp._rdp_epsilons(e, t)
    else:
        assert _same(rdp._rdp_epsilons(e, t), old)


def test_fold_passes_sampling_through_only_where_asked():
    m = Subsampled(Repeated(Gaussian(1.0), 2), 1.0)
    kinds = dict(repeat=lambda v, t: f"{v}x{t}", compose="+".join)
    assert fold(m, lambda n: n.kind, **kinds) == "gaussianx2"
    assert fold(m, lambda n: n.kind, through=lambda n: False, **kinds) == "subsampled"


def _old_releases(m):
    if isinstance(m, Composed):
        return sum(_old_releases(p) for p in m.parts)
    if isinstance(m, Repeated):
        return m.times * _old_releases(m.inner)
    if hasattr(m, "phases"):
        return int(m.steps)
    inner = getattr(m, "inner", None)
    return _old_releases(inner) if inner is not None else 1


def _old_pure_epsilon(m):
    if isinstance(m, Laplace):
        return m.epsilon
    if isinstance(m, PureDP):
        return float(m.epsilon)
    if isinstance(m, Repeated):
        inner = _old_pure_epsilon(m.inner)
        return None if inner is None else m.times * inner
    if isinstance(m, Composed):
        parts = [_old_pure_epsilon(p) for p in m.parts]
        return None if any(p is None for p in parts) else sum(parts)
    return None


def test_web_releases_and_ledger_pure_epsilon_folds_match_the_recursions():
    from fdpkit.ledger.timeline import _pure_epsilon
    from fdpkit.web.routers.audit import _releases

    extra = [Subsampled(Repeated(Laplace(1.0), 3), 1.0), Repeated(Composed((Laplace(1.0), Laplace(2.0))), 5),
             Composed((Repeated(dpsgd(1.0, 0.1, 30), 2), Laplace(0.5)))]
    for m in TREES + extra:
        assert _releases(m) == _old_releases(m)
        assert _same(_pure_epsilon(m), _old_pure_epsilon(m))
