"""``fdpkit serve``: the web calculator."""

from __future__ import annotations

import typer

from fdpkit.cli._common import err


def serve(host: str = typer.Option("127.0.0.1"), port: int = typer.Option(8000)) -> None:
    """Start the web calculator."""
    import uvicorn

    from fdpkit.web.main import create_app
    from fdpkit.web.server import server_config

    err.print(f"fdpkit web calculator on http://{host}:{port}/")
    # request deadline, keep-alive timeout and connection cap from the app's Limits
    uvicorn.Server(server_config(create_app(), host=host, port=port)).run()
