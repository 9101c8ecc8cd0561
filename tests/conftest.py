"""Shared fixtures. Reference numbers come from ../shared/reference/published.json when it
is there (the steering copy), else from the copy in tests/data/."""

import json
import os
import tempfile
from pathlib import Path

import pytest

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
