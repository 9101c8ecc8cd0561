"""Every public function, class and method outside the web app and the CLI has a docstring
(the API reference is generated from them; mkdocstrings hides undocumented members)."""

import ast
import re
from pathlib import Path

from _dotted import resolve

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


#: ASCII maths that the API pages printed as typed (the rest of the docs write Φ⁻¹, G_μ, √, e^−μ,
#: tⱼ, μ, ε, δ, σ, ∞): Phi^{-1}, G_mu, G_{k mu}, sqrt(...), h^{o k}, e^-mu, 2**53, t_j, f_i,
#: max_j f_{t_j}, and the words epsilon/delta/mu/sigma in prose ("epsilon at delta from the
#: accountant's own profile"). Code spans (``delta``), quoted values ("mu") and doctests are code.
_ASCII_MATHS = re.compile(r"Phi\b|Phi\^|G_mu|G_\{|sqrt\(|\^\{o|e\^-|\d\*\*\d|\b[tfε]_[ijk]\b|\b(?:max|min|sup)_[ijt]\b"
                          r"|\b(?:epsilon|delta|mu|sigma|mu_min)\b|(?<![\w`])-inf\b|= inf\b(?!\{)")
#: numpydoc sections whose unindented lines name parameters or types (code, not prose)
_NAMES_SECTIONS = ("Parameters", "Other Parameters", "Attributes", "Returns", "Yields", "Raises", "Warns")


def _prose(doc):
    """The lines of a docstring that read as prose: no doctest (``>>>`` and its output), no
    parameter/attribute name lines of numpydoc sections, no code spans or quoted values."""
    lines, section, in_doctest = doc.splitlines(), "", False
    out = []
    for i, line in enumerate(lines):
        if line.lstrip().startswith(">>>"):
            in_doctest = True
        if in_doctest:
            in_doctest = bool(line.strip())
            continue
        if i + 1 < len(lines) and re.fullmatch(r"-{3,}", lines[i + 1].strip()):
            section = line.strip()
        if (re.fullmatch(r"-{3,}", line.strip()) or re.match(r"\s*\w+(, \w+)* : ", line)  # "delta : float"
                or (section in _NAMES_SECTIONS and line and not line[0].isspace())):
            continue
        out.append(re.sub(r"``.*?``|`[^`]*`|\"[^\"\n]*\"|:\w+:`[^`]*`", " ", line))
    return out


def _api_objects():
    """Every docstring an API page (docs/api/*.md, mkdocstrings) shows: each ``:::`` target, its
    public members (a module's listed ``members`` only; a class's own methods and properties,
    inherited ones with ``inherited_members``)."""
    import inspect

    root = PKG.parent.parent / "docs" / "api"
    for md in sorted(root.glob("*.md")):
        for m in re.finditer(r"^::: (\S+)\n((?:    .*\n)*)", md.read_text(encoding="utf-8") + "\n", re.M):
            path, options = m.group(1), m.group(2)
            listed = re.findall(r"^\s+- (\w+)$", options, re.M)
            obj = resolve(path)
            yield md.name, path, inspect.getdoc(obj) or ""
            if inspect.ismodule(obj):
                for name in listed:
                    member = getattr(obj, name)
                    yield md.name, f"{path}.{name}", inspect.getdoc(member) or ""
            elif inspect.isclass(obj):
                owners = [c for c in obj.__mro__ if c.__module__.startswith("fdpkit")] \
                    if "inherited_members: true" in options else [obj]
                for owner in owners:
                    for name, value in vars(owner).items():
                        if name.startswith("_"):
                            continue
                        f = getattr(value, "__func__", None) or getattr(value, "fget", None) or value
                        if callable(f) and getattr(f, "__doc__", None):
                            yield md.name, f"{path}.{name}", inspect.cleandoc(f.__doc__)


def test_api_pages_write_their_maths_as_the_rest_of_the_docs():
    bad = []
    for page, name, doc in _api_objects():
        for line in _prose(doc):
            hits = sorted({h.group(0) for h in _ASCII_MATHS.finditer(line)})
            if hits:
                bad.append(f"{page} {name}: {hits}: {line.strip()}")
    assert not bad, "\n".join(bad)
