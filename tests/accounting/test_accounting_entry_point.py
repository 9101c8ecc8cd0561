"""One accounting entry point (issue 23): ``fp.account`` is the only module-level ``account``,
it takes the exact closed form wherever one exists, and accounting/ and mechanisms/ hold no
import cycles."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import numpy as np
import pytest

import fdpkit as fp
import fdpkit.accounting as accounting
from fdpkit.accounting import entry_point
from fdpkit.accounting.pld import dpsgd_pld
from fdpkit.accounting.pld_curve import curve_from_pld

PKG = Path(fp.__file__).resolve().parent

#: The example of issue 23, on which the two former ``account`` functions disagreed.
SHUFFLED = dict(batch_size=10, dataset_size=100, steps=4, sampling="shuffled", relation="replace-one")


def _module_level_defs(name: str) -> list[str]:
    out = []
    for path in sorted(PKG.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        out += [str(path.relative_to(PKG)) for node in tree.body
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name]
    return out


def test_exactly_one_module_level_account():
    assert _module_level_defs("account") == ["accounting/entry_point.py"]
    assert _module_level_defs("tradeoff_curve") == ["accounting/entry_point.py"]


def test_every_public_route_is_the_one_account():
    assert fp.account is accounting.account is entry_point.account
    assert fp.tradeoff_curve is accounting.tradeoff_curve is entry_point.tradeoff_curve


def test_shuffled_example_is_the_exact_closed_form():
    # an example takes part in P = ceil(4 / floor(100 / 10)) = 1 step, a Gaussian of
    # sensitivity Delta = 2 (replace-one) and noise 2: exactly G_mu, mu = sqrt(P) Delta / sigma = 1
    m = fp.dpsgd(2.0, **SHUFFLED)
    acc = fp.account(m)
    assert acc.method == "closed form"
    assert acc.discretization is None and acc.pld is None
    assert isinstance(acc.curve, fp.GaussianCurve) and acc.curve.mu == 1.0
    assert acc.curve.bound == "exact"
    assert repr(fp.tradeoff_curve(m)) == "GaussianCurve(mu=1.0)"
    # the same closed form at any discretization, budget or not
    coarse = fp.account(m, discretization=1e-2, budget=accounting.CostBudget())
    assert coarse.method == "closed form" and coarse.curve.mu == 1.0


def test_shuffled_closed_form_is_tight_against_the_numeric_bound():
    # the numeric PLD route (what the second account returned) is a sound lower bound of the
    # same curve (beta never above the closed form's, so TPR never below it) and only close
    m = fp.dpsgd(2.0, **SHUFFLED)
    numeric = curve_from_pld(dpsgd_pld(m, 1e-4))
    exact = fp.account(m).curve
    alphas = np.linspace(0.0, 1.0, 201)
    loose, tight = numeric.tpr(alphas), exact.tpr(alphas)
    assert np.all(loose >= tight - 1e-12)
    assert 0 < np.max(loose - tight) < 1e-2
    assert math.isclose(fp.account(m).epsilon_for_delta(1e-5), exact.epsilon_for_delta(1e-5))


def test_shuffled_group_privacy_and_schedules_stay_closed_form():
    m = fp.dpsgd(2.0, **{**SHUFFLED, "relation": "zero-out"}, unit="user", examples_per_user=3)
    acc = fp.account(m)
    assert acc.method == "closed form"
    assert isinstance(acc.curve, fp.GaussianCurve)
    assert acc.curve.mu == 3 * 0.5  # k mu, Delta = 1 for zero-out


def test_no_import_cycles_in_accounting_and_mechanisms():
    grimp = pytest.importorskip("grimp")
    graph = grimp.build_graph("fdpkit", exclude_type_checking_imports=True)
    for package in ("fdpkit.accounting", "fdpkit.mechanisms"):
        modules = sorted(m for m in graph.modules if m.startswith(package + "."))
        for m in modules:
            for other in modules:
                if other != m and graph.chain_exists(importer=m, imported=other) \
                        and graph.chain_exists(importer=other, imported=m):
                    pytest.fail(f"import cycle: {m} <-> {other}")


def test_accounting_pld_is_dp_accountings_object_built_on_first_access():
    # Accounting holds fdpkit's arrays; .pld is dp_accounting's PrivacyLossDistribution, built
    # on first access and the same object afterwards; the profile reads the arrays either way
    import dataclasses
    import pickle

    from dp_accounting.pld.privacy_loss_distribution import PrivacyLossDistribution

    from fdpkit.accounting._pld_adapter import NativePld, pmf_arrays

    m = fp.dpsgd(1.5, 0.02, 300)
    acc = fp.account(m, discretization=1e-3)
    assert isinstance(vars(acc)["pld"], NativePld) and "pld" not in repr(acc)
    eps = acc.epsilon_for_delta(1e-5)
    assert isinstance(vars(acc)["pld"], NativePld)  # epsilon_for_delta built nothing
    copy = pickle.loads(pickle.dumps(acc))
    pld = acc.pld
    assert type(pld) is PrivacyLossDistribution and acc.pld is pld and vars(acc)["pld"] is pld
    assert acc.epsilon_for_delta(1e-5) == eps == copy.epsilon_for_delta(1e-5)
    assert acc.delta_for_epsilon(1.0) == float(pld.get_delta_for_epsilon(1.0)) == copy.delta_for_epsilon(1.0)
    assert type(copy.pld) is PrivacyLossDistribution
    for a, b in zip(pmf_arrays(pld), pmf_arrays(copy.pld)):
        assert (a is None and b is None) or a.probs.tobytes() == b.probs.tobytes()
    same = dataclasses.replace(acc, method="PLD")
    assert same.pld is pld and same.epsilon_for_delta(1e-5) == eps
    # the field's default and a closed form: None, as before
    assert accounting.Accounting(m, acc.curve, "PLD", 1e-3).pld is None and accounting.Accounting.pld is None
    assert [f.default for f in dataclasses.fields(accounting.Accounting) if f.name == "pld"] == [None]
    with pytest.raises(dataclasses.FrozenInstanceError):
        acc.pld = None
