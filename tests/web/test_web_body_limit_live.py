"""Issue 22: a body over the limit gets a readable 413 from a real uvicorn server, also in
clients that send the whole body before reading (Python's urllib), never "connection reset
by peer"; the server drains the refused body (bounded) and then closes the socket."""

from __future__ import annotations

import json
import socket
import time
import urllib.error
import urllib.request
from urllib.parse import urlparse

import pytest

#: The body of the issue's reproducer: 10 MB, ten times the default limit.
BIG = 10 * 1024**2
#: Seconds within which the server must close after the refused body has arrived.
CLOSE_WITHIN_S = 5.0


def _post(url: str, data, headers: dict) -> tuple[int, dict]:
    req = urllib.request.Request(url, data=data, headers=headers, method="POST")
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(req, timeout=30)
    return info.value.code, json.loads(info.value.read())


def test_10_mb_body_gets_a_readable_413_in_urllib(live_server):
    code, body = _post(f"{live_server}/api/report", b" " * BIG, {"Content-Type": "application/json"})
    assert code == 413 and "bytes" in body["detail"]


def test_chunked_body_over_the_limit_gets_a_readable_413(live_server):
    def chunks():  # no Content-Length: urllib sends it chunked, counted while streaming
        for _ in range(60):
            yield b" " * 50_000

    code, body = _post(f"{live_server}/api/report", chunks(),
                       {"Content-Type": "application/json", "Transfer-Encoding": "chunked"})
    assert code == 413 and "bytes" in body["detail"]


def test_server_closes_after_draining_the_refused_body(live_server):
    u = urlparse(live_server)
    body = b" " * 3_000_000
    head = (f"POST /api/report HTTP/1.1\r\nHost: {u.hostname}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    with socket.create_connection((u.hostname, u.port), timeout=30) as s:
        s.sendall(head + body)
        start, data = time.monotonic(), b""
        while chunk := s.recv(65536):
            data += chunk
        elapsed = time.monotonic() - start
    assert data.startswith(b"HTTP/1.1 413")
    assert elapsed < CLOSE_WITHIN_S, f"the socket stayed open {elapsed:.1f} s after the body"
