"""The per-client login limit counts the connection's peer, not an address the client names
(live, under ``fdpkit serve``'s uvicorn settings). uvicorn trusts X-Forwarded-For from the
loopback addresses by default, so a local process sending a new X-Forwarded-For with each
try was a new client each time and never met the limit (31 tries: 31 x 401, no 429). The
operator names the proxies to trust (``fdpkit serve --forwarded-allow-ips``); then the
address a proxy forwards is the client, as before."""

from __future__ import annotations

import httpx

from fdpkit.web.login_guard import CLIENT_ATTEMPTS
from fdpkit.web.main import create_app


def _tries(url: str) -> list[int]:
    """CLIENT_ATTEMPTS + 1 failed logins, each naming another account and another X-Forwarded-For."""
    with httpx.Client(timeout=30) as c:
        return [c.post(f"{url}/api/ledger/login", json={"username": f"u{i}", "password": "wrong"},
                       headers={"X-Forwarded-For": f"203.0.113.{i + 1}"}).status_code
                for i in range(CLIENT_ATTEMPTS + 1)]


def test_a_local_client_cannot_name_its_own_address_to_the_login_limit(serve_app, tmp_path, monkeypatch):
    monkeypatch.delenv("FORWARDED_ALLOW_IPS", raising=False)
    with serve_app(create_app(ledger_url=f"sqlite:///{tmp_path / 'ledger.sqlite'}")) as url:
        codes = _tries(url)
    assert codes[:-1] == [401] * CLIENT_ATTEMPTS and codes[-1] == 429, codes


def test_a_proxy_the_operator_names_forwards_the_client_address(serve_app, tmp_path, monkeypatch):
    monkeypatch.delenv("FORWARDED_ALLOW_IPS", raising=False)
    app = create_app(ledger_url=f"sqlite:///{tmp_path / 'ledger.sqlite'}")
    with serve_app(app, forwarded_allow_ips="127.0.0.1") as url:
        codes = _tries(url)
    assert codes == [401] * (CLIENT_ATTEMPTS + 1), codes  # each forwarded client tried once


def test_serve_takes_the_trusted_proxies_as_an_option():
    from typer.testing import CliRunner

    from fdpkit.cli import app

    out = CliRunner().invoke(app, ["serve", "--help"], env={"COLUMNS": "200"}).output
    assert "--forwarded-allow-ips" in out
