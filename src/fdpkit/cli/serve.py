"""``fdpkit serve``: the web calculator."""

from __future__ import annotations

from typing import Optional

import typer

from fdpkit.cli._common import err, fail


def _check_port(host: str, port: int) -> None:
    """Fail with one clear line if the port cannot be bound (busy, privileged, bad host)."""
    import errno
    import socket

    if not 0 < port < 65536:
        fail(f"--port must be between 1 and 65535, got {port}")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                fail(f"port {port} on {host} is already in use: stop the other server or choose another "
                     f"port, e.g. `fdpkit serve --port {port + 1}` or `make run PORT={port + 1}`")
            if exc.errno == errno.EACCES:
                fail(f"port {port} needs administrator rights: choose a port above 1023, e.g. --port 8080")
            fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}")


def _first_run_token(db: Optional[str], base: str) -> Optional[str]:
    """While the ledger has no account: a one-time setup token for ``/ledger/setup``,
    printed to this console only (whoever started the server is who may create the first
    admin); None when the ledger has accounts or cannot be opened (its pages say why)."""
    import secrets

    from fdpkit.ledger import open_ledger
    from fdpkit.ledger.users import has_users

    try:
        with open_ledger(db) as led:
            if has_users(led):
                return None
            from sqlalchemy.engine import make_url

            label = make_url(led.url).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - the ledger pages report an unusable ledger
        return None
    token = secrets.token_urlsafe(18)
    err.print(f"The ledger ({label}) has no accounts yet. Create the first admin at {base}/ledger/setup "
              f"with this one-time setup token:\n\n    {token}\n\n(or run `fdpkit ledger user add NAME --role admin"
              f"{' --db ' + db if db else ''}`)")
    return token


def serve(host: str = typer.Option("127.0.0.1", help="Address to listen on."),
          port: int = typer.Option(8000, help="Port to listen on."),
          db: Optional[str] = typer.Option(None, "--db", help="Ledger URL or SQLite file for the /ledger pages "
                                                              "(default: FDPKIT_LEDGER, else the user's data directory)."),
          forwarded_allow_ips: Optional[str] = typer.Option(
              None, "--forwarded-allow-ips", metavar="<addresses>",
              help="Reverse proxies (comma-separated addresses or networks, or *) whose X-Forwarded-For "
                   "names the client, e.g. 127.0.0.1 behind a local nginx (default: FORWARDED_ALLOW_IPS "
                   "if set, else none: the connection's peer is the client the login limit counts).")) -> None:
    """Start the web calculator (and the privacy-budget ledger pages)."""
    import uvicorn

    from fdpkit.web.common import Limits
    from fdpkit.web.main import create_app
    from fdpkit.web.server import server_config

    _check_port(host, port)
    err.print(f"fdpkit web calculator on http://{host}:{port}/ (Ctrl-C to stop)")
    token = _first_run_token(db, f"http://{host}:{port}")
    # request deadline, keep-alive timeout and connection cap from the app's Limits; the
    # workers warm at start, so that no request waits for imports and cold caches
    app = create_app(Limits(warm_workers=True), ledger_url=db, setup_token=token)
    uvicorn.Server(server_config(app, host=host, port=port, forwarded_allow_ips=forwarded_allow_ips)).run()
