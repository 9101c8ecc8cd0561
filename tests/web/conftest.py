"""Web test fixtures: a TestClient, and a live uvicorn server on 127.0.0.1 for the browser."""

import socket
import threading
import time

import pytest
from fastapi.testclient import TestClient

from fdpkit.web.common import Limits
from fdpkit.web.main import create_app


@pytest.fixture(scope="session")
def client():
    return TestClient(create_app())


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def live_server():
    import uvicorn

    port = _free_port()
    from fdpkit.web.server import server_config

    config = server_config(create_app(Limits(timeout_s=60)), host="127.0.0.1", port=port)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.time() + 20
    while not server.started and time.time() < deadline:
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)
