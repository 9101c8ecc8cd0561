"""The fdpkit web calculator: FastAPI app factory. Pages and their JSON twins live in one
router per page (``routers/``); this module wires them, the static files, the security
headers and the error handlers."""

from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, RedirectResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from fastapi.staticfiles import StaticFiles

import fdpkit
from fdpkit.web.auth import AuthError
from fdpkit.web.common import HERE, Limits, api_error, page
from fdpkit.web.pool import ServerBusy
from fdpkit.web.signed_links import server_key
from fdpkit.web.server import CSP, SECURITY_HEADERS, EdgeMiddleware  # noqa: F401 (re-exported)
from fdpkit.web.routers import audit
from fdpkit.web.routers import calculator
from fdpkit.web.routers import calibrate
from fdpkit.web.routers import compare
from fdpkit.web.routers import convert
from fdpkit.web.routers import ledger_api
from fdpkit.web.routers import ledger_lifts
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
    ledger_lifts,
)


class _App(FastAPI):
    """FastAPI with :class:`EdgeMiddleware` OUTSIDE Starlette's error middleware, so that
    500 responses carry the security headers too and oversized bodies never get parsed."""

    def build_middleware_stack(self):  # type: ignore[override]
        return EdgeMiddleware(super().build_middleware_stack(), self.state.limits.max_body_bytes,
                              audit.UPLOAD_BODY_LIMITS)


@asynccontextmanager
async def _lifespan(app: FastAPI):
    from fdpkit.web.common import pool_of

    from fdpkit.web.jobs import warm_server

    pool_of(app, "light").start()  # workers import fdpkit while the server starts
    pool_of(app, "heavy").start()
    if app.state.limits.warm_workers:  # the server's own pre-job work (cost model), in the background
        warming = asyncio.get_running_loop().run_in_executor(None, warm_server)
    yield
    if app.state.limits.warm_workers:
        warming.cancel()
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


def _wants_page(request: Request) -> bool:
    """A browser asking for a page (not the JSON API): errors answer with a styled page."""
    return "text/html" in request.headers.get("accept", "") and not request.url.path.startswith("/api/")


def error_page(request: Request, title: str, message: str, status: int, back: str = "/calculator",
               back_label: str = "Back to the calculator", error_id: str = "error-message"):
    """A styled error or refusal page (the site's header and nav) with a way back."""
    return page(request, "error.html", {"title": title, "message": message, "back": back, "back_label": back_label,
                                        "error_id": error_id}, status=status)


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
    app.state.link_key = server_key()  # signs the figures a report's links carry (fdpkit.web.signed_links)
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")
    for module in ROUTERS:
        app.include_router(module.router)

    @app.exception_handler(ServerBusy)
    async def server_busy(request: Request, exc: ServerBusy):
        if _wants_page(request):
            resp = error_page(request, "Busy: please try again", str(exc), 503,
                              back=request.url.path, back_label="Try again")
            resp.headers["Retry-After"] = str(exc.retry_after)
            return resp
        return JSONResponse({"detail": str(exc)}, status_code=503,
                            headers={"Retry-After": str(exc.retry_after)})

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError):
        parts = []
        for err in exc.errors():
            if err.get("type") == "json_invalid":  # "0: JSON decode error": say why, not the offset
                why = (err.get("ctx") or {}).get("error")
                parts.append(f"the request body is not valid JSON: {why}" if why else "the request body is not valid JSON")
                continue
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
        return error_page(request, "Forbidden", exc.message, 403, back="/ledger", back_label="Back to the ledger",
                          error_id="forbidden")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException):
        """A browser asking for a page gets a styled page with a way back; everyone else JSON."""
        if _wants_page(request) and exc.status_code in (400, 403, 404, 405):
            # 400: a form Starlette could not read (over 1,000 fields, a broken multipart body)
            title = {400: "Form not read", 403: "Forbidden", 404: "Page not found", 405: "Not allowed"}[exc.status_code]
            back = request.url.path if exc.status_code == 400 else "/calculator"
            return error_page(request, title, str(exc.detail), exc.status_code, back=back,
                              back_label="Back to the form" if exc.status_code == 400 else "Back to the calculator")
        return JSONResponse({"detail": exc.detail}, status_code=exc.status_code, headers=getattr(exc, "headers", None))

    @app.exception_handler(ValueError)
    async def value_error(request: Request, exc: ValueError):
        if _wants_page(request):
            return error_page(request, "Refused", str(exc), 422, back=request.url.path, back_label="Back to the form")
        return api_error(exc)

    @app.get("/", include_in_schema=False)
    async def index():
        return RedirectResponse("/calculator", status_code=307)

    @app.get("/docs", include_in_schema=False)
    async def docs(request: Request):
        """Swagger UI (local files) inside the site's header and nav, with a way back."""
        return page(request, "docs.html", {})

    @app.get("/favicon.ico", include_in_schema=False)
    async def favicon():
        return FileResponse(str(HERE / "static" / "favicon.svg"), media_type="image/svg+xml")

    @app.get("/healthz", include_in_schema=False)
    async def health():
        pools = getattr(app.state, "pools", {})
        return {"status": "ok", "version": fdpkit.__version__,
                "warm_workers": {lane: pool.warmed() for lane, pool in pools.items()}}

    return app
