"""Logins that cannot take the server down: a per-account and per-client rate limit with
exponential backoff (HTTP 429 with Retry-After), and at most a few password hashes at
once (argon2id takes 64 MiB each: 40 concurrent hashes would take 2.5 GiB).

- Per client (the peer address): at most :data:`CLIENT_ATTEMPTS` attempts per
  :data:`CLIENT_WINDOW_S` seconds.
- Per account name (known or not, so names cannot be probed): after
  :data:`FREE_FAILURES` failed attempts each further attempt waits
  ``2 ** (failures - FREE_FAILURES)`` seconds (at most :data:`MAX_BACKOFF_S`) after the last
  failure; a success clears the count.
- :data:`HASH_SLOTS` logins hash at once per process; one that waits more than
  :data:`SLOT_WAIT_S` seconds for a slot gets 503 with Retry-After. Waiting happens on the
  event loop, not in the thread pool, so other requests (and /healthz) keep running.

The counters live in the process (a restart clears them); they bound what one process
does, which is what protects the machine. No maths here.
"""

from __future__ import annotations

import asyncio
import collections
import math
import threading
import time

CLIENT_ATTEMPTS = 30
CLIENT_WINDOW_S = 60.0
FREE_FAILURES = 5
MAX_BACKOFF_S = 300.0
HASH_SLOTS = 2
SLOT_WAIT_S = 10.0
#: Most account names / clients remembered (oldest forgotten first).
MAX_TRACKED = 10_000


class Throttled(Exception):
    """429 (rate limit / backoff) or 503 (no hash slot): ``status`` and ``retry_after`` (s)."""

    def __init__(self, status: int, retry_after: float, message: str) -> None:
        super().__init__(message)
        self.status, self.retry_after, self.message = status, max(1, math.ceil(retry_after)), message


class LoginGuard:
    """The rate limits and hash slots of one app (see the module notes)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._clients: collections.OrderedDict[str, collections.deque] = collections.OrderedDict()
        self._failures: collections.OrderedDict[str, tuple[int, float]] = collections.OrderedDict()
        self._slots: asyncio.Semaphore | None = None

    def admit(self, client: str, account: str, now: float | None = None) -> None:
        """Count an attempt; :class:`Throttled` (429) when over a limit."""
        t = time.monotonic() if now is None else now
        with self._lock:
            q = self._clients.setdefault(client, collections.deque())
            self._clients.move_to_end(client)
            while q and q[0] <= t - CLIENT_WINDOW_S:
                q.popleft()
            if len(q) >= CLIENT_ATTEMPTS:
                raise Throttled(429, q[0] + CLIENT_WINDOW_S - t, "too many login attempts from this client; "
                                "try again later")
            n, last = self._failures.get(account, (0, 0.0))
            if n >= FREE_FAILURES:
                wait = min(MAX_BACKOFF_S, 2.0 ** (n - FREE_FAILURES)) - (t - last)
                if wait > 0:
                    raise Throttled(429, wait, "too many failed logins for this account; try again later")
            q.append(t)
            _trim(self._clients)

    def record(self, account: str, ok: bool, now: float | None = None) -> None:
        """A failed attempt counts against ``account``; a success clears it."""
        t = time.monotonic() if now is None else now
        with self._lock:
            if ok:
                self._failures.pop(account, None)
                return
            n, _ = self._failures.get(account, (0, 0.0))
            self._failures[account] = (n + 1, t)
            self._failures.move_to_end(account)
            _trim(self._failures)

    async def slot(self):
        """An async context manager holding one hash slot (503 when none frees in time)."""
        if self._slots is None:
            self._slots = asyncio.Semaphore(HASH_SLOTS)
        return _Slot(self._slots)


class _Slot:
    def __init__(self, sem: asyncio.Semaphore) -> None:
        self.sem = sem

    async def __aenter__(self):
        try:
            await asyncio.wait_for(self.sem.acquire(), SLOT_WAIT_S)
        except asyncio.TimeoutError:
            raise Throttled(503, 2, "too many logins at once; try again in a few seconds") from None
        return self

    async def __aexit__(self, *exc) -> None:
        self.sem.release()


def _trim(d: collections.OrderedDict) -> None:
    while len(d) > MAX_TRACKED:
        d.popitem(last=False)


def guard_of(app) -> LoginGuard:
    g = getattr(app.state, "login_guard", None)
    if g is None:
        g = app.state.login_guard = LoginGuard()
    return g
