"""``fdpkit serve``: the web calculator."""

from __future__ import annotations

from typing import Optional

import typer

from fdpkit.cli._common import err


def serve(host: str = typer.Option("127.0.0.1"), port: int = typer.Option(8000),
          db: Optional[str] = typer.Option(None, "--db", help="Ledger URL or SQLite file for the /ledger pages "
                                                              "(default: FDPKIT_LEDGER, else the user's data directory).")) -> None:
    """Start the web calculator (and the privacy-budget ledger pages)."""
    import uvicorn

    from fdpkit.web.main import create_app

    err.print(f"fdpkit web calculator on http://{host}:{port}/")
    uvicorn.run(create_app(ledger_url=db), host=host, port=port, log_level="warning")
