"""Mechanism trees (issue 23): one ``walk()``, DP-SGD normalised once (no ``globals()``
rewriting in accounting/rdp.py), ``Mechanism.from_dict`` as the registry hook, one public
``check_curve`` and tilted's public ``plan()``."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import numpy as np
import pytest

import fdpkit as fp
from fdpkit.accounting import cost, rdp, tilted
from fdpkit.accounting._pld_adapter import pmf_arrays
from fdpkit.accounting.pld import gaussian_pld
from fdpkit.curves import check_curve
from fdpkit.mechanisms import (DPSGD, Composed, Gaussian, Laplace, Mechanism, Repeated, Subsampled,
                               elementary_tree, leaves, mechanism_from_dict, walk)

PKG = Path(fp.__file__).resolve().parent


def test_walk_is_pre_order_with_multiplicities():
    g, lap = Gaussian(1.0), Laplace(2.0)
    m = Repeated(Composed((Repeated(g, 3), Subsampled(lap, 0.5))), 2)
    got = [(type(n).__name__, t) for n, t in walk(m)]
    assert got == [("Repeated", 1), ("Composed", 2), ("Repeated", 2), ("Gaussian", 6), ("Subsampled", 2),
                   ("Laplace", 2)]
    assert list(leaves(m)) == [(g, 6), (lap, 2)]
    # into= stops the descent below a node (the node itself is still visited)
    got = [type(n).__name__ for n, _ in walk(m, into=lambda n: not isinstance(n, Subsampled))]
    assert got == ["Repeated", "Composed", "Repeated", "Gaussian", "Subsampled"]


def test_elementary_tree_replaces_dpsgd_where_it_has_a_form():
    run = fp.dpsgd(1.0, 0.01, 10)
    fixed = fp.dpsgd(1.0, batch_size=10, dataset_size=100, steps=5, sampling="fixed-size", relation="replace-one")
    m = Composed((run, fixed, Gaussian(2.0)))
    plain = elementary_tree(m)
    assert plain.parts[0] == run.elementary()
    assert plain.parts[1] is fixed  # no elementary form: kept
    assert plain.parts[2] is m.parts[2]
    g = Repeated(Gaussian(1.0), 4)
    assert elementary_tree(g) is g  # nothing to change: the same object


def test_rdp_reads_dpsgd_once_without_rewriting_itself():
    src = inspect.getsource(rdp)
    assert "globals()" not in src
    assert not hasattr(rdp.rdp_epsilons, "__wrapped__")
    run = fp.dpsgd(2.0, 0.05, 30)
    t = [2.0, 4.0, 8.0]
    assert np.array_equal(rdp.rdp_epsilons(run, t), rdp.rdp_epsilons(run.elementary(), t))
    nested = Composed((run, fp.ZCDP(0.1)))
    assert np.array_equal(rdp.rdp_epsilons(nested, t),
                          rdp.rdp_epsilons(Composed((run.elementary(), fp.ZCDP(0.1))), t))
    assert rdp.tight_rho(run).rho == rdp.tight_rho(run.elementary()).rho
    assert rdp.zcdp_rho(fp.dpsgd(2.0, batch_size=10, dataset_size=100, steps=20, sampling="shuffled",
                                 relation="zero-out")) == pytest.approx(0.5 * 2 / 4.0)
    acc = rdp.renyi_accounting(nested)
    assert acc.method == "RDP" and acc.mechanism is nested


def test_tree_walks_are_not_hand_written_any_more():
    # rdp's contains_renyi / _list_orders and cost's _renyi_cost read the tree through walk()
    from fdpkit.accounting import pld

    for fn in (rdp.contains_renyi, rdp._list_orders, cost._renyi_cost, pld._flatten):
        assert "walk(" in inspect.getsource(fn)
    assert rdp.contains_renyi(Composed((Repeated(Subsampled(Gaussian(1.0), 0.1), 3), fp.RDP([2], [0.1]))))
    assert not rdp.contains_renyi(fp.dpsgd(1.0, 0.01, 10))


def test_from_dict_is_a_registry_hook():
    base = ast.parse((PKG / "mechanisms" / "base.py").read_text(encoding="utf-8"))
    imported = {n.module for n in ast.walk(base) if isinstance(n, ast.ImportFrom)}
    assert not any(m and m.startswith("fdpkit.mechanisms.") for m in imported)
    assert Gaussian.from_dict({"sigma": 2.0}) == Gaussian(2.0)
    assert Mechanism.from_dict({"kind": "laplace", "scale": 1.0}) == Laplace(1.0)
    run = fp.dpsgd(1.1, batch_size=256, dataset_size=60000, epochs=2)
    assert mechanism_from_dict(run.to_dict()) == run
    assert DPSGD.from_dict(run.to_dict()) == run
    with pytest.raises(ValueError, match="kind must be 'gaussian'"):
        Gaussian.from_dict({"kind": "laplace", "sigma": 1.0})
    m = Repeated(Composed((Gaussian(1.0), run)), 2)
    assert mechanism_from_dict(m.to_dict()) == m


def test_one_public_check_curve():
    defs = []
    for path in sorted(PKG.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        defs += [str(path.relative_to(PKG)) for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "check_curve"]
    assert defs == ["curves/base.py"]
    assert fp.curves.check_curve is check_curve
    with pytest.raises(TypeError, match="curves\\[1\\] must be a TradeOffCurve, got str"):
        check_curve("x", "curves[1]")
    upper = fp.PiecewiseLinearCurve([0, 1], [1, 0], bound="upper")
    assert check_curve(upper) is upper
    with pytest.raises(ValueError, match="bound is 'upper'.*would understate it"):
        fp.attack_power(upper, 0.1)
    with pytest.raises(ValueError, match="bound is 'upper'.*composing it"):
        fp.compose_curves(upper, fp.GaussianCurve(1.0))


def test_tilted_plan_is_what_compose_uses_and_what_the_cost_model_reads():
    step = pmf_arrays(gaussian_pld(2.0, 1.0, 0.05, 1e-3))
    parts = [(step[0], 40)]
    pl = tilted.plan(parts)
    assert pl.start <= 0 <= pl.stop and len(pl.windows) == len(pl.tilts) >= 1
    out = tilted.compose(parts)
    assert out.losses[0] >= pl.start * 1e-3 - 1e-9
    src = inspect.getsource(cost)
    assert "tilted._" not in src and "noqa: SLF001" not in src
