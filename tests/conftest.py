"""Shared fixtures. Reference numbers come from ../shared/reference/published.json when it
is there (the steering copy), else from the copy in tests/data/. The system packages
(chromium, pdftoppm, PostgreSQL) are reached only through ``_system.require``: one policy
for all of them (fail under CI, skip with one line elsewhere; see tests/_system.py)."""

import json
import os
import tempfile
from pathlib import Path

import pytest

import _system

_HERE = Path(__file__).resolve().parent
_SHARED = _HERE.parent.parent / "shared" / "reference" / "published.json"
_LOCAL = _HERE / "data" / "published.json"

# Tests never touch the user's own privacy-budget ledger: the web app opens its default
# ledger lazily (e.g. when the API is fuzzed), so point the default at a temporary file.
os.environ["FDPKIT_LEDGER"] = str(Path(tempfile.mkdtemp(prefix="fdpkit-test-ledger-")) / "ledger.sqlite")


def load_published():
    path = _SHARED if _SHARED.exists() else _LOCAL
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


@pytest.fixture(scope="session")
def published():
    return load_published()


@pytest.fixture(scope="module")
def browser():
    """Debian's chromium under Playwright, one per test module (``_system.require``)."""
    chromium = _system.require("chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, args=_system.CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture(scope="session")
def pdftoppm():
    """The pdftoppm executable (poppler-utils) that rasterises PDF pages (``_system.require``)."""
    return _system.require("pdftoppm")


#: Fixtures that need a system package (tests/_system.py). They are checked before any
#: fixture runs, so that every skip is raised at the same place with the same reason:
#: pytest's summary (-rs) then shows ONE line for all of them.
_SYSTEM_FIXTURES = {"browser": "chromium", "pdftoppm": "pdftoppm", "pg_server": "postgresql"}


def pytest_runtest_setup(item):
    needs = {_SYSTEM_FIXTURES[name] for name in item.fixturenames if name in _SYSTEM_FIXTURES}
    callspec = getattr(item, "callspec", None)
    if callspec is not None and callspec.params.get("ledger_url") == "postgresql":  # its pg_server
        needs.add("postgresql")
    for what in sorted(needs):
        _system.require(what)
