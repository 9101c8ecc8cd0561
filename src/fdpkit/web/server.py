"""Serving the web app safely: request limits and timeouts at the edge. No maths here.

- :class:`EdgeMiddleware` (pure ASGI, outermost, so it also wraps the 500 responses of
  Starlette's error middleware) adds the security headers to EVERY response and enforces
  the body size limit before anything parses the body (Content-Length first, then a count
  of the streamed bytes). It also tells the connection (:class:`RequestDeadline`) when a
  request has fully arrived and when its response is complete.
- :class:`RequestDeadline` is an asyncio protocol WRAPPED around uvicorn's own HTTP protocol
  (the one ``http="h11"`` names, built through uvicorn's public ``http`` setting; no
  subclass of its internals, no ``h11`` import): the whole request (headers and body) must
  arrive within ``request_timeout_s`` of the connection (or of the previous response on a
  keep-alive connection), else the socket is closed. Slow clients that trickle bytes
  therefore cannot hold connections (file descriptors). uvicorn's public settings do the
  rest: ``timeout_keep_alive`` (idle keep-alive), ``limit_concurrency`` (connection cap),
  ``h11_max_incomplete_event_size`` (largest request head).
- When a response goes out before its request body has arrived (the 413 of the body limit),
  the socket is not closed at once: a close with unread bytes in the kernel's receive buffer
  sends a TCP reset, and a client still sending its body (Python's urllib sends the whole
  body before it reads) sees "connection reset by peer" instead of the 413. The rest of the
  body is read and discarded first (bounded: :data:`DRAIN_MAX_BYTES`, :data:`DRAIN_MAX_S`;
  its end known from Content-Length, or the last chunk), then the socket closes, so ordinary
  clients can read the answer.
- :func:`server_config` builds the uvicorn configuration with these and the keep-alive
  timeout and connection cap from :class:`fdpkit.web.common.Limits`.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

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
    """Security headers on every HTTP response (500s included) and the body size limit:
    ``max_body_bytes``, or for a path in ``path_limits`` (the audit's score uploads) its own."""

    def __init__(self, app: Any, max_body_bytes: int, path_limits: dict[str, int] | None = None) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.path_limits = dict(path_limits or {})

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
            if message["type"] == "http.response.body" and not message.get("more_body", False) and conn is not None:
                conn.response_sent()
            if message["type"] == "http.response.start":
                started = True
                present = {k.lower() for k, _ in message.get("headers", [])}
                extra = [(k, v) for k, v in _HEADER_BYTES if k not in present]
                message = {**message, "headers": list(message.get("headers", [])) + extra}
            await send(message)

        conn = _CONNECTIONS.get(scope.get(CONNECTION_SCOPE_KEY) or _key(scope))
        length = _content_length(scope)
        limit = self.path_limits.get(scope.get("path", ""), self.max_body_bytes)
        if conn is not None:
            conn.request_started(length, _chunked(scope))
        if length is not None and length > limit:
            if conn is not None:
                conn.drain_on_close = True
            await _too_large(send_with_headers, limit)
            return
        received = 0

        async def limited_receive() -> dict:
            nonlocal received, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    if conn is not None:
                        conn.drain_on_close = True
                    if not started:
                        await _too_large(send_with_headers, limit)
                    refused = True
                    return {"type": "http.disconnect"}  # the app stops reading; nothing is parsed
                if not message.get("more_body", False) and conn is not None:
                    conn.request_arrived()
            return message

        try:
            await self.app(scope, limited_receive, send_with_headers)
        except Exception:
            if not refused:
                raise


def _key(scope: dict) -> tuple:
    client, server = scope.get("client"), scope.get("server")
    return (tuple(client) if client else None, tuple(server) if server else None)


#: The scope key under which :class:`ConnectionKey` keeps the connection's own addresses.
CONNECTION_SCOPE_KEY = "fdpkit.connection"


class ConnectionKey:
    """The outermost ASGI layer of the served app: keeps the connection's own addresses in the
    scope (:data:`CONNECTION_SCOPE_KEY`) before uvicorn's proxy middleware rewrites ``client``
    from X-Forwarded-For. EdgeMiddleware looked the connection up by the rewritten ``client``,
    found none, and never ended its request deadline: behind a proxy every answer slower than
    ``request_timeout_s`` was cut off without a response."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope.get("type") == "http":
            scope[CONNECTION_SCOPE_KEY] = _key(scope)
        await self.app(scope, receive, send)


def _chunked(scope: dict) -> bool:
    return any(k == b"transfer-encoding" and b"chunked" in v.lower() for k, v in scope.get("headers", []))


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

#: The open connections by (client, server) address, as the ASGI scope names them: how
#: :class:`EdgeMiddleware` reaches the connection a request came on.
_CONNECTIONS: dict[tuple, "RequestDeadline"] = {}
_HEAD_END = b"\r\n\r\n"
_LAST_CHUNK = b"0\r\n\r\n"


class _Transport:
    """The connection's transport as uvicorn sees it: ``close()`` lets the connection drain
    an unread request body first; everything else is the real transport's."""

    def __init__(self, transport: asyncio.Transport, owner: "RequestDeadline") -> None:
        self._transport = transport
        self._owner = owner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)

    def close(self) -> None:
        self._owner.close_softly()

    def is_closing(self) -> bool:
        return self._owner.draining or self._transport.is_closing()


class RequestDeadline(asyncio.Protocol):
    """uvicorn's HTTP protocol (``inner``), wrapped: the connection is closed when a request
    does not arrive within ``request_timeout_s``, and a refused body is drained before the
    socket closes (see the module docs). ``server_config`` makes a subclass per server with
    its deadline; uvicorn builds one per connection with its usual arguments."""

    request_timeout_s: float = 10.0
    #: uvicorn's protocol, as its public ``http="h11"`` setting names it
    inner_protocol: str = "h11"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        from uvicorn.config import HTTP_PROTOCOLS
        from uvicorn.importer import import_from_string

        self.inner = import_from_string(HTTP_PROTOCOLS[self.inner_protocol])(*args, **kwargs)
        self.loop = asyncio.get_event_loop()
        self.draining = False
        self.drain_on_close = False
        self._deadline: asyncio.TimerHandle | None = None
        self._drain_timer: asyncio.TimerHandle | None = None
        self._reset_request()

    def _reset_request(self) -> None:
        self._arrived = False
        self._seen = 0            # raw bytes of this request seen so far
        self._head_end: int | None = None
        self._tail = b""          # the last bytes seen (a head end or last chunk split across reads)
        self._length: int | None = None
        self._chunked = False

    # ------------------------------------------------------------------ asyncio protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:  # type: ignore[override]
        self.transport = transport
        peer, sock = transport.get_extra_info("peername"), transport.get_extra_info("sockname")
        self._key = ((str(peer[0]), int(peer[1])) if peer else None, (str(sock[0]), int(sock[1])) if sock else None)
        _CONNECTIONS[self._key] = self
        self.inner.connection_made(_Transport(transport, self))  # type: ignore[arg-type]
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self.draining:  # the rest of a refused body: discarded
            if self._track(data):
                self._finish_drain()
            return
        self._track(data)
        self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        if self.draining:
            self._finish_drain()
        return self.inner.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._drain_timer is not None:
            self._drain_timer.cancel()
            self._drain_timer = None
        if _CONNECTIONS.get(self._key) is self:
            del _CONNECTIONS[self._key]
        self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()

    # ------------------------------------------------------------------ told by EdgeMiddleware
    def request_started(self, length: int | None, chunked: bool) -> None:
        """The request's head arrived; without a body it has fully arrived."""
        self._length, self._chunked = length, chunked
        if not chunked and not length:
            self.request_arrived()

    def request_arrived(self) -> None:
        """The whole request arrived: no deadline while the app answers it."""
        self._arrived = True
        self._disarm()

    def response_sent(self) -> None:
        """The response went out: the next request on this connection has its own deadline."""
        if not self._arrived:
            return  # answered before the body arrived (a 413): the close drains it
        self._reset_request()
        if not self.transport.is_closing():
            self._arm()

    # ------------------------------------------------------------------ the deadline
    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(self.request_timeout_s, self._expired)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self) -> None:
        self._deadline = None
        if not self._arrived and not self.transport.is_closing():  # a slow client: closed, never drained
            self.transport.close()

    # ------------------------------------------------------------------ draining a refused body
    def _track(self, data: bytes) -> bool:
        """Count this request's raw bytes; True once its body has ended (Content-Length
        reached, or the last chunk seen), or at the drain cap."""
        start = self._seen
        self._seen += len(data)
        window = self._tail + data
        if self._head_end is None:
            i = window.find(_HEAD_END)
            if i >= 0:
                self._head_end = start - len(self._tail) + i + len(_HEAD_END)
        self._tail = window[-8:]
        if self.draining and self._seen - self._drain_from > DRAIN_MAX_BYTES:
            return True
        if self._head_end is None:
            return False
        if self._length is not None:
            return self._seen >= self._head_end + self._length
        if self._chunked:
            return window.endswith(_LAST_CHUNK) and self._seen > self._head_end
        return True

    def close_softly(self) -> None:
        """Close now, unless the client is still sending a body we answered without reading:
        then read and discard the rest of it (at most DRAIN_MAX_BYTES, DRAIN_MAX_S) and close
        after, so the client reads our response instead of a reset."""
        real = self.transport
        if self.draining:
            return
        if real.is_closing() or not self.drain_on_close or self._arrived or self._track(b""):
            real.close()
            return
        self.draining = True
        self._drain_from = self._seen
        self._disarm()
        self._drain_timer = self.loop.call_later(DRAIN_MAX_S, self._finish_drain)
        real.resume_reading()

    def _finish_drain(self) -> None:
        if self._drain_timer is not None:
            self._drain_timer.cancel()
            self._drain_timer = None
        if not self.transport.is_closing():
            self.transport.close()


#: Largest request head (request line and headers) uvicorn buffers: its public
#: ``h11_max_incomplete_event_size`` setting (h11's own default).
H11_MAX_HEAD_BYTES = 16 * 1024


def server_config(app: Any, host: str = "127.0.0.1", port: int = 8000, log_level: str = "warning",
                  forwarded_allow_ips: str | None = None):
    """A uvicorn Config with the app's limits: request deadline, keep-alive timeout,
    connection cap.

    ``forwarded_allow_ips``: the reverse proxies (comma-separated addresses or networks, or
    ``*``) whose X-Forwarded-For names the client (``fdpkit serve --forwarded-allow-ips``);
    None: the ``FORWARDED_ALLOW_IPS`` environment variable when set, else none. No address is
    trusted unless the operator names it: uvicorn's own default trusts the loopback
    addresses, so that any local process could choose the client address that the per-client
    login limit counts (:mod:`fdpkit.web.login_guard`) with a new X-Forwarded-For each try."""
    import os

    import uvicorn
    from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

    limits = app.state.limits
    protocol = type("FdpkitRequestDeadline", (RequestDeadline,), {"request_timeout_s": limits.request_timeout_s})
    trusted = (forwarded_allow_ips if forwarded_allow_ips is not None
               else os.environ.get("FORWARDED_ALLOW_IPS", "")).strip()
    # uvicorn's proxy handling, applied inside ConnectionKey so that the connection is still
    # found by its own addresses (see ConnectionKey); without a trusted proxy the peer is the client
    served = ConnectionKey(ProxyHeadersMiddleware(app, trusted_hosts=trusted) if trusted else app)
    return uvicorn.Config(served, host=host, port=port, log_level=log_level, http=protocol, ws="none",
                          proxy_headers=False,
                          lifespan="on", timeout_keep_alive=int(max(1, limits.keep_alive_s)),
                          limit_concurrency=limits.max_connections, h11_max_incomplete_event_size=H11_MAX_HEAD_BYTES,
                          timeout_graceful_shutdown=5)
