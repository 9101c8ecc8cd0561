"""The architecture of issue 23, checked on the source itself (import-linter's layers contract
in pyproject.toml says which way imports flow; these are the rules it cannot say):

- no import cycles between modules: the import graph (grimp), with annotation-only imports
  under ``if TYPE_CHECKING:`` left out, has no strongly connected component of two or more
  modules;
- exactly one module-level ``def account`` in src/fdpkit (one accounting entry point);
- at most :data:`MAX_FUNCTION_LEVEL_IMPORTS` function-level imports of fdpkit in library code
  outside ``cli/`` and ``web/`` (which import lazily for start-up time), each carrying a comment
  that says why it is not at module level (an optional extra, start-up time);
- dp_accounting is reached from ``accounting/`` only, also through ``lazy_module("dp_accounting...")``
  (which import-linter cannot see);
- modules stay under about 600 lines (:data:`MAX_MODULE_LINES`);
- docs/contributing.md draws the layers of the contract, in its order.

Measured with ``ast`` and grimp, never with grep.
"""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

import pytest

grimp = pytest.importorskip("grimp")

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "fdpkit"
#: The issue's cap on function-level fdpkit imports in library code.
MAX_FUNCTION_LEVEL_IMPORTS = 20
#: Front ends import lazily (start-up time of the CLI, one router per request path).
FRONT_ENDS = ("cli", "web")
#: "Modules stay under ~600 lines": the hard limit a little above it.
MAX_MODULE_LINES = 650


def _library_files(skip=()):
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC)
        if rel.parts[0] in skip or "migrations" in rel.parts:
            continue
        yield path, rel


def _module_name(rel: Path) -> str:
    parts = ["fdpkit", *rel.with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


# ----------------------------------------------------------------------------- cycles
def _cycles(graph) -> list[list[str]]:
    """Strongly connected components (Tarjan, iterative) of two or more modules."""
    index, low, on_stack, stack, out, counter = {}, {}, set(), [], [], [0]
    succ = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    for root in sorted(succ):
        if root in index:
            continue
        work = [(root, iter(succ[root]))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in succ:
                    continue
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(succ[nxt])))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    comp.append(m)
                    if m == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return sorted(out)


def _describe(graph, comp: list[str]) -> str:
    members = set(comp)
    arrows = []
    for m in comp:
        for imported in sorted(graph.find_modules_directly_imported_by(m) & members):
            lines = sorted({d["line_number"] for d in graph.get_import_details(importer=m, imported=imported)})
            arrows.append(f"{m} -> {imported} (l.{', l.'.join(map(str, lines))})")
    return f"{len(comp)} modules: " + "; ".join(arrows)


def test_no_import_cycles_between_modules():
    graph = grimp.build_graph("fdpkit", exclude_type_checking_imports=True, cache_dir=None)
    cycles = _cycles(graph)
    assert not cycles, "import cycles (move the import down a layer, or under TYPE_CHECKING for " \
                       "annotations):\n" + "\n".join(_describe(graph, c) for c in cycles)


def test_cycle_finder_sees_a_cycle():
    """The check itself: a two-module circle and a three-module one are found, a chain is not."""
    class Graph:
        edges = {"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"e"}, "e": {"c"}, "f": {"a"}, "g": set()}
        modules = set(edges)

        def find_modules_directly_imported_by(self, m):
            return self.edges[m]

    assert _cycles(Graph()) == [["a", "b"], ["c", "d", "e"]]


# ---------------------------------------------------------------------- one account()
def test_exactly_one_module_level_account():
    defs = [f"{rel}:{node.lineno}" for path, rel in _library_files()
            for node in ast.parse(path.read_text(encoding="utf-8")).body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "account"]
    assert len(defs) == 1, f"module-level `def account` in {defs}: one accounting entry point"


# --------------------------------------------------------- function-level fdpkit imports
def _imports_fdpkit(node: ast.AST) -> bool:
    if isinstance(node, ast.ImportFrom):
        return node.level > 0 or (node.module or "").split(".")[0] == "fdpkit"
    if isinstance(node, ast.Import):
        return any(a.name.split(".")[0] == "fdpkit" for a in node.names)
    return False


def _comment_lines(source: str) -> set[int]:
    return {tok.start[0] for tok in tokenize.generate_tokens(io.StringIO(source).readline)
            if tok.type == tokenize.COMMENT}


def function_level_imports(skip=FRONT_ENDS) -> list[tuple[str, int, bool]]:
    """``(file, line, commented)`` for every import of fdpkit inside a function body.

    ``commented``: a comment on one of the statement's lines or on the line just above it."""
    found = []
    for path, rel in _library_files(skip):
        source = path.read_text(encoding="utf-8")
        comments = _comment_lines(source)
        for fn in ast.walk(ast.parse(source)):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            for node in ast.walk(fn):
                if _imports_fdpkit(node):
                    lines = set(range(node.lineno - 1, (node.end_lineno or node.lineno) + 1))
                    found.append((str(rel), node.lineno, bool(lines & comments)))
    return sorted(set(found))


def test_function_level_fdpkit_imports_are_few_and_explained():
    found = function_level_imports()
    listing = "\n".join(f"  {f}:{line}{'' if ok else '  (no comment)'}" for f, line, ok in found)
    assert len(found) <= MAX_FUNCTION_LEVEL_IMPORTS, (
        f"{len(found)} function-level fdpkit imports outside cli/ and web/ (at most "
        f"{MAX_FUNCTION_LEVEL_IMPORTS}); import at module level, or under TYPE_CHECKING for "
        f"annotations:\n{listing}")
    assert all(ok for _, _, ok in found), f"each function-level import says why, in a comment:\n{listing}"


def test_import_counter_sees_nested_and_relative_imports(tmp_path):
    """The counter itself: imports nested in functions (also inside if/try and methods) and
    relative ones count; module-level and TYPE_CHECKING ones do not."""
    source = (
        "from typing import TYPE_CHECKING\n"
        "from fdpkit import curves\n"
        "if TYPE_CHECKING:\n"
        "    from fdpkit.privacy import PrivacyReport\n"
        "def f():\n"
        "    import numpy\n"
        "    if True:\n"
        "        from fdpkit.report import render  # optional extra: matplotlib\n"
        "class C:\n"
        "    def m(self):\n"
        "        try:\n"
        "            from .x import y\n"
        "        except ImportError:\n"
        "            pass\n"
    )
    tree = ast.parse(source)
    nested = [n.lineno for fn in ast.walk(tree) if isinstance(fn, ast.FunctionDef)
              for n in ast.walk(fn) if _imports_fdpkit(n)]
    assert sorted(nested) == [8, 12]
    assert 8 in _comment_lines(source) and 12 not in _comment_lines(source)


# ------------------------------------------------------------------ dp_accounting, size
def _lazy_targets(tree: ast.AST) -> list[str]:
    return [node.args[0].value for node in ast.walk(tree)
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "lazy_module"
            and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)]


def test_only_accounting_reaches_dp_accounting_lazily():
    outside = [f"{rel}: lazy_module({name!r})" for path, rel in _library_files(skip=("accounting",))
               if rel.name != "_lazy.py"
               for name in _lazy_targets(ast.parse(path.read_text(encoding="utf-8")))
               if name.split(".")[0] == "dp_accounting"]
    assert not outside, f"dp_accounting outside accounting/: {outside}"


def test_modules_stay_small():
    big = {str(rel): n for path, rel in _library_files()
           if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert not big, f"modules over {MAX_MODULE_LINES} lines (split them by topic): {big}"


def _layer(line: str) -> tuple[str, tuple[str, ...]]:
    """One layer as written (``fdpkit.convert : fdpkit.risk``, ``audit | sweep   (note)``):
    its separator and its modules, without the ``fdpkit.`` prefix."""
    line = line.split("(", 1)[0].strip()
    sep = "|" if "|" in line else ":"
    return sep if len(line.split(sep)) > 1 else "", tuple(m.strip().removeprefix("fdpkit.") for m in line.split(sep))


def test_the_contributing_guide_shows_the_enforced_layers():
    """docs/contributing.md draws the layers a newcomer reads; import-linter enforces the ones
    in pyproject.toml. They are the same list, in the same order, with the same separators
    (``|``: may not import each other, ``:``: may); the guide had merged the two bottom layers."""
    import re
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contract = next(c for c in config["tool"]["importlinter"]["contracts"] if c["id"] == "layers")
    guide = (ROOT / "docs" / "contributing.md").read_text(encoding="utf-8")
    block = re.search(r"## The layers.*?```text\n(.*?)```", guide, flags=re.S).group(1)
    assert [_layer(line) for line in block.splitlines() if line.strip()] == [_layer(x) for x in contract["layers"]]
