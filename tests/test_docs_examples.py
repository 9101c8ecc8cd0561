"""The documentation as a reader copies it: the command lines of the guides parse, the Python
blocks that start worker processes run as scripts, the search finds names inside code, and
the docstrings' references name objects that exist (tests/test_readme.py runs the Python
blocks themselves; tests/test_docs.py checks the built site)."""

import os
import re
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import typer
import yaml

from _dotted import resolve

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = sorted([*DOCS.rglob("*.md"), ROOT / "README.md"])


# --------------------------------------------------------------------------------------
# command lines
# --------------------------------------------------------------------------------------
def command_lines(page: Path) -> list[list[str]]:
    """Every ``fdpkit ...`` line of the page's ``sh``/``bash`` blocks (continuation lines
    joined, comments dropped), as a list of arguments; lines with a ``...`` placeholder are
    left out."""
    out = []
    for block in re.findall(r"```(?:sh|bash)\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.S):
        for line in re.sub(r"\\\n", " ", block).splitlines():
            args = shlex.split(line, comments=True)
            if args[:1] == ["fdpkit"] and "..." not in args:
                out.append(args[1:])
    return out


#: click's usage error as typer uses it (typer >= 0.2x carries its own copy of click).
UsageError = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")


def parse_command_line(args: list[str]):
    """Parse ``fdpkit ARGS`` as the command line would, without running anything: every
    group's and the command's options and arguments are matched and converted (an unknown
    option, a missing argument or a bad value raises :data:`UsageError`). Returns the command."""
    from fdpkit.cli import app

    command = typer.main.get_command(app)
    name, parent = "fdpkit", None
    while True:
        ctx = command.make_context(name, list(args), parent=parent)
        if not hasattr(command, "resolve_command"):  # a command, not a group
            return command
        # click 8.2 moved the subcommand's name to ``_protected_args`` (``protected_args`` deprecated)
        protected = ctx._protected_args if hasattr(ctx, "_protected_args") else ctx.protected_args
        rest = [*protected, *ctx.args]
        if not rest:  # a group that runs itself (``fdpkit report --mechanism``, ``fdpkit sweep``)
            return command
        name, command, args = command.resolve_command(ctx, rest)
        parent = ctx


DOC_COMMANDS = [(page, args) for page in PAGES for args in command_lines(page)]


def test_the_guides_show_command_lines():
    assert len(DOC_COMMANDS) >= 40
    assert {p.name for p, _ in DOC_COMMANDS} >= {"cli.md", "dpsgd.md", "ledger.md", "sweeps.md", "ml-engineer.md"}


def test_the_parser_refuses_what_the_command_line_refuses():
    """The check below would catch a renamed option, a removed command or a bad value."""
    for args in (["report", "dpsgd", "--noise", "1.1"], ["report", "dpgsd"], ["convert", "eps-to-mu", "--epsilon", "x"]):
        with pytest.raises(UsageError):
            parse_command_line(args)


@pytest.mark.parametrize("page,args", DOC_COMMANDS, ids=[f"{p.name}:{' '.join(a)[:60]}" for p, a in DOC_COMMANDS])
def test_every_command_line_in_the_docs_parses(page, args, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the files they name (spec.json, m.csv) need not exist to parse
    command = parse_command_line(args)
    # a command, or a group that runs itself (``fdpkit report --mechanism``), never a group's help
    assert not hasattr(command, "resolve_command") or command.invoke_without_command, command.name


# --------------------------------------------------------------------------------------
# Python blocks that start worker processes
# --------------------------------------------------------------------------------------
#: Entry points whose default executor is a pool of spawned processes (fdpkit.sweep).
POOLED = re.compile(r"\b(?:run_sweep|design_table|regret_map|rule_of_thumb)\(")


def _python_blocks(page: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.S)


POOLED_BLOCKS = [(page, block) for page in PAGES for block in _python_blocks(page) if POOLED.search(block)]


def test_pooled_blocks_choose_their_executor():
    """A sweep on the default process pool re-imports the reader's script in every worker:
    copied into a script without ``if __name__ == "__main__":`` it broke the pool
    (BrokenProcessPool; the sweeps guide's block did). A block that sweeps names its executor
    or carries the guard."""
    assert POOLED_BLOCKS
    unguarded = [page.name for page, block in POOLED_BLOCKS
                 if "executor=" not in block and "__main__" not in block]
    assert not unguarded


@pytest.mark.slow
@pytest.mark.parametrize("page,block", POOLED_BLOCKS, ids=[p.name for p, _ in POOLED_BLOCKS])
def test_pooled_blocks_run_as_a_script(page, block, tmp_path):
    """Copied into a file and run with ``python file.py``, as a reader would."""
    script = tmp_path / "example.py"
    script.write_text(textwrap.dedent(block), encoding="utf-8")
    import fdpkit

    env = {**os.environ, "PYTHONPATH": str(Path(fdpkit.__file__).parents[1])}  # this fdpkit, whatever the cwd
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip()


# --------------------------------------------------------------------------------------
# search
# --------------------------------------------------------------------------------------
def _search_separator() -> str:
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
    for plugin in config["plugins"]:
        if isinstance(plugin, dict) and "search" in plugin:
            return plugin["search"]["separator"]
    raise AssertionError("mkdocs.yml configures no search separator")


def test_search_finds_names_inside_code():
    """Material's default separator splits on spaces and hyphens only, so ``dpsgd`` did not
    find ``fp.dpsgd(1.1, batch_size=256)`` nor ``privacy_report`` ``fp.privacy_report(run)``
    (13 and 11 pages found; 23 and 21 with this separator). The separator is a JavaScript
    regular expression that Python reads the same way."""
    sep = re.compile(_search_separator())
    code = 'r = fp.privacy_report(fp.dpsgd(1.1, batch_size=256), deltas=[1e-5])\nprint(r.epsilon_for_delta(1e-5))'
    tokens = {t for t in sep.split(code) if t}
    assert {"privacy_report", "dpsgd", "batch_size", "epsilon_for_delta", "1.1", "fp", "r"} <= tokens
    assert {"DP", "SGD"} <= set(sep.split("DP-SGD"))  # prose as before


# --------------------------------------------------------------------------------------
# references in docstrings
# --------------------------------------------------------------------------------------
DOCUMENTED = [p for p in sorted((ROOT / "src" / "fdpkit").rglob("*.py")) if not {"web", "cli"} & set(p.parts)]


def test_docstring_references_name_objects_that_exist():
    """A Sphinx role naming a dotted fdpkit object (``:func:`fdpkit.x.y```) resolves; the API
    pages otherwise show it as plain code with no link (``fdpkit.setting.setting_of`` did)."""
    missing = []
    for path in DOCUMENTED:
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(r":(?:func|meth|class|mod|data|attr|obj|exc):`~?(fdpkit\.[\w.]+)`", text):
            try:
                resolve(m.group(1))
            except (ImportError, AttributeError):
                missing.append(f"{path.relative_to(ROOT)}: {m.group(1)}")
    assert not missing


def _deprecated_names() -> dict[str, str]:
    """Public names that are deprecated aliases: name -> the spelling to use."""
    import warnings

    import fdpkit

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return {n: getattr(fdpkit, n).__deprecated__ for n in fdpkit.__all__
                if isinstance(getattr(getattr(fdpkit, n), "__deprecated__", None), str)}


def test_deprecated_aliases_say_so():
    """Every deprecated public alias carries ``__deprecated__`` (the spelling to use); the
    API reference's list of every public name reads it."""
    deprecated = _deprecated_names()
    assert {"adjusted_alpha", "epsilon_for_delta", "delta_for_epsilon", "attack_power"} <= set(deprecated)
    assert deprecated["attack_power"] == "curve.tpr(fpr)"


def test_docstrings_do_not_point_readers_at_deprecated_names():
    """No docstring refers a reader to a deprecated alias by a Sphinx role
    (``AuditResult`` said "Result of :func:`audit`" for ``run_audit``); the aliases' own
    docstrings, which name them, are left out."""
    names = set(_deprecated_names()) | {"audit", "sweep"}
    role = re.compile(r":(?:func|meth|class|obj):`~?(?:fdpkit\.)?(" + "|".join(sorted(names)) + r")`")
    found = []
    for path in DOCUMENTED:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if role.search(line) and "Deprecated alias" not in line and "deprecated" not in line.lower():
                found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not found


# --------------------------------------------------------------------------------------
# what the public functions return is documented too
# --------------------------------------------------------------------------------------
def _api_names() -> set[str]:
    text = "\n".join(p.read_text(encoding="utf-8") for p in (DOCS / "api").glob("*.md"))
    return {ident.rsplit(".", 1)[-1] for ident in re.findall(r"^::: *([\w.]+)", text, flags=re.M)}


def _classes_in(annotation) -> set[type]:
    import typing

    found = {annotation} if isinstance(annotation, type) else set()
    for arg in typing.get_args(annotation):
        found |= _classes_in(arg)
    return found


def test_what_public_functions_return_has_an_api_entry():
    """A reader who gets ``plan = fp.utility_first(...)`` (the statistician tutorial reads
    ``plan.sigma``, ``plan.epsilon_at_1e5``) finds the plan's class in the API reference:
    every fdpkit class that a public function or method returns has an entry. Six had none
    (``Accounting``, ``Recommendation``, ``PrivacyFirstPlan``, ``UtilityFirstPlan``,
    ``MonteCarloPower``, ``PowerSolution``), nor had the types readers meet as attributes or
    arguments (``Phase``, ``MechanismOption``, ``Representations``, ``CostBudget``)."""
    import inspect
    import typing
    import warnings

    import fdpkit

    documented = _api_names()
    missing = set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for name in fdpkit.__all__:
            obj = getattr(fdpkit, name)
            functions = [obj] if inspect.isfunction(obj) else \
                [f for _, f in inspect.getmembers(obj, inspect.isfunction)] if isinstance(obj, type) else []
            for f in functions:
                try:
                    hints = typing.get_type_hints(f)
                except NameError:  # an annotation-only import (TYPE_CHECKING): listed below
                    continue
                missing |= {c.__name__ for c in _classes_in(hints.get("return"))
                            if c.__module__.startswith("fdpkit") and c.__name__ not in documented}
    assert not missing
    assert not {"Phase", "MechanismOption", "Representations", "CostBudget", "BudgetExceeded"} - documented
