"""Serving the web app safely: request limits and timeouts at the edge. No maths here.

- :class:`EdgeMiddleware` (pure ASGI, outermost, so it also wraps the 500 responses of
  Starlette's error middleware) adds the security headers to EVERY response and enforces
  the body size limit before anything parses the body (Content-Length first, then a count
  of the streamed bytes).
- :class:`TimedH11Protocol` is uvicorn's h11 protocol with a request deadline: the whole
  request (headers and body) must arrive within ``request_timeout_s`` of the connection
  (or of the previous response on a keep-alive connection), else the socket is closed.
  Slow clients that trickle bytes therefore cannot hold connections (file descriptors).
- :func:`server_config` builds the uvicorn configuration with these and the keep-alive
  timeout and connection cap from :class:`fdpkit.web.common.Limits`.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
       "font-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; "
       "object-src 'none'")
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=()",
    "Cross-Origin-Opener-Policy": "same-origin",
}
_HEADER_BYTES = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in SECURITY_HEADERS.items()]


class EdgeMiddleware:
    """Security headers on every HTTP response (500s included) and the body size limit."""

    def __init__(self, app: Any, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False
        refused = False  # we answered 413 ourselves: whatever the app sends next is dropped

        async def send_with_headers(message: dict) -> None:
            nonlocal started
            if refused:
                return
            if message["type"] == "http.response.start":
                started = True
                present = {k.lower() for k, _ in message.get("headers", [])}
                extra = [(k, v) for k, v in _HEADER_BYTES if k not in present]
                message = {**message, "headers": list(message.get("headers", [])) + extra}
            await send(message)

        length = _content_length(scope)
        if length is not None and length > self.max_body_bytes:
            await _too_large(send_with_headers, self.max_body_bytes)
            return
        received = 0

        async def limited_receive() -> dict:
            nonlocal received, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body_bytes:
                    if not started:
                        await _too_large(send_with_headers, self.max_body_bytes)
                    refused = True
                    return {"type": "http.disconnect"}  # the app stops reading; nothing is parsed
            return message

        try:
            await self.app(scope, limited_receive, send_with_headers)
        except Exception:
            if not refused:
                raise


def _content_length(scope: dict) -> int | None:
    for k, v in scope.get("headers", []):
        if k == b"content-length":
            try:
                return int(v)
            except ValueError:
                return None
    return None


async def _too_large(send: Any, limit: int) -> None:
    body = json.dumps({"detail": f"request body must be at most {limit:,} bytes"}).encode()
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


class TimedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, closing connections whose request does not arrive in time."""

    request_timeout_s: float = 10.0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._deadline: asyncio.TimerHandle | None = None
        self._arm()

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(self.request_timeout_s, self._expired)

    def _disarm(self) -> None:
        handle = getattr(self, "_deadline", None)
        if handle is not None:
            handle.cancel()
            self._deadline = None

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state in (h11.DONE, h11.MUST_CLOSE, h11.CLOSED, h11.ERROR):
            self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _expired(self) -> None:
        self._deadline = None
        cycle = self.cycle
        if cycle is not None and cycle.response_started and not cycle.response_complete:
            return  # the request arrived and is being answered
        if not self.transport.is_closing():
            self.transport.close()


def server_config(app: Any, host: str = "127.0.0.1", port: int = 8000, log_level: str = "warning"):
    """A uvicorn Config with the app's limits: request deadline, keep-alive timeout,
    connection cap."""
    import uvicorn

    limits = app.state.limits
    protocol = type("FdpkitH11Protocol", (TimedH11Protocol,), {"request_timeout_s": limits.request_timeout_s})
    return uvicorn.Config(app, host=host, port=port, log_level=log_level, http=protocol, ws="none",
                          lifespan="on", timeout_keep_alive=int(max(1, limits.keep_alive_s)),
                          limit_concurrency=limits.max_connections, timeout_graceful_shutdown=5)
