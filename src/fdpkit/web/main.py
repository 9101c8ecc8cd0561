"""The fdpkit web calculator: FastAPI app factory. Pages and their JSON twins live in one
router per page (``routers/``); this module wires them, the static files, the security
headers and the error handlers."""

from __future__ import annotations

import html
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles

import fdpkit
from fdpkit.web.auth import AuthError
from fdpkit.web.common import HERE, Limits
from fdpkit.web.pool import ServerBusy
from fdpkit.web.server import CSP, SECURITY_HEADERS, EdgeMiddleware  # noqa: F401 (re-exported)
from fdpkit.web.routers import audit
from fdpkit.web.routers import calculator
from fdpkit.web.routers import calibrate
from fdpkit.web.routers import compare
from fdpkit.web.routers import convert
from fdpkit.web.routers import ledger_api
from fdpkit.web.routers import ledger_login
from fdpkit.web.routers import ledger_pages
from fdpkit.web.routers import plan
from fdpkit.web.routers import report
from fdpkit.web.routers import risk
from fdpkit.web.routers import sweep

#: One router per page and its JSON twins, in navigation order.
ROUTERS = (
    calculator,
    report,
    calibrate,
    convert,
    compare,
    risk,
    plan,
    sweep,
    audit,
    ledger_login,
    ledger_pages,
    ledger_api,
)


class _App(FastAPI):
    """FastAPI with :class:`EdgeMiddleware` OUTSIDE Starlette's error middleware, so that
    500 responses carry the security headers too and oversized bodies never get parsed."""

    def build_middleware_stack(self):  # type: ignore[override]
        return EdgeMiddleware(super().build_middleware_stack(), self.state.limits.max_body_bytes)


@asynccontextmanager
async def _lifespan(app: FastAPI):
    from fdpkit.web.common import pool_of

    pool_of(app, "light").start()  # workers import fdpkit while the server starts
    pool_of(app, "heavy").start()
    yield
    for pool in getattr(app.state, "pools", {}).values():
        pool.close()


def _percent_hint(value) -> str:
    """JSON numbers are numbers: a probability sent as "5%" is refused with the number to send."""
    if isinstance(value, str) and value.strip().endswith("%"):
        try:
            return f"; JSON takes numbers: send {float(value.strip()[:-1]) / 100:g} for {value.strip()}"
        except ValueError:
            return ""
    return ""


def create_app(limits: Limits | None = None, ledger_url: str | None = None, setup_token: str | None = None) -> FastAPI:
    """Build the web application (``fdpkit serve`` runs it with
    :func:`fdpkit.web.server.server_config`: request deadline, keep-alive, connection cap).
    The ledger pages use ``ledger_url`` (default: ``FDPKIT_LEDGER``, else the SQLite file in
    the user's data directory), opened on first use. ``setup_token`` (``fdpkit serve`` makes
    and prints one) lets ``/ledger/setup`` create the first admin once, while the ledger has
    no account; without it the first admin is made with ``fdpkit ledger user add``."""
    app = _App(
        lifespan=_lifespan,
        docs_url=None,
        redoc_url=None,
        title="fdpkit web calculator",
        version=fdpkit.__version__,
        description="Risk-aware differential-privacy calculator: tight mu-GDP, attack risk, planning.",
    )
    app.state.limits = limits or Limits()
    app.state.ledger_url = ledger_url
    app.state.setup_token = setup_token
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")
    for module in ROUTERS:
        app.include_router(module.router)

    @app.exception_handler(ServerBusy)
    async def server_busy(request: Request, exc: ServerBusy):
        return JSONResponse({"detail": str(exc)}, status_code=503,
                            headers={"Retry-After": str(exc.retry_after)})

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError):
        parts = []
        for err in exc.errors():
            loc = ".".join(str(x) for x in err.get("loc", ()) if x != "body")
            msg = str(err.get("msg")) + _percent_hint(err.get("input"))
            parts.append(f"{loc}: {msg}" if loc else msg)
        errors = [{"loc": [str(x) for x in e.get("loc", ())], "msg": str(e.get("msg")),
                   "type": str(e.get("type"))} for e in exc.errors()]  # no raw input: it may be bytes
        return JSONResponse({"detail": "; ".join(parts) or "invalid request", "errors": errors},
                            status_code=422)

    @app.exception_handler(AuthError)
    async def auth_error(request: Request, exc: AuthError):
        if exc.api:
            return JSONResponse({"detail": exc.message}, status_code=exc.status)
        if exc.status == 401:
            from urllib.parse import quote

            target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
            return RedirectResponse(f"/ledger/login?next={quote(target)}", status_code=303)
        return HTMLResponse(f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>Forbidden</title>"
                            f"</head><body><h1>Forbidden</h1><p id='forbidden'>{html.escape(exc.message)}</p>"
                            "<p><a href='/ledger'>Ledger</a></p></body></html>", status_code=403)

    @app.exception_handler(ValueError)
    async def value_error(request: Request, exc: ValueError):
        return JSONResponse({"detail": str(exc)}, status_code=422)

    @app.get("/", include_in_schema=False)
    async def index():
        return RedirectResponse("/calculator", status_code=307)

    @app.get("/docs", include_in_schema=False)
    async def docs():
        return HTMLResponse(
            "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>fdpkit API</title>"
            "<link rel='stylesheet' href='/static/swagger/swagger-ui.css'></head><body>"
            "<div id='swagger-ui'></div><script src='/static/swagger/swagger-ui-bundle.js'></script>"
            "<script src='/static/swagger/init.js'></script></body></html>"
        )

    @app.get("/healthz", include_in_schema=False)
    async def health():
        return {"status": "ok", "version": fdpkit.__version__}

    return app
