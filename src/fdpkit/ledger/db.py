"""Engines and sessions from a URL, migrations, and the write transaction with retries.

- ``default_url()``: ``FDPKIT_LEDGER`` (a URL or a file path), else a SQLite file in the
  user's data directory (``$XDG_DATA_HOME/fdpkit/ledger.sqlite``, ``~/.local/share/...``).
- SQLite: WAL journal, a busy timeout, and ``BEGIN IMMEDIATE`` for writes, so two writers
  (threads or processes, e.g. the web server's workers) queue for the lock instead of
  failing when a read lock would be upgraded. An in-memory database (``sqlite://``) is one
  connection shared by the process's threads; no other process can see it.
- PostgreSQL (any SQLAlchemy URL works): writers lock the one ``chain_head`` row
  (``SELECT ... FOR UPDATE``), which serialises appends to the event chain; every
  connection has a ``lock_timeout`` (:data:`LOCK_TIMEOUT_MS`), so a stuck writer turns into
  a retried transaction instead of a wait without end.
- Every write runs in one transaction, retried on lock timeouts, serialisation failures
  and deadlocks: a release is recorded whole or not at all.
"""

from __future__ import annotations

import contextlib
import os
import random
import time
from pathlib import Path
from typing import Callable, Iterator, TypeVar

import platformdirs
from sqlalchemy import create_engine, event, select, text
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

from fdpkit.ledger.models import SCHEMA_REVISION, ChainHead

HERE = Path(__file__).resolve().parent
#: SQLite busy timeout (ms) and how often a failed write transaction is retried.
BUSY_TIMEOUT_MS = 30_000
WRITE_RETRIES = 30
#: PostgreSQL ``lock_timeout`` of every connection (ms): a write waits this long for the
#: chain-head lock, then its transaction is retried (``55P03`` is retryable).
LOCK_TIMEOUT_MS = 10_000
T = TypeVar("T")


def data_dir() -> Path:
    """The user's data directory for fdpkit, from :mod:`platformdirs`.

    ``$XDG_DATA_HOME/fdpkit`` (default ``~/.local/share/fdpkit``) on Linux,
    ``~/Library/Application Support/fdpkit`` on macOS and ``%APPDATA%\\fdpkit`` on Windows.

    Returns
    -------
    pathlib.Path
        The directory (not created here).
    """
    return Path(platformdirs.user_data_dir("fdpkit", appauthor=False, roaming=True))


def resolve_url(url: str | os.PathLike | None = None) -> str:
    """A SQLAlchemy URL from ``url`` (a URL or a file path), ``FDPKIT_LEDGER``, or the default
    SQLite file in :func:`data_dir`."""
    raw = str(url) if url is not None else os.environ.get("FDPKIT_LEDGER", "").strip()
    if not raw:
        path = data_dir() / "ledger.sqlite"
        path.parent.mkdir(parents=True, exist_ok=True)
        return f"sqlite:///{path}"
    if "://" in raw:
        try:
            make_url(raw)
        except Exception as exc:  # sqlalchemy.exc.ArgumentError and friends
            raise ValueError(f"db must be a SQLAlchemy URL or a file path, got {raw!r} ({exc})") from None
        return raw
    return f"sqlite:///{Path(raw).expanduser().resolve()}"


def _sqlite_setup(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _connect(dbapi_conn, _record):  # pragma: no cover - driver callback
        dbapi_conn.isolation_level = None  # we issue BEGIN ourselves
        cur = dbapi_conn.cursor()
        cur.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        cur.execute("PRAGMA journal_mode = WAL")
        cur.execute("PRAGMA synchronous = NORMAL")
        cur.execute("PRAGMA foreign_keys = ON")
        cur.close()

    @event.listens_for(engine, "begin")
    def _begin(conn):  # pragma: no cover - driver callback
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("ledger_write")
                             else "BEGIN")


def in_memory(url: str) -> bool:
    """An in-memory SQLite URL (``sqlite://``, ``:memory:``): the database exists inside one
    process only, so no other process (e.g. a web worker) can open it."""
    u = make_url(url)
    db = u.database or ""
    return u.get_backend_name() == "sqlite" and (db in ("", ":memory:") or db.startswith("file::memory:")
                                                 or u.query.get("mode") == "memory")


def make_engine(url: str) -> Engine:
    """An engine for ``url`` with the ledger's connection settings."""
    u = make_url(url)
    if u.get_backend_name() == "sqlite":
        if in_memory(url):  # one connection shared by the process's threads (else each has its own, empty database)
            from sqlalchemy.pool import StaticPool

            engine = create_engine(url, poolclass=StaticPool,
                                   connect_args={"timeout": BUSY_TIMEOUT_MS / 1000, "check_same_thread": False})
            _sqlite_setup(engine)
            return engine
        if u.database:
            Path(u.database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"timeout": BUSY_TIMEOUT_MS / 1000})
        _sqlite_setup(engine)
        return engine
    try:
        if u.get_backend_name() == "postgresql" and u.get_driver_name() in ("psycopg", "psycopg2"):
            # a writer waits at most LOCK_TIMEOUT_MS for a row lock, then retries (run_write)
            return create_engine(url, pool_pre_ping=True,
                                 connect_args={"options": f"-c lock_timeout={LOCK_TIMEOUT_MS}"})
        return create_engine(url, pool_pre_ping=True)
    except ModuleNotFoundError as exc:
        raise ValueError(f"db {u.render_as_string(hide_password=True)!r} needs the database driver "
                         f"{exc.name!r}; install fdpkit[postgres] (psycopg) or another driver") from None


def session_factory(engine: Engine) -> sessionmaker[Session]:
    """A session factory bound to ``engine`` whose objects stay readable after a commit
    (``expire_on_commit=False``)."""
    return sessionmaker(engine, expire_on_commit=False)


def _alembic_config(connection=None):
    from alembic.config import Config

    cfg = Config(str(HERE / "alembic.ini"))
    cfg.set_main_option("script_location", str(HERE / "migrations"))
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


def current_revision(engine: Engine) -> str | None:
    """The schema revision stored in the database (None for an empty database)."""
    with engine.connect() as conn:
        try:
            return conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
        except DBAPIError:
            return None


def upgrade(engine: Engine) -> str:
    """Create or upgrade the schema with the Alembic migrations (idempotent)."""
    from alembic import command

    if current_revision(engine) == SCHEMA_REVISION:
        return SCHEMA_REVISION
    with engine.begin() as conn:
        command.upgrade(_alembic_config(conn), "head")
    return SCHEMA_REVISION


def head_revision() -> str:
    """The head revision of the migration scripts."""
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(_alembic_config()).get_current_head()


def _retryable(exc: BaseException) -> bool:
    if isinstance(exc, IntegrityError):  # a concurrent writer took the same seq / name
        return "seq" in str(exc.orig) or "chain_head" in str(exc.orig)
    if isinstance(exc, OperationalError) and "locked" in str(exc.orig).lower():
        return True
    code = getattr(getattr(exc, "orig", None), "sqlstate", None)
    return code in ("40001", "40P01", "55P03")  # serialization failure, deadlock, lock not available


@contextlib.contextmanager
def write_session(engine: Engine) -> Iterator[Session]:
    """One write transaction (``BEGIN IMMEDIATE`` on SQLite)."""
    with engine.connect() as conn:
        conn.execution_options(ledger_write=True)
        with Session(bind=conn, expire_on_commit=False) as session:
            with session.begin():
                yield session


def run_write(engine: Engine, fn: Callable[[Session], T]) -> T:
    """Run ``fn(session)`` in one write transaction, retrying it on lock contention."""
    for attempt in range(WRITE_RETRIES):
        try:
            with write_session(engine) as session:
                return fn(session)
        except DBAPIError as exc:
            if not _retryable(exc) or attempt == WRITE_RETRIES - 1:
                raise
            time.sleep(min(0.5, 0.01 * 2 ** min(attempt, 6)) * random.random())
    raise AssertionError("unreachable")  # pragma: no cover


class LockBusy(Exception):
    """The write lock was not free within the short wait of :func:`short_write`."""


def short_write(engine: Engine, fn: Callable[[Session], T], wait_s: float) -> T:
    """Run ``fn(session)`` in one write transaction that waits at most ``wait_s`` seconds for
    the write lock (SQLite's busy timeout, PostgreSQL's ``lock_timeout``), once:
    :class:`LockBusy` otherwise. For writes that must not queue behind a long ledger write
    (a login storing its session)."""
    ms = max(1, int(wait_s * 1000))
    sqlite = engine.dialect.name == "sqlite"
    try:
        with engine.connect() as conn:
            if sqlite:  # on the driver's connection: no transaction is begun by it
                conn.connection.dbapi_connection.execute(f"PRAGMA busy_timeout = {ms}")
            try:
                conn.execution_options(ledger_write=True)
                with Session(bind=conn, expire_on_commit=False) as session:
                    with session.begin():
                        if not sqlite:
                            session.execute(text(f"SET LOCAL lock_timeout = {ms}"))
                        return fn(session)
            finally:
                if sqlite:
                    conn.connection.dbapi_connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    except DBAPIError as exc:
        if _retryable(exc):
            raise LockBusy(str(exc.orig)) from None
        raise


def lock_head(session: Session):
    """Lock and return the chain head row (serialises writers)."""
    return session.execute(select(ChainHead).where(ChainHead.id == 1).with_for_update()).scalar_one()
