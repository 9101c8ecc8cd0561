"""One reference-data source: the tests read tests/data/published.json only (tests/_reference.py),
and that copy is identical to the steering copy shared/reference/published.json when the
latter is there (a fresh clone in CI has none: then this check skips)."""

import json

import pytest

import _reference


def test_tests_read_the_in_repo_copy(published):
    assert _reference.PUBLISHED.is_file()
    assert published == json.loads(_reference.PUBLISHED.read_text(encoding="utf-8"))


def test_in_repo_copy_equals_the_shared_one():
    shared = _reference.shared_published()
    if shared is None or not shared.is_file():
        pytest.skip("no shared/reference/published.json above the project (fresh clone): nothing to compare")
    assert json.loads(shared.read_text(encoding="utf-8")) == _reference.load_published(), (
        f"tests/data/published.json differs from {shared}: copy the shared file into tests/data/")
    assert shared.read_bytes() == _reference.PUBLISHED.read_bytes()
