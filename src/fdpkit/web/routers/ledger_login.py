"""Ledger login and logout: the page (double-submit CSRF cookie) and the JSON twin; the
first-run setup of the first admin (only while the ledger has no account, and only with
the one-time setup token that ``fdpkit serve`` prints at start). Every
login passes :mod:`fdpkit.web.login_guard` (rate limit and backoff: 429 with
Retry-After; a few password hashes at once: 503 with Retry-After) and never waits long
for the ledger's write lock (its session row: 503 with Retry-After)."""

from __future__ import annotations

import hmac
from urllib.parse import urlparse

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, RedirectResponse
from pydantic import BaseModel, ConfigDict, Field

from fdpkit.web.auth import (
    LOGIN_CSRF_COOKIE, SESSION_COOKIE, SETUP_CSRF_COOKIE, call, ledger_label, ledger_of, new_login_csrf,
    set_session_cookie, setup_token_ok,
)
from fdpkit.web.common import page
from fdpkit.web.json_numbers import CheckedJSONRoute, read_form
from fdpkit.web.repeated_fields import placed

router = APIRouter(route_class=CheckedJSONRoute)


def _safe_next(target: str | None) -> str:
    """Only local paths: never redirect off-site after a login."""
    if not target or not target.startswith("/") or target.startswith("//") or urlparse(target).netloc:
        return "/ledger"
    return target


async def _no_accounts(request: Request) -> bool:
    from fdpkit.ledger.users import has_users

    try:
        return not await call(has_users, await call(ledger_of, request))
    except Exception:  # noqa: BLE001 - an unusable ledger: the login page still shows
        return False


async def _login_page(request: Request, error: str = "", status: int = 200, next_url: str = "/ledger",
                      username: str = "", errors: dict | None = None):
    csrf = new_login_csrf()
    empty = await _no_accounts(request)
    resp = page(request, "ledger_login.html", {
        "error": error, "errors": errors or {}, "csrf": csrf, "next": _safe_next(next_url), "username": username[:200], "no_accounts": empty,
        "db": ledger_label(request.app), "setup_token": bool(getattr(request.app.state, "setup_token", None))},
        status=status)
    resp.set_cookie(LOGIN_CSRF_COOKIE, csrf, httponly=True, samesite="strict", path="/ledger/login")
    return resp


@router.get("/ledger/login", include_in_schema=False)
async def login_page(request: Request, next: str = "/ledger"):
    return await _login_page(request, next_url=next)


async def _login(request: Request, username: str, password: str):
    """(user, token, csrf), or None for a wrong name or password; Throttled (429/503)."""
    from fdpkit.ledger.users import Busy, authenticate, create_session
    from fdpkit.web.login_guard import Throttled, guard_of

    guard = guard_of(request.app)
    account = username[:200]
    guard.admit(request.client.host if request.client else "?", account)
    led = await call(ledger_of, request)  # opened (and migrated) off the event loop on first use
    try:
        async with await guard.slot():
            user = await call(authenticate, led, username, password)
        guard.record(account, user is not None)
        if user is None:
            return None
        token, csrf = await call(create_session, led, user)
    except Busy as exc:
        raise Throttled(503, exc.retry_after, str(exc)) from None
    return user, token, csrf


async def _throttled(exc, api: bool, request: Request, next_url: str = "/ledger"):
    headers = {"Retry-After": str(exc.retry_after)}
    if api:
        return JSONResponse({"detail": exc.message}, status_code=exc.status, headers=headers)
    resp = await _login_page(request, exc.message[:1].upper() + exc.message[1:] + ".", exc.status, next_url)
    resp.headers["Retry-After"] = headers["Retry-After"]
    return resp


@router.post("/ledger/login", include_in_schema=False)
async def login_submit(request: Request):
    form, twice, shown = await read_form(request)
    sent, cookie = str(form.get("csrf_token") or ""), request.cookies.get(LOGIN_CSRF_COOKIE, "")
    next_url = _safe_next(str(form.get("next") or "/ledger"))
    if twice:  # beside the field (a password never shown); not a try: the login limit is not consumed
        errors = placed(twice, ("username", "password"), "form")
        return await _login_page(request, errors.pop("form", ""), 422, next_url if "next" not in twice else "/ledger",
                                 shown.get("username", str(form.get("username") or "")), errors)
    if not sent or not cookie or not hmac.compare_digest(sent, cookie):
        return await _login_page(request, "The form expired; please log in again.", 403, next_url,
                                 str(form.get("username") or ""))
    from fdpkit.web.login_guard import Throttled

    try:
        found = await _login(request, str(form.get("username") or ""), str(form.get("password") or ""))
    except Throttled as exc:
        return await _throttled(exc, False, request, next_url)
    if found is None:
        return await _login_page(request, "Unknown user or wrong password.", 401, next_url,
                                 str(form.get("username") or ""))
    _, token, _ = found
    resp = RedirectResponse(next_url, status_code=303)
    set_session_cookie(resp, request, token)
    resp.delete_cookie(LOGIN_CSRF_COOKIE, path="/ledger/login")
    return resp


@router.post("/ledger/logout", include_in_schema=False)
async def logout(request: Request):
    from fdpkit.ledger.users import end_session

    from fdpkit.web.auth import principal

    await principal(request, "viewer", api=False)  # CSRF-checked like every form
    await request.form()  # a field given more than once: refused (422), the session kept
    await call(end_session, ledger_of(request), request.cookies.get(SESSION_COOKIE))
    resp = RedirectResponse("/ledger/login", status_code=303)
    resp.delete_cookie(SESSION_COOKIE, path="/")
    return resp


class LoginRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    username: str = Field(..., min_length=1, max_length=200)
    password: str = Field(..., min_length=1, max_length=1000)


@router.post("/api/ledger/login", tags=["ledger"])
async def login_api(request: Request, body: LoginRequest):
    """Log in (JSON body, so no cross-site form can post it): sets the session cookie and
    returns the CSRF token to send as ``X-CSRF-Token`` on every POST."""
    from fdpkit.web.login_guard import Throttled

    try:
        found = await _login(request, body.username, body.password)
    except Throttled as exc:
        return await _throttled(exc, True, request)
    if found is None:
        return JSONResponse({"detail": "unknown user or wrong password"}, status_code=401)
    user, token, csrf = found
    resp = JSONResponse({"user": user.name, "role": user.role, "csrf_token": csrf})
    set_session_cookie(resp, request, token)
    return resp


# ------------------------------------------------------------------ first-run setup
async def _setup_page(request: Request, error: str = "", status: int = 200, name: str = "",
                      errors: dict | None = None):
    if not await _no_accounts(request):
        return RedirectResponse("/ledger/login", status_code=303)
    csrf = new_login_csrf()
    resp = page(request, "ledger_setup.html", {
        "error": error, "errors": errors or {}, "csrf": csrf, "name": name[:200], "db": ledger_label(request.app),
        "setup_token": bool(getattr(request.app.state, "setup_token", None))}, status=status)
    resp.set_cookie(SETUP_CSRF_COOKIE, csrf, httponly=True, samesite="strict", path="/ledger/setup")
    return resp


@router.get("/ledger/setup", include_in_schema=False)
async def setup_page(request: Request):
    """Create the first admin: only while the ledger has no account (else the login page)."""
    return await _setup_page(request)


@router.post("/ledger/setup", include_in_schema=False)
async def setup_submit(request: Request):
    """The first admin, with the one-time setup token the server printed at start; then
    logged in. Rate-limited like a login; the token works once."""
    from fdpkit.ledger.users import Busy, add_first_admin, create_session
    from fdpkit.web.login_guard import Throttled, guard_of

    form, twice, shown = await read_form(request)
    name = str(form.get("name") or "").strip()
    if twice:  # beside the field (the token and passwords never shown); not a try, the token not used
        errors = placed(twice, ("setup_token", "name", "password", "password_repeat"), "form")
        return await _setup_page(request, errors.pop("form", ""), 422, shown.get("name", name), errors)
    sent, cookie = str(form.get("csrf_token") or ""), request.cookies.get(SETUP_CSRF_COOKIE, "")
    if not sent or not cookie or not hmac.compare_digest(sent, cookie):
        return await _setup_page(request, "The form expired; please try again.", 403, name)
    guard = guard_of(request.app)
    try:
        guard.admit(request.client.host if request.client else "?", "(first-run setup)")
    except Throttled as exc:
        return await _setup_page(request, exc.message[:1].upper() + exc.message[1:] + ".", exc.status, name)
    if not setup_token_ok(request.app, str(form.get("setup_token") or "")):
        guard.record("(first-run setup)", False)
        return await _setup_page(request, "Wrong or missing setup token: use the one `fdpkit serve` printed when "
                                 "this server started.", 403, name)
    password = str(form.get("password") or "")
    if password != str(form.get("password_repeat") or ""):
        return await _setup_page(request, "The two passwords differ.", 422, name)
    led = await call(ledger_of, request)
    try:
        async with await guard.slot():
            user = await call(add_first_admin, led, name, password=password)
        request.app.state.setup_token = None  # used once
        guard.record("(first-run setup)", True)
        token, _ = await call(create_session, led, user)
    except Throttled as exc:
        return await _setup_page(request, exc.message, exc.status, name)
    except Busy as exc:
        return await _setup_page(request, str(exc), 503, name)
    except ValueError as exc:
        return await _setup_page(request, str(exc)[:1].upper() + str(exc)[1:] + ".", 422, name)
    resp = RedirectResponse("/ledger?welcome=1", status_code=303)
    set_session_cookie(resp, request, token)
    resp.delete_cookie(SETUP_CSRF_COOKIE, path="/ledger/setup")
    return resp
