"""Web test fixtures: a TestClient of the app (the live server is tests/conftest.py's ``live_server``)."""

import pytest
from fastapi.testclient import TestClient

from fdpkit.web.main import create_app


@pytest.fixture(scope="session")
def client():
    return TestClient(create_app())
