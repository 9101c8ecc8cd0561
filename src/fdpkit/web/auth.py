"""Login, roles and CSRF for the ledger pages and their JSON twins (no maths here).

- Accounts are the ledger's local users (``fdpkit ledger user add``), argon2 hashes.
- A login sets an HttpOnly, SameSite=Strict session cookie; the server keeps only the
  token's SHA-256 (``fdpkit.ledger.users``).
- Every POST carries the session's CSRF token: a ``csrf_token`` form field on the pages, an
  ``X-CSRF-Token`` header on the API. The login form itself uses a double-submit cookie.
- Roles, each including the ones before it: viewer < analyst (propose) < approver
  (approve, reject, release, override) < admin (users, datasets, thresholds).
The calculator pages stay public: only routes that use :func:`require` need a login.
"""

from __future__ import annotations

import hmac
import secrets
import threading
from dataclasses import dataclass
from typing import Any

from fastapi import Depends, Request
from starlette.concurrency import run_in_threadpool

from fdpkit.web.json_numbers import read_form
from fdpkit.web.repeated_fields import RepeatedField

SESSION_COOKIE = "fdpkit_session"
LOGIN_CSRF_COOKIE = "fdpkit_login_csrf"
SETUP_CSRF_COOKIE = "fdpkit_setup_csrf"
_LOCK = threading.Lock()


class AuthError(Exception):
    """401 (no valid session) or 403 (wrong role, bad CSRF token)."""

    def __init__(self, status: int, message: str, api: bool) -> None:
        super().__init__(message)
        self.status, self.message, self.api = status, message, api


@dataclass(frozen=True)
class Principal:
    name: str
    role: str
    csrf: str
    user_id: int


def ledger_of(request: Request):
    """The app's ledger, opened (and migrated) on first use: the calculator never needs it."""
    app = request.app
    led = getattr(app.state, "ledger", None)
    if led is None:
        with _LOCK:
            led = getattr(app.state, "ledger", None)
            if led is None:
                from fdpkit.ledger import open_ledger

                led = open_ledger(getattr(app.state, "ledger_url", None))
                app.state.ledger = led
    return led


def ledger_label(app) -> str:
    """The ledger database the server uses, for people: the SQLite file, or the URL
    without its password (shown on the ledger pages and in the CLI hints as ``--db``)."""
    label = getattr(app.state, "ledger_label", None)
    if label is None:
        from sqlalchemy.engine import make_url

        from fdpkit.ledger.db import resolve_url

        try:
            u = make_url(resolve_url(getattr(app.state, "ledger_url", None)))
            if u.get_backend_name() == "sqlite":
                label = u.database if u.database not in (None, "", ":memory:") else "in-memory SQLite (lost at exit)"
            else:
                label = u.render_as_string(hide_password=True)
        except Exception as exc:  # noqa: BLE001 - shown, never raised: the page says what is wrong
            label = f"unusable ledger URL ({exc})"
        app.state.ledger_label = label
    return label


def setup_token_ok(app, sent: str) -> bool:
    """Whether ``sent`` is the server's one-time setup token (``fdpkit serve`` prints it
    while the ledger has no account; used once, then forgotten)."""
    token = getattr(app.state, "setup_token", None)
    sent = (sent or "").strip()
    return bool(token) and bool(sent) and hmac.compare_digest(sent.encode(), str(token).encode())


async def call(fn, *args: Any, **kwargs: Any):
    """Run blocking, BOUNDED ledger work in the thread pool: database reads and writes that
    compose nothing and render nothing (sessions, logins with argon2, users, datasets,
    release lists, history, verify, thresholds, reject, withdraw) and the cost estimates of
    :mod:`fdpkit.ledger.work`. Anything that accounts or renders goes through
    :func:`run_ledger` (a worker process with the time limit)."""
    return await run_in_threadpool(fn, *args, **kwargs)


async def run_ledger(request: Request, view: str, *args: Any, work: float, **kwargs: Any):
    """Run the ledger view ``view`` (:mod:`fdpkit.web.ledger_jobs`) in a worker PROCESS of the
    lane that ``work`` (:mod:`fdpkit.ledger.work` estimate) picks, within the app's time
    limit (killed and replaced beyond it: :class:`fdpkit.web.pool.JobFailed`, HTTP 422).
    An in-memory ledger cannot be reached from another process: its views run in a thread.
    Raises the view's NotFound or ValueError."""
    from fdpkit.ledger import NotFound
    from fdpkit.ledger.db import in_memory
    from fdpkit.web.common import run_heavy
    from fdpkit.web.ledger_jobs import Missing, ledger_job

    led = ledger_of(request)
    if in_memory(led.url):
        out = await call(ledger_job, led, view, *args, **kwargs)
    else:
        out = await run_heavy(request, ledger_job, led.url, view, *args, work=work, **kwargs)
    if isinstance(out, Missing):
        raise NotFound(out.message)
    return out


async def approval_pdf(request: Request, release_id: int) -> str | None:
    """Render and store the PDF of a release's approval record in a worker process (the
    approval itself stores the JSON record and answers first): the PDF's SHA-256, or None
    when rendering failed (nothing is half-written; the release page offers it again)."""
    import logging

    from fdpkit.ledger.work import REPORT_RENDER_WORK, approval_work

    jobs = pdf_jobs(request.app)
    jobs.add(int(release_id))
    try:
        work = await call(approval_work, ledger_of(request), release_id) + REPORT_RENDER_WORK
        return await run_ledger(request, "approval_pdf", release_id, work=work)
    except Exception as exc:  # noqa: BLE001 - a background job: log it, the page shows the PDF as missing
        logging.getLogger("fdpkit.web").warning("approval PDF of release %s not rendered: %s", release_id, exc)
        return None
    finally:
        jobs.discard(int(release_id))


def pdf_jobs(app) -> set[int]:
    """Release ids whose approval-record PDF is rendering now (the page polls only then)."""
    jobs = getattr(app.state, "pdf_jobs", None)
    if jobs is None:
        jobs = app.state.pdf_jobs = set()
    return jobs


async def principal(request: Request, role: str, api: bool) -> Principal:
    from fdpkit.ledger.users import has_role, session_user

    request.state.ledger_db = ledger_label(request.app)
    token = request.cookies.get(SESSION_COOKIE)
    if not token:
        raise AuthError(401, "login required", api)
    found = await call(session_user, await call(ledger_of, request), token)  # opened off the event loop
    if found is None:
        raise AuthError(401, "login required (the session has expired)", api)
    user, csrf = found
    if not has_role(user.role, role):
        raise AuthError(403, f"this needs the {role} role; {user.name} is {user.role}", api)
    if request.method not in ("GET", "HEAD", "OPTIONS"):
        if api:
            sent = request.headers.get("x-csrf-token", "")
        else:  # the form's other repeated fields are the route's to show beside them (read_form)
            form, twice, _ = await read_form(request)
            if "csrf_token" in twice:  # no field to show it beside: refused as the form is read
                raise RepeatedField(twice["csrf_token"], "csrf_token")
            sent = str(form.get("csrf_token") or "")
        if not sent or not hmac.compare_digest(sent, csrf):
            raise AuthError(403, "missing or wrong CSRF token", api)
    return Principal(user.name, user.role, csrf, user.id)


def require(role: str, *, api: bool = False):
    """A dependency: the logged-in user, with at least ``role`` (and a CSRF token on POST)."""

    async def dep(request: Request) -> Principal:
        return await principal(request, role, api)

    return Depends(dep)


def new_login_csrf() -> str:
    return secrets.token_urlsafe(24)


def set_session_cookie(response, request: Request, token: str) -> None:
    response.set_cookie(SESSION_COOKIE, token, httponly=True, samesite="strict", path="/",
                        secure=request.url.scheme == "https", max_age=12 * 3600)
