"""Ledger fixtures: every ledger test module runs against SQLite AND a real PostgreSQL 15
server that the fixture starts itself (initdb + pg_ctl in a temporary directory, Unix
socket only, as an unprivileged user when the tests run as root). When the server binaries
are missing, the PostgreSQL cases follow the one policy of tests/_system.py (fail under
CI, skip with one line elsewhere)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import uuid

import pytest

import _system


def _as_server_user(cmd: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return cmd
    return ["runuser", "-u", "nobody", "--", *cmd]


@pytest.fixture(scope="session")
def pg_server():
    """A throw-away PostgreSQL server; yields the socket directory."""
    bindir = _system.require("postgresql")
    base = tempfile.mkdtemp(prefix="fdpkit-pg-")
    data, sock, log = os.path.join(base, "data"), os.path.join(base, "sock"), os.path.join(base, "log")
    os.mkdir(sock)
    if os.geteuid() == 0:
        import pwd

        nobody = pwd.getpwnam("nobody")
        for p in (base, sock):
            os.chown(p, nobody.pw_uid, nobody.pw_gid)
        os.chmod(base, 0o700)
    env = {**os.environ, "LC_ALL": "C", "LANG": "C"}
    subprocess.run(_as_server_user([f"{bindir}/initdb", "-D", data, "-U", "postgres", "--auth=trust",
                                    "-E", "UTF8", "--no-sync"]),
                   check=True, capture_output=True, env=env, cwd=base)
    opts = f"-k {sock} -c listen_addresses='' -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    subprocess.run(_as_server_user([f"{bindir}/pg_ctl", "-D", data, "-l", log, "-o", opts, "-w", "-t", "60",
                                    "start"]), check=True, capture_output=True, env=env, cwd=base)
    try:
        yield sock
    finally:
        subprocess.run(_as_server_user([f"{bindir}/pg_ctl", "-D", data, "-m", "immediate", "-w", "stop"]),
                       capture_output=True, env=env, cwd=base)
        shutil.rmtree(base, ignore_errors=True)


def _new_pg_database(sock: str) -> str:
    import psycopg

    name = "t_" + uuid.uuid4().hex[:12]
    with psycopg.connect(host=sock, user="postgres", dbname="postgres", autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return f"postgresql+psycopg://postgres@/{name}?host={sock}"


@pytest.fixture(params=["sqlite", "postgresql"])
def ledger_url(request, tmp_path):
    """A fresh, empty ledger URL on each backend."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'ledger.sqlite'}"
    return _new_pg_database(request.getfixturevalue("pg_server"))


@pytest.fixture
def ledger(ledger_url):
    from fdpkit.ledger import open_ledger

    led = open_ledger(ledger_url)
    yield led
    led.close()
