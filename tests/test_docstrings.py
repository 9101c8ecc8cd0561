"""Every public function, class and method outside the web app and the CLI has a docstring
(the API reference is generated from them; mkdocstrings hides undocumented members)."""

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "src" / "fdpkit"
SKIP_TOP = {"web", "cli"}  # user interfaces: documented by their pages and --help


def _public_modules():
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG)
        if rel.parts[0] in SKIP_TOP or "migrations" in rel.parts:
            continue
        if any(part.startswith("_") and part != "__init__.py" for part in rel.parts):
            continue
        yield rel, ast.parse(path.read_text(encoding="utf-8"))


def _undocumented(body, prefix=""):
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
            if ast.get_docstring(node) is None:
                yield prefix + node.name
            if isinstance(node, ast.ClassDef):
                yield from _undocumented(node.body, prefix + node.name + ".")


def test_every_public_name_has_a_docstring():
    missing = [f"{rel}: {name}" for rel, tree in _public_modules() for name in _undocumented(tree.body)]
    assert not missing, "\n".join(missing)


def test_every_public_module_has_a_docstring():
    missing = [str(rel) for rel, tree in _public_modules() if ast.get_docstring(tree) is None]
    assert not missing


def test_every_public_function_and_mechanism_has_an_example():
    """Every function in ``fdpkit.__all__`` and every mechanism class a user builds shows an
    example (an ``Examples`` section, run by the doctests): ``seed_tables``, ``Gaussian``,
    ``Laplace``, ``RandomizedResponse``, ``PureDP``, ``ApproxDP``, ``Subsampled``, ``Composed``,
    ``Repeated`` and ``DPSGD`` had none on their API pages. Deprecated aliases (they name the
    spelling to use), the callable packages and the abstract ``Mechanism`` are left out."""
    import inspect
    import types
    import warnings

    import fdpkit

    missing = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for name in fdpkit.__all__:
            obj = getattr(fdpkit, name)
            if name == "Mechanism" or isinstance(obj, types.ModuleType) or hasattr(obj, "__deprecated__"):
                continue
            user_built = isinstance(obj, type) and issubclass(obj, fdpkit.Mechanism)
            if (inspect.isfunction(obj) or user_built) and "Examples\n--------" not in (inspect.getdoc(obj) or ""):
                missing.append(name)
    assert not missing
