"""Issue 23: slow-client handling through uvicorn's public settings and a wrapper around its
own protocol, not a subclass of its internals; no undeclared ``h11`` import. (The behaviour
— trickling sockets closed at the deadline, a refused body drained before the close — is
checked live in test_web_hardening.py and test_web_body_limit_live.py.)"""

import ast
from pathlib import Path

from uvicorn.protocols.http.h11_impl import H11Protocol

import fdpkit.web.server as server
from fdpkit.web.common import Limits
from fdpkit.web.main import create_app


def test_server_config_uses_public_settings_and_a_wrapper():
    limits = Limits(request_timeout_s=3.0, keep_alive_s=4.0, max_connections=77)
    config = server.server_config(create_app(limits))
    assert issubclass(config.http, server.RequestDeadline) and not issubclass(config.http, H11Protocol)
    assert config.http.request_timeout_s == 3.0
    assert config.timeout_keep_alive == 4 and config.limit_concurrency == 77
    assert config.h11_max_incomplete_event_size == server.H11_MAX_HEAD_BYTES


def test_no_h11_import_in_the_web_layer():
    web = Path(server.__file__).parent
    for path in web.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not any(n == "h11" or n.startswith("h11.") for n in names), path
