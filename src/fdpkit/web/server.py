"""Serving the web app safely: request limits and timeouts at the edge. No maths here.

- :class:`EdgeMiddleware` (pure ASGI, outermost, so it also wraps the 500 responses of
  Starlette's error middleware) adds the security headers to EVERY response and enforces
  the body size limit before anything parses the body (Content-Length first, then a count
  of the streamed bytes).
- :class:`TimedH11Protocol` is uvicorn's h11 protocol with a request deadline: the whole
  request (headers and body) must arrive within ``request_timeout_s`` of the connection
  (or of the previous response on a keep-alive connection), else the socket is closed.
  Slow clients that trickle bytes therefore cannot hold connections (file descriptors).
- When a response goes out before its request body has arrived (the 413 of the body limit),
  the protocol does not close the socket at once: a close with unread bytes in the kernel's
  receive buffer sends a TCP reset, and a client still sending its body (Python's urllib
  sends the whole body before it reads) sees "connection reset by peer" instead of the 413.
  It reads and discards the rest of the body first (bounded: :data:`DRAIN_MAX_BYTES`,
  :data:`DRAIN_MAX_S`), then closes gracefully, so ordinary clients can read the answer.
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


#: Most bytes of an unwanted request body read and discarded before the socket closes
#: (after a 413 sent before the body arrived); beyond it the socket is closed (reset).
DRAIN_MAX_BYTES = 128 * 1024**2
#: Most seconds spent draining such a body before the socket is closed anyway.
DRAIN_MAX_S = 10.0


class _DrainingTransport:
    """The connection's transport as uvicorn sees it: ``close()`` lets the protocol drain an
    unread request body first (see :meth:`TimedH11Protocol._close_softly`); everything else
    is the real transport's."""

    def __init__(self, transport: asyncio.Transport, protocol: "TimedH11Protocol") -> None:
        self._transport = transport
        self._protocol = protocol

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)

    def close(self) -> None:
        self._protocol._close_softly()

    def is_closing(self) -> bool:
        return self._protocol._draining or self._transport.is_closing()


class TimedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, closing connections whose request does not arrive in time,
    and draining a refused request body before closing (see the module docs)."""

    request_timeout_s: float = 10.0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._real_transport = transport
        self._draining = False
        self._drain_left: float = DRAIN_MAX_BYTES
        self._drain_timer: asyncio.TimerHandle | None = None
        super().connection_made(_DrainingTransport(transport, self))  # type: ignore[arg-type]
        self._deadline: asyncio.TimerHandle | None = None
        self._arm()

    # ----------------------------------------------------------- graceful close after a 413
    def _close_softly(self) -> None:
        """Close now, unless the client is still sending a body we answered without reading:
        then read and discard the rest of it (at most DRAIN_MAX_BYTES, DRAIN_MAX_S) and close
        after, so the client reads our response instead of a reset."""
        real = self._real_transport
        if self._draining:
            return
        if real.is_closing() or self.conn.their_state is not h11.SEND_BODY:
            real.close()
            return
        self._draining = True
        self._disarm()
        if self._body_ended(b""):  # what already arrived may hold the end of the body
            self._finish_drain()
            return
        self._drain_timer = self.loop.call_later(DRAIN_MAX_S, self._finish_drain)
        real.resume_reading()

    def _body_ended(self, data: bytes) -> bool:
        """Feed ``data`` to the h11 parser, discarding the body; True at its end (h11 knows
        it from Content-Length or the last chunk), on a protocol error, or at the cap."""
        self._drain_left -= len(data)
        try:
            if data:  # (h11 reads b"" as the end of the connection)
                self.conn.receive_data(data)
            while True:
                event = self.conn.next_event()
                if event is h11.NEED_DATA or event is h11.PAUSED:
                    break
                if isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)):
                    return True
        except h11.ProtocolError:
            return True
        return self._drain_left <= 0

    def _finish_drain(self) -> None:
        if self._drain_timer is not None:
            self._drain_timer.cancel()
            self._drain_timer = None
        if not self._real_transport.is_closing():
            self._real_transport.close()

    def eof_received(self) -> bool | None:  # type: ignore[override]
        if self._draining:
            self._finish_drain()
        return super().eof_received()

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(self.request_timeout_s, self._expired)

    def _disarm(self) -> None:
        handle = getattr(self, "_deadline", None)
        if handle is not None:
            handle.cancel()
            self._deadline = None

    def data_received(self, data: bytes) -> None:
        if self._draining:  # the rest of a refused body: discarded
            if self._body_ended(data):
                self._finish_drain()
            return
        super().data_received(data)
        if self.conn.their_state in (h11.DONE, h11.MUST_CLOSE, h11.CLOSED, h11.ERROR):
            self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._drain_timer is not None:
            self._drain_timer.cancel()
            self._drain_timer = None
        super().connection_lost(exc)

    def _expired(self) -> None:
        self._deadline = None
        cycle = self.cycle
        if cycle is not None and cycle.response_started and not cycle.response_complete:
            return  # the request arrived and is being answered
        if not self._real_transport.is_closing():  # a slow client: closed now, never drained
            self._real_transport.close()


def server_config(app: Any, host: str = "127.0.0.1", port: int = 8000, log_level: str = "warning"):
    """A uvicorn Config with the app's limits: request deadline, keep-alive timeout,
    connection cap."""
    import uvicorn

    limits = app.state.limits
    protocol = type("FdpkitH11Protocol", (TimedH11Protocol,), {"request_timeout_s": limits.request_timeout_s})
    return uvicorn.Config(app, host=host, port=port, log_level=log_level, http=protocol, ws="none",
                          lifespan="on", timeout_keep_alive=int(max(1, limits.keep_alive_s)),
                          limit_concurrency=limits.max_connections, timeout_graceful_shutdown=5)
