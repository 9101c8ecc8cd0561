"""Issue 23: one naming grammar. The new names work; every old public name still works as a
deprecated alias that raises a DeprecationWarning naming the new spelling."""

from __future__ import annotations

import json
import subprocess
import sys
import types

import numpy as np
import pytest

import fdpkit as fp


def test_sweep_and_audit_are_packages_not_shadowed():
    import fdpkit.audit
    import fdpkit.sweep

    assert isinstance(fp.sweep, types.ModuleType) and fp.sweep is sys.modules["fdpkit.sweep"]
    assert isinstance(fp.audit, types.ModuleType) and fp.audit is sys.modules["fdpkit.audit"]
    assert fdpkit.sweep.run_sweep is fp.run_sweep and fdpkit.audit.run_audit is fp.run_audit
    assert callable(fp.sweep) and callable(fp.audit)


def test_calling_the_sweep_package_is_a_deprecated_run_sweep():
    kwargs = dict(discretization=1e-2, executor="inprocess", metrics=["mu"])
    new = fp.run_sweep([2.0], [0.01], [100], **kwargs)
    with pytest.warns(DeprecationWarning, match="run_sweep"):
        old = fp.sweep([2.0], [0.01], [100], **kwargs)
    with pytest.warns(DeprecationWarning, match="run_sweep"):
        from fdpkit.sweep import sweep

        older = sweep([2.0], [0.01], [100], **kwargs)
    assert old.rows[0]["mu"] == new.rows[0]["mu"] == older.rows[0]["mu"]


def test_calling_the_audit_package_is_a_deprecated_run_audit():
    rng = np.random.default_rng(0)
    m, n = rng.normal(1.0, 1.0, 2000), rng.normal(0.0, 1.0, 2000)
    new = fp.run_audit(m, n)
    with pytest.warns(DeprecationWarning, match="run_audit"):
        old = fp.audit(m, n)
    with pytest.warns(DeprecationWarning, match="run_audit"):
        from fdpkit.audit import audit

        older = audit(m, n)
    assert old.mu_lower == new.mu_lower == older.mu_lower


def test_import_package_then_call_in_a_fresh_interpreter():
    code = ("import warnings, fdpkit.sweep, fdpkit as fp\n"
            "warnings.simplefilter('error')\n"
            "r = fp.run_sweep([2.0], [0.01], [100], discretization=1e-2, executor='inprocess', metrics=['mu'])\n"
            "warnings.simplefilter('ignore')\n"
            "r2 = fp.sweep([2.0], [0.01], [100], discretization=1e-2, executor='inprocess', metrics=['mu'])\n"
            "print(r.rows[0]['mu'] == r2.rows[0]['mu'], type(fp.sweep).__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "CallablePackage"]


@pytest.mark.parametrize("old, new, args", [
    ("epsilon_for_delta", "epsilon_for_delta_from_mu", (1.0, 1e-5)),
    ("delta_for_epsilon", "delta_for_epsilon_from_mu", (1.0, 1.0)),
])
def test_gdp_conversions_have_their_grammatical_names(old, new, args):
    from fdpkit import convert
    from fdpkit.convert import gdp

    with pytest.warns(DeprecationWarning, match=new):
        value = getattr(fp, old)(*args)
    assert value == getattr(fp, new)(*args)
    assert getattr(convert, old) is getattr(fp, old) is getattr(gdp, old)
    # the curve method keeps the short name: one spelling per query on a curve
    curve = fp.GaussianCurve(args[0])
    assert getattr(curve, old)(args[1]) == pytest.approx(value, rel=1e-6)


def test_utility_takes_level_and_still_accepts_alpha():
    kw = dict(effect=0.2, n=15, sd=0.25, mu=1.0)
    new = fp.ztest_power(**kw, level=0.01)
    with pytest.warns(DeprecationWarning, match=r"ztest_power\(level=...\)"):
        old = fp.ztest_power(**kw, alpha=0.01)
    assert old == new
    with pytest.raises(TypeError, match="both level= and its deprecated name alpha="):
        fp.ztest_power(**kw, alpha=0.01, level=0.01)
    with pytest.raises(ValueError, match=r"level must be in \(0, 1\)"):
        fp.ztest_power(**kw, level=1.5)
    for fn, args in ((fp.two_sample_power, dict(effect=0.2, n1=50, n2=50, sd=0.25, mu=1.0)),
                     (fp.solve_ztest, dict(mu=1.0, n=100, effect=0.2, sd=0.25)),
                     (fp.mu_min_for_power_loss, dict(n=100, effect=0.2, sd=0.25))):
        with pytest.warns(DeprecationWarning, match="level"):
            fn(**args, alpha=0.05)


def test_adjusted_alpha_is_a_deprecated_adjusted_level():
    assert fp.adjusted_level(0.05, 10) == pytest.approx(0.005)
    with pytest.warns(DeprecationWarning, match="adjusted_level"):
        assert fp.adjusted_alpha(0.05, 10) == fp.adjusted_level(0.05, 10)


def test_adjusted_level_says_tests_and_correction_like_the_plan():
    """One spelling for the number of tests and their correction: ``ZTestSpec(tests=,
    correction=)``, ``fdpkit plan --tests``, the web's fields, and now ``adjusted_level``
    (which said ``n_tests=`` and ``method=``; both still work, deprecated)."""
    import inspect

    assert list(inspect.signature(fp.adjusted_level).parameters)[:3] == ["level", "tests", "correction"]
    assert {"tests", "correction"} <= {f.name for f in __import__("dataclasses").fields(fp.ZTestSpec)}
    assert fp.adjusted_level(0.05, tests=10, correction="bh", n_true=4) == pytest.approx(0.02)
    with pytest.warns(DeprecationWarning, match=r"adjusted_level\(n_tests=\.\.\.\) is deprecated.*tests="):
        assert fp.adjusted_level(0.05, n_tests=10) == pytest.approx(0.005)
    with pytest.warns(DeprecationWarning, match=r"adjusted_level\(method=\.\.\.\) is deprecated.*correction="):
        assert fp.adjusted_level(0.05, 10, method="bh", n_true=4) == pytest.approx(0.02)
    with pytest.raises(fp.ParameterError, match="^tests must be") as e:
        fp.adjusted_level(0.05, tests=0)
    assert e.value.parameter == "tests"


@pytest.mark.parametrize("args", [
    ["power", "--effect", "0.2", "--n", "15", "--sd", "0.25", "--mu", "1", "--format", "json"],
    ["plan", "utility-first", "--effect", "0.2", "--n", "100", "--sd", "0.25", "--max-relative-loss", "0.01",
     "--format", "json"],
])
def test_cli_level_option_and_its_hidden_deprecated_alpha(args):
    from typer.testing import CliRunner

    from fdpkit.cli import app

    runner = CliRunner()
    new = runner.invoke(app, [*args, "--level", "0.01"])
    old = runner.invoke(app, [*args, "--alpha", "0.01"])
    assert new.exit_code == 0 and old.exit_code == 0, (new.output, old.output)
    assert "--alpha is deprecated" in old.stderr and "--alpha" not in new.stderr
    # the same answer; the JSON's warnings also say what stderr says (the deprecation)
    old_data, new_data = json.loads(old.stdout), json.loads(new.stdout)
    assert old_data.pop("warnings") == [old.stderr.strip().removeprefix("warning: ")] + new_data.pop("warnings")
    assert old_data == new_data
    both = runner.invoke(app, [*args, "--level", "0.01", "--alpha", "0.01"])
    assert both.exit_code == 2
    help_text = runner.invoke(app, [args[0], "--help"]).stdout
    assert "--level" in help_text and "--alpha" not in help_text


def test_report_reads_epsilon_for_delta_and_tpr_like_a_curve():
    r = fp.privacy_report(fp.Gaussian(2.0))
    assert r.epsilon_for_delta(1e-5) == pytest.approx(r.curve.epsilon_for_delta(1e-5), rel=1e-9)
    assert r.tpr(1e-3) == pytest.approx(float(r.curve.tpr(1e-3)), rel=1e-12)
    with pytest.warns(DeprecationWarning, match="PrivacyReport.epsilon_for_delta"):
        assert r.epsilon_at(1e-5) == r.epsilon_for_delta(1e-5)
    with pytest.warns(DeprecationWarning, match="PrivacyReport.tpr"):
        assert r.tpr_at(1e-3) == r.tpr(1e-3)


def test_tpr_at_an_fpr_has_one_spelling():
    g = fp.GaussianCurve(2.0)
    assert g.tpr(1e-3) == g.tpr(fpr=1e-3)
    with pytest.warns(DeprecationWarning, match=r"tpr\(fpr=...\)"):
        assert g.tpr(alpha=1e-3) == g.tpr(1e-3)
    with pytest.warns(DeprecationWarning, match=r"curve.tpr\(fpr\)"):
        assert fp.attack_power(g, 1e-3) == g.tpr(1e-3)
    # moved from tests/risk/test_risk.py: the deprecated name still refuses an optimistic curve
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match="bound is 'upper'"):
        fp.attack_power(fp.PiecewiseLinearCurve([0, 1], [1, 0], bound="upper"), 0.1)


#: Deprecated public names (issue 23) that library code must not use: pytest may turn
#: warnings into errors, and a deprecated call inside fdpkit would warn on the user's behalf.
DEPRECATED_FUNCTIONS = {"epsilon_for_delta", "delta_for_epsilon", "adjusted_alpha", "attack_power"}
DEPRECATED_METHODS = {"epsilon_at", "tpr_at"}


def test_library_code_never_uses_a_deprecated_name():
    import ast
    from pathlib import Path

    root = Path(fp.__file__).parent
    found = []
    for path in sorted(root.rglob("*.py")):
        if path.name == "__init__.py" or path.name == "_deprecation.py":
            continue  # the packages re-export the aliases; _deprecation makes them
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("fdpkit"):
                found += [f"{path.relative_to(root)}:{node.lineno} imports {a.name}" for a in node.names
                          if a.name in DEPRECATED_FUNCTIONS
                          or (a.name in ("sweep", "audit") and node.module in ("fdpkit.sweep", "fdpkit.audit"))]
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                f = node.func
                if f.attr in DEPRECATED_METHODS and not (isinstance(f.value, ast.Name) and f.value.id == "self"
                                                         and path.name == "totals.py"):
                    found.append(f"{path.relative_to(root)}:{node.lineno} calls .{f.attr}()")
                if isinstance(f.value, ast.Name) and f.value.id in ("fp", "fdpkit") and \
                        f.attr in DEPRECATED_FUNCTIONS | {"sweep", "audit"}:
                    found.append(f"{path.relative_to(root)}:{node.lineno} calls fp.{f.attr}()")
                if f.attr == "tpr" and any(k.arg == "alpha" for k in node.keywords):
                    found.append(f"{path.relative_to(root)}:{node.lineno} calls .tpr(alpha=...)")
    assert not found, "\n".join(found)
