"""``import fdpkit`` is lazy (issue 30): it loads no maths, and the public API still works.

The start-up checks run in fresh subprocesses and read ``sys.modules`` there, so that a
module imported eagerly again (say ``from fdpkit.accounting import ...`` added to
``fdpkit/__init__.py``) fails here instead of silently costing every user a second.
"""

import ast
import inspect
import json
import os
import pydoc
import subprocess
import sys
from pathlib import Path

import pytest

import fdpkit as fp

SRC = Path(fp.__file__).resolve().parent.parent
STUB = Path(fp.__file__).with_suffix(".pyi")

#: Modules ``import fdpkit`` must not load (each costs 0.05 to 0.5 s).
HEAVY = ("numpy", "scipy", "dp_accounting", "matplotlib", "typer", "rich", "sqlalchemy", "dask",
         "distributed", "pyarrow", "fastapi", "fpdf")

#: Modules a closed-form report (no privacy-loss distribution built) must not load.
PLD_ONLY = ("dp_accounting", "scipy.signal", "scipy.stats", "matplotlib")

#: Seconds allowed for one subprocess (generous: the machine may be busy).
SUBPROCESS_TIMEOUT = 120


def loaded_after(code: str, modules: tuple[str, ...]) -> dict:
    """Run ``code`` in a fresh interpreter; return its printed value (if any) and which of
    ``modules`` it left in ``sys.modules``."""
    script = (f"import sys, json\n{code}\n"
              f"print(json.dumps({{'loaded': [m for m in {list(modules)!r} if m in sys.modules],"
              f" 'value': globals().get('value')}}))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                          timeout=SUBPROCESS_TIMEOUT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_import_fdpkit_loads_no_heavy_module():
    got = loaded_after("import fdpkit", HEAVY)
    assert got["loaded"] == [], f"import fdpkit loaded {got['loaded']}"


def test_import_fdpkit_and_listing_names_loads_nothing():
    got = loaded_after("import fdpkit\nvalue = len(dir(fdpkit)) + len(fdpkit.__all__)", HEAVY)
    assert got["loaded"] == []
    assert got["value"] > 200


def test_closed_form_report_builds_no_pld():
    # the names used by checks outside this repository
    got = loaded_after("import fdpkit as fp\nvalue = fp.privacy_report(fp.Gaussian(2.0)).mu", PLD_ONLY)
    assert got["value"] == pytest.approx(0.5)
    assert got["loaded"] == [], f"a closed-form report loaded {got['loaded']}"


def test_a_native_pld_report_loads_no_dp_accounting():
    # the PLD is built and composed by fdpkit (single_step, tilted): the report reads its
    # arrays, and dp_accounting (with scipy.signal, about half a second) is imported only
    # when someone asks for its object: Accounting.pld, on first access
    code = ("import fdpkit as fp\n"
            "m = fp.dpsgd(1.1, 256/60000, 7032)\n"
            "mu = fp.privacy_report(m).mu\n"
            "before = [x for x in ('dp_accounting', 'scipy.signal') if x in sys.modules]\n"
            "acc = fp.account(m)\n"
            "pld = acc.pld\n"
            "from dp_accounting.pld.privacy_loss_distribution import PrivacyLossDistribution\n"
            "value = [mu, before, type(pld) is PrivacyLossDistribution, pld is acc.pld,\n"
            "         acc.delta_for_epsilon(1.0) == float(pld.get_delta_for_epsilon(1.0))]")
    got = loaded_after(code, ("dp_accounting",))
    # (0.42917797978118455 before the Chernoff window's stall fix: its top moved from loss 6.2773 to
    # 6.1478, moving 8e-14 of mass to the thinned curve's ends; the fit reads 3.4e-8 higher, never lower)
    assert got["value"] == [0.4291779945484626, [], True, True, True]
    assert got["loaded"] == ["dp_accounting"]  # loaded by the access to acc.pld only


@pytest.mark.parametrize("mechanism", [
    "fp.dpsgd(2.0, 0.05, 20)",
    "fp.dpsgd(1.2, batch_size=50, dataset_size=1000, steps=30, sampling='fixed-size', relation='replace-one')",
    "fp.dpsgd(1.2, batch_size=50, dataset_size=1000, steps=30, sampling='fixed-size', relation='zero-out')",
    "fp.dpsgd(1.2, batch_size=50, dataset_size=1000, steps=30, sampling='shuffled', relation='replace-one')",
])
def test_dpsgd_reports_with_every_representation_load_no_dp_accounting(mechanism):
    # what `fdpkit report dpsgd` and the web worker compute: the report and its dict with the
    # representations (Rényi ones included: their integer orders are computed natively too)
    code = f"import fdpkit as fp\nvalue = fp.privacy_report({mechanism}, discretization=1e-3).to_dict()['guarantee']['mu']"
    got = loaded_after(code, ("dp_accounting", "scipy.signal"))
    assert got["loaded"] == [], f"{mechanism} loaded {got['loaded']}"
    assert 0 < got["value"] < 5


def test_packages_are_not_shadowed_and_stay_callable():
    # issue 23: fdpkit.sweep and fdpkit.audit are the packages (no function shadows them);
    # calling them still runs run_sweep/run_audit (deprecated)
    code = ("import fdpkit, fdpkit.sweep.store, fdpkit.audit.io\n"
            "from fdpkit.sweep import design_table\n"
            "from fdpkit.audit import read_scores_csv\n"
            "value = [callable(fdpkit.sweep), callable(fdpkit.audit), fdpkit.sweep.__name__,"
            " fdpkit.audit.__name__, fdpkit.sweep is sys.modules['fdpkit.sweep'],"
            " fdpkit.audit is sys.modules['fdpkit.audit'], fdpkit.run_sweep.__name__, fdpkit.run_audit.__name__]")
    assert loaded_after(code, ())["value"] == [True, True, "fdpkit.sweep", "fdpkit.audit", True, True,
                                               "run_sweep", "run_audit"]


def test_package_first_then_submodule():
    code = ("import fdpkit\nf = fdpkit.sweep\nimport fdpkit.sweep.runner\n"
            "value = [fdpkit.sweep is f, fdpkit.audit is fdpkit.audit, callable(fdpkit.audit)]")
    assert loaded_after(code, ())["value"] == [True, True, True]


def test_every_public_name_resolves_to_its_table_module():
    for name in fp.__all__:
        obj = getattr(fp, name)
        assert obj is not None, name
        if name == "__version__":
            assert isinstance(obj, str)
            continue
        source = sys.modules[fp._LAZY[name]]
        if fp._LAZY[name] == f"fdpkit.{name}":  # a package (fdpkit.sweep, fdpkit.audit)
            assert source is obj, name
            continue
        assert getattr(source, name) is obj, name


def test_all_and_dir():
    assert fp.__all__[0] == "__version__"
    assert len(fp.__all__) == len(set(fp.__all__))
    assert set(fp.__all__) <= set(dir(fp))
    for name in ("privacy_report", "Gaussian", "GaussianCurve", "fit_gdp", "sweep", "audit"):
        assert name in fp.__all__


def test_unknown_names_raise_attribute_error():
    with pytest.raises(AttributeError, match="no_such_name"):
        fp.no_such_name  # noqa: B018
    assert not hasattr(fp, "no_such_name")
    assert not hasattr(fp, "__no_such_dunder__")
    with pytest.raises(ImportError):
        from fdpkit import no_such_name  # noqa: F401


def test_submodules_reachable_as_attributes():
    assert fp.report.build_document is not None
    assert inspect.ismodule(fp.accounting)


def test_help_and_signature_of_a_lazy_name():
    text = pydoc.render_doc(fp.privacy_report)
    assert "privacy_report" in text and "mechanism" in text
    assert "mechanism" in inspect.signature(fp.privacy_report).parameters


def test_star_import():
    namespace: dict = {}
    exec("from fdpkit import *", namespace)  # noqa: S102
    assert namespace["privacy_report"] is fp.privacy_report
    assert namespace["sweep"] is fp.sweep


def test_stub_lists_exactly_the_table():
    """``__init__.pyi`` (what type checkers and IDEs read) names the same objects as the lazy
    table. To add a public name: one line in ``fdpkit._LAZY`` and the line this test prints."""
    tree = ast.parse(STUB.read_text(encoding="utf-8"))
    stub = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                assert alias.asname == alias.name, f"write `import {alias.name} as {alias.name}` (explicit re-export)"
                stub[alias.name] = node.module
    missing = [f"from {m} import {n} as {n}" for n, m in fp._LAZY.items() if stub.get(n) != m]
    extra = sorted(set(stub) - set(fp._LAZY))
    assert not missing, "add to src/fdpkit/__init__.pyi:\n" + "\n".join(missing)
    assert not extra, f"in __init__.pyi but not in fdpkit._LAZY: {extra}"
    declared = {t.target.id for t in tree.body if isinstance(t, ast.AnnAssign)}
    assert {"__version__", "__all__"} <= declared


def test_version():
    assert fp.__version__ and fp.__version__[0].isdigit()
