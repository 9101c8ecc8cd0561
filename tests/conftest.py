"""Shared fixtures, one of each for the whole suite:

- ``browser``: Debian's chromium under Playwright (one per test module);
- ``live_server``: the web app under uvicorn on 127.0.0.1 (one per session), and
  ``serve_app``, the same server for another app (``with serve_app(app) as url:``);
  ``serve_process``, ``fdpkit serve`` in its own process (for load tests);
- ``pdftoppm``; ``published``, the reference numbers from their one source, the in-repo
  tests/data/published.json (tests/_reference.py; checked against ../shared's copy).

The system packages (chromium, pdftoppm, PostgreSQL) are reached only through
``_system.require``: one policy for all of them (fail under CI, skip with one line elsewhere;
see tests/_system.py). Tests that use ``browser`` are marked ``browser`` and those that reach
PostgreSQL ``postgres`` here, so that ``make test-fast`` deselects them whatever their module
says."""

import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

import _system
from _reference import load_published

_SRC = str(Path(__file__).resolve().parent.parent / "src")

# Tests never touch the user's own privacy-budget ledger: the web app opens its default
# ledger lazily (e.g. when the API is fuzzed), so point the default at a temporary file.
os.environ["FDPKIT_LEDGER"] = str(Path(tempfile.mkdtemp(prefix="fdpkit-test-ledger-")) / "ledger.sqlite")

# The terminal size is each test's to choose (``CliRunner().invoke(..., env={"COLUMNS": ...})``),
# never inherited. pytest imports readline before this file loads
# (``_pytest.capture._readline_workaround``), and GNU readline exports COLUMNS=80 and LINES=24
# into the C environment behind ``os.environ``'s back: every process the tests start
# inherited them, the xdist workers too, where the CLI's rich console (built at import,
# ``fdpkit.cli._common.out``) then read them and kept 80 columns for the whole run, whatever
# width a test asked for (``make test``'s parallel part printed 200-column tables at 80).
# Dropped here, in the controller before it starts the workers and in each worker before any
# fdpkit module loads; tests/cli/test_cli_console_width.py checks both.
for _name in ("COLUMNS", "LINES"):
    os.environ.pop(_name, None)
    os.unsetenv(_name)  # also where os.environ never had it (readline's setenv)


@pytest.fixture(scope="session")
def published():
    """The published reference numbers, from their one source (tests/_reference.py)."""
    return load_published()


@pytest.fixture(scope="module")
def browser():
    """Debian's chromium under Playwright, one per test module (``_system.require``): not one per
    session, because while Playwright's sync API is open its event loop counts as running in
    this thread, and ``asyncio.run`` (tests/web/test_web_hardening.py, test_web_warm_workers.py)
    refuses to start there."""
    chromium = _system.require("chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, args=_system.CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


#: Seconds a live server may take to start on a loaded machine.
SERVER_START_S = 60


@contextmanager
def serve(app, *, log_level: str = "warning", **config):
    """Run ``app`` under uvicorn with the production settings (``fdpkit.web.server.server_config``,
    given ``config``, e.g. ``forwarded_allow_ips``) on a free port of 127.0.0.1, in a daemon
    thread; yield its base URL."""
    import uvicorn

    from fdpkit.web.server import server_config

    port = _free_port()
    server = uvicorn.Server(server_config(app, host="127.0.0.1", port=port, log_level=log_level, **config))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + SERVER_START_S
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started, f"the live server did not start within {SERVER_START_S} s"
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)


@pytest.fixture(scope="session")
def serve_app():
    """``with serve_app(app) as url:``: a live server of another app (other limits, a ledger)."""
    return serve


@pytest.fixture(scope="session")
def live_server():
    """The web app (request time limit 60 s, for loaded machines) on 127.0.0.1; its base URL."""
    from fdpkit.web.common import Limits
    from fdpkit.web.main import create_app

    with serve(create_app(Limits(timeout_s=60))) as url:
        yield url


class ServeProcess:
    """``fdpkit serve`` (production limits) in its own process on a free port of 127.0.0.1, as
    users run it, so that a test's HTTP clients share no interpreter (GIL) with the server
    they measure. A context manager: ready when ``/healthz`` answers; stopped with SIGINT
    (the lifespan closes the worker pools), killed after 30 s."""

    def __init__(self, *args: str) -> None:
        self.port = _free_port()
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [_SRC, os.environ.get("PYTHONPATH")]))}
        self.proc = subprocess.Popen([sys.executable, "-m", "fdpkit.cli", "serve", "--host", "127.0.0.1",
                                      "--port", str(self.port), *args], env=env, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE)

    def __enter__(self) -> "ServeProcess":
        import httpx

        deadline = time.monotonic() + 2 * SERVER_START_S
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.proc.stderr.read().decode(errors="replace")[-2000:]
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.__exit__()
        raise AssertionError("the server did not start")

    def __exit__(self, *exc) -> None:
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.proc.stderr.close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def pids(self) -> list[int]:
        """The server process and its worker processes."""
        out = [self.proc.pid]
        for task in os.listdir(f"/proc/{self.proc.pid}/task"):
            try:
                with open(f"/proc/{self.proc.pid}/task/{task}/children") as fh:
                    out += [int(x) for x in fh.read().split()]
            except OSError:
                pass
        return out


@pytest.fixture(scope="session")
def serve_process():
    """``with serve_process() as srv:``: ``fdpkit serve`` in its own process (``srv.url``,
    ``srv.proc``, ``srv.pids()``); extra CLI options as arguments."""
    return ServeProcess


@pytest.fixture(scope="session")
def pdftoppm():
    """The pdftoppm executable (poppler-utils) that rasterises PDF pages (``_system.require``)."""
    return _system.require("pdftoppm")


#: Fixtures that need a system package (tests/_system.py). They are checked before any
#: fixture runs, so that every skip is raised at the same place with the same reason:
#: pytest's summary (-rs) then shows ONE line for all of them.
_SYSTEM_FIXTURES = {"browser": "chromium", "pdftoppm": "pdftoppm", "pg_server": "postgresql"}


def _needs_postgres(item) -> bool:
    callspec = getattr(item, "callspec", None)
    return "pg_server" in item.fixturenames or (
        callspec is not None and callspec.params.get("ledger_url") == "postgresql")  # its pg_server


def pytest_collection_modifyitems(config, items):
    """Mark by what a test uses: ``browser`` for the chromium fixture, ``postgres`` for a
    PostgreSQL server, so that ``-m "not browser and not postgres"`` (``make test-fast``)
    deselects exactly them."""
    for item in items:
        if "browser" in item.fixturenames:
            item.add_marker(pytest.mark.browser)
        if _needs_postgres(item):
            item.add_marker(pytest.mark.postgres)
        if item.get_closest_marker("serial") is not None:
            _check_serial_file(item)


def _check_serial_file(item) -> None:
    """``make test`` runs the ``serial`` tests from the files that say ``mark.serial`` (its
    SERIAL_FILES grep): a serial test marked any other way would never run there."""
    path = Path(str(item.path))
    if "mark.serial" not in path.read_text(encoding="utf-8"):
        raise pytest.UsageError(f"{item.nodeid} is marked serial but its file never says `mark.serial`: "
                                "the Makefile's serial part (SERIAL_FILES) would not run it")


def pytest_runtest_setup(item):
    needs = {_SYSTEM_FIXTURES[name] for name in item.fixturenames if name in _SYSTEM_FIXTURES}
    if _needs_postgres(item):
        needs.add("postgresql")
    for what in sorted(needs):
        _system.require(what)


# argon2id at its smallest cost for the whole session, in this process (the live server runs
# in a thread of it, so it is covered too; module-scoped fixtures that add accounts too): the
# ledger and web tests log in and add accounts hundreds of times and are about routes, roles
# and records, not the hash; at the production parameters (64 MiB, t=3, p=4) each hash costs
# ~0.1 s of CPU. A test about the hash itself says `@pytest.mark.production_hash` and runs
# with the real parameters (tests/ledger/test_ledger_web.py::test_passwords_never_in_clear
# checks them); processes the tests start (`fdpkit serve`, the CLI in a subprocess) always
# hash at the real cost.
@pytest.fixture(scope="session", autouse=True)
def _cheap_password_hashes():
    try:
        from argon2 import PasswordHasher

        from fdpkit.ledger import users
    except ImportError:  # without the [ledger] extra there is nothing to hash
        yield None
        return

    real = users._HASHER, users._DUMMY
    cheap = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)
    users._HASHER, users._DUMMY = cheap, cheap.hash("fdpkit-dummy-password")
    yield real
    users._HASHER, users._DUMMY = real


# typer's CliRunner.invoke(app, ...) builds the click command tree of the whole CLI (about 70
# commands) from the typer app on every call: ~0.04 s of CPU each, hundreds of calls in the
# suite (tests/cli/test_cli{,_help,_hardening,_grades_and_plans}.py: 40.7 -> 28.7 CPU s with
# -n 0). The tree is built once per process here, as `fdpkit` itself does per run: the same
# objects a fresh build gives (``fdpkit.cli._common.plain_numbers`` marks what it wraps, so
# running it before each parse again changes nothing). Another typer app is built as before.
@pytest.fixture(scope="session", autouse=True)
def _cli_tree_built_once():
    try:
        import typer.testing

        from fdpkit.cli import app
    except ImportError:  # without the [cli] extra there is no CLI to build
        yield
        return

    real = typer.testing._get_command
    built = []

    def get_command(typer_app):
        if typer_app is not app:
            return real(typer_app)
        if not built:
            built.append(real(app))
        return built[0]

    typer.testing._get_command = get_command
    yield
    typer.testing._get_command = real


@pytest.fixture(autouse=True)
def _production_hash(request, _cheap_password_hashes, monkeypatch):
    if _cheap_password_hashes is not None and request.node.get_closest_marker("production_hash") is not None:
        from fdpkit.ledger import users

        monkeypatch.setattr(users, "_HASHER", _cheap_password_hashes[0])
        monkeypatch.setattr(users, "_DUMMY", _cheap_password_hashes[1])
