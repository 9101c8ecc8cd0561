"""Behind a reverse proxy (X-Forwarded-For from a trusted address: here 127.0.0.1, named by
``forwarded_allow_ips`` as ``fdpkit serve --forwarded-allow-ips`` does), the request deadline must still end when the request has arrived. uvicorn's proxy
middleware rewrote the scope's ``client`` before EdgeMiddleware looked the connection up by
it, so the lookup failed, the deadline was never disarmed, and every answer that took longer
than ``request_timeout_s`` (10 s: a heavy report, logins waiting for a hash slot) was cut off:
"Server disconnected without sending a response"."""

from __future__ import annotations

import asyncio

import httpx

from fdpkit.web.common import Limits
from fdpkit.web.main import create_app

#: The deadline of the test's server and how long its slow route takes (past the deadline).
DEADLINE_S, SLOW_S = 1.0, 2.5


def test_a_slow_answer_reaches_a_client_behind_a_proxy(serve_app):
    app = create_app(Limits(request_timeout_s=DEADLINE_S))

    async def slow() -> dict:  # a real route of the real app that answers after the deadline
        await asyncio.sleep(SLOW_S)
        return {"ok": True}

    app.add_api_route("/test-slow", slow)
    with serve_app(app, forwarded_allow_ips="127.0.0.1") as url:
        for headers in ({}, {"X-Forwarded-For": "203.0.113.9"}):  # direct, then through a proxy
            r = httpx.get(f"{url}/test-slow", headers=headers, timeout=30)
            assert r.status_code == 200 and r.json() == {"ok": True}, headers
        # a slow client is still cut off behind the proxy: its request never arrives in time
        import socket
        from urllib.parse import urlparse

        u = urlparse(url)
        with socket.create_connection((u.hostname, u.port), timeout=30) as s:
            s.sendall(b"POST /api/convert HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 203.0.113.9\r\n"
                      b"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
            s.settimeout(DEADLINE_S + 20)
            assert s.recv(1024) == b""  # closed at the deadline, no answer
