"""Local accounts of the ledger's web pages: argon2id password hashes (argon2-cffi), roles,
and login sessions whose cookie token is stored only as its SHA-256. Passwords are never
stored, logged or put in an event; user changes (added, deactivated, re-activated,
re-roled, password reset) are chained like every other change (the event carries the
row's snapshot with the SHA-256 of the hash, not the hash), so :meth:`Ledger.verify`
checks them; deactivating a user or resetting a password ends their sessions.

Password hashing is memory-hard (argon2id, 64 MiB each): at most :data:`HASH_SLOTS`
hashes run at once in a process, and a caller that cannot get a slot within
:data:`HASH_WAIT_S` gets :class:`Busy` (the web answers 503 with Retry-After)."""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
import threading
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError
from sqlalchemy import delete, select

from fdpkit.ledger import db
from fdpkit.ledger.chain import append, now, utc
from fdpkit.ledger.operations import MAX_NAME, Ledger, LedgerError, NotFound, _text
from fdpkit.ledger.rules import _person
from fdpkit.ledger.models import ROLES, User, WebSession

#: Role ranks: each role may do what the roles below it may.
RANK = {r: i for i, r in enumerate(ROLES)}
SESSION_HOURS = 12
MIN_PASSWORD = 8
MAX_PASSWORD = 1000
#: argon2 hashes at once per process, and how long a caller waits for a slot (seconds).
HASH_SLOTS = 2
HASH_WAIT_S = 10.0
#: How long a login waits for the database's write lock to store its session (seconds).
SESSION_LOCK_S = 2.0
_HASHER = PasswordHasher()
_DUMMY = _HASHER.hash("fdpkit-dummy-password")
_SLOTS = threading.BoundedSemaphore(HASH_SLOTS)


class Busy(LedgerError):
    """Too many logins at once, or the ledger's write lock is held: try again shortly."""

    retry_after = 2


def _hashing(fn, *args):
    """Run one argon2 operation in a hash slot (:class:`Busy` when none frees in time)."""
    if not _SLOTS.acquire(timeout=HASH_WAIT_S):
        raise Busy("too many logins at once; try again in a few seconds")
    try:
        return fn(*args)
    finally:
        _SLOTS.release()


def _password(password: Any) -> str:
    if not isinstance(password, str) or len(password) < MIN_PASSWORD:
        raise LedgerError(f"password must have at least {MIN_PASSWORD} characters")
    if len(password) > MAX_PASSWORD or "\x00" in password:
        raise LedgerError(f"password must have at most {MAX_PASSWORD} characters and no NUL")
    return password


def has_role(user_role: str, needed: str) -> bool:
    """Whether ``user_role`` ranks at least ``needed`` (viewer < analyst < approver < admin);
    an unknown role has none."""
    return RANK.get(user_role, -1) >= RANK[needed]


def add_user(ledger: Ledger, name: str, *, role: str, password: str, actor: str) -> User:
    """Create a local account (argon2id hash of ``password``)."""
    name, actor = _person("name", name), _person("user", actor)
    if role not in ROLES:
        raise LedgerError(f"role must be one of {', '.join(ROLES)}, got {role!r}")
    hashed = _hashing(_HASHER.hash, _password(password))

    def fn(s, head):
        if s.execute(select(User.id).where(User.name == name)).first():
            raise LedgerError(f"user {name!r} already exists")
        u = User(name=name, role=role, password_hash=hashed, active=True, created_at=now())
        s.add(u)
        append(s, head, kind="user.added", actor=actor, rows=[u], data={"name": name, "role": role})
        return u
    return ledger._write(fn)  # noqa: SLF001 - same package


def add_first_admin(ledger: Ledger, name: str, *, password: str) -> User:
    """Create the ledger's first account, an admin, only while it has no account at all
    (checked in the same write transaction, so two racing first-run setups cannot both
    succeed). Chained as ``user.added`` with ``"first_admin": true``, by the new admin."""
    name = _person("name", name)
    hashed = _hashing(_HASHER.hash, _password(password))

    def fn(s, head):
        if s.execute(select(User.id)).first():
            raise LedgerError("the ledger has accounts already: an admin adds more (the Users page, or "
                              "`fdpkit ledger user add`)")
        u = User(name=name, role="admin", password_hash=hashed, active=True, created_at=now())
        s.add(u)
        append(s, head, kind="user.added", actor=name, rows=[u], data={"name": name, "role": "admin",
                                                                        "first_admin": True})
        return u
    return ledger._write(fn)  # noqa: SLF001 - same package


def has_users(ledger: Ledger) -> bool:
    """Whether ``ledger`` has any account (active or not)."""
    with ledger.read() as s:
        return s.execute(select(User.id).limit(1)).first() is not None


def users(ledger: Ledger) -> list[User]:
    """Every account of ``ledger``, by name."""
    with ledger.read() as s:
        return list(s.execute(select(User).order_by(User.name)).scalars())


def _changed(ledger: Ledger, name: str, actor: str, kind: str, change, data: dict | None = None) -> User:
    """Apply ``change(user)`` to the user ``name`` in one chained transaction (event
    ``kind`` with the row's snapshot), ending the user's sessions."""
    name, actor = _text("name", name), _person("user", actor)

    def fn(s, head):
        u = s.execute(select(User).where(User.name == name)).scalar_one_or_none()
        if u is None:
            raise NotFound(f"user {name!r} is unknown")
        was_admin = u.active and u.role == "admin"
        change(u)
        if was_admin and not (u.active and u.role == "admin"):
            others = s.execute(select(User.id).where(User.role == "admin", User.active.is_(True),
                                                     User.id != u.id)).first()
            if others is None:
                raise LedgerError(f"{name} is the last active admin: add another admin first")
        s.execute(delete(WebSession).where(WebSession.user_id == u.id))
        append(s, head, kind=kind, actor=actor, rows=[u], data={"name": name, **(data or {})})
        return u
    return ledger._write(fn)  # noqa: SLF001 - same package


def deactivate_user(ledger: Ledger, name: str, *, actor: str, reason: str = "") -> User:
    """Deactivate an account (it can no longer log in; its sessions end). Chained as
    ``user.deactivated``; the last active admin cannot be deactivated."""
    reason = _text("reason", reason, required=False, limit=5000)
    return _changed(ledger, name, actor, "user.deactivated", lambda u: setattr(u, "active", False),
                    {"reason": reason})


def activate_user(ledger: Ledger, name: str, *, actor: str) -> User:
    """Re-activate a deactivated account (chained as ``user.activated``)."""
    return _changed(ledger, name, actor, "user.activated", lambda u: setattr(u, "active", True))


def set_role(ledger: Ledger, name: str, *, role: str, actor: str) -> User:
    """Give an account another role (chained as ``user.role``; its sessions end)."""
    if role not in ROLES:
        raise LedgerError(f"role must be one of {', '.join(ROLES)}, got {role!r}")
    return _changed(ledger, name, actor, "user.role", lambda u: setattr(u, "role", role), {"role": role})


def reset_password(ledger: Ledger, name: str, *, password: str, actor: str) -> User:
    """Set a new password (argon2id; chained as ``user.password_reset``; sessions end)."""
    hashed = _hashing(_HASHER.hash, _password(password))
    return _changed(ledger, name, actor, "user.password_reset", lambda u: setattr(u, "password_hash", hashed))


def authenticate(ledger: Ledger, name: str, password: str) -> User | None:
    """The active user with this name and password, else None (same work either way);
    :class:`Busy` when no hash slot frees in time."""
    name, password = str(name), str(password)
    u = None
    if "\x00" not in name and len(name) <= MAX_NAME:
        with ledger.read() as s:
            u = s.execute(select(User).where(User.name == name)).scalar_one_or_none()
    # a password longer than any that can be set never matches; it is hashed (cut to the
    # limit, so that its cost stays bounded) against the dummy, the same work as a miss
    too_long = len(password) > MAX_PASSWORD
    try:
        _hashing(_HASHER.verify, u.password_hash if u is not None and not too_long else _DUMMY,
                 password[:MAX_PASSWORD])
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return None
    return u if (u is not None and u.active and not too_long) else None


def create_session(ledger: Ledger, user: User) -> tuple[str, str]:
    """A new login session: (cookie token, CSRF token)."""
    token, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
    t = now()

    def fn(s):
        s.execute(delete(WebSession).where(WebSession.expires_at < t))
        s.add(WebSession(token_sha256=_digest(token), user_id=user.id, csrf=csrf, created_at=t,
                         expires_at=t + dt.timedelta(hours=SESSION_HOURS)))
    try:
        db.short_write(ledger.engine, fn, SESSION_LOCK_S)
    except db.LockBusy:
        raise Busy("the ledger is busy writing; try logging in again in a few seconds") from None
    return token, csrf


def session_user(ledger: Ledger, token: str | None) -> tuple[User, str] | None:
    """(user, CSRF token) of a live session, else None."""
    if not token:
        return None
    with ledger.read() as s:
        ws = s.get(WebSession, _digest(token))
        if ws is None or utc(ws.expires_at) < now():
            return None
        u = s.get(User, ws.user_id)
        if u is None or not u.active:
            return None
        return u, ws.csrf


def end_session(ledger: Ledger, token: str | None) -> None:
    """Log out: delete the session whose cookie token is ``token`` (nothing if none)."""
    if token:
        db.run_write(ledger.engine, lambda s: s.execute(delete(WebSession).where(
            WebSession.token_sha256 == _digest(token))))


def user_dict(u: User) -> dict[str, Any]:
    """An account as JSON data: id, name, role and whether it is active (no hash)."""
    return {"id": u.id, "name": u.name, "role": u.role, "active": bool(u.active)}


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


__all__ = ["RANK", "Busy", "NotFound", "activate_user", "add_first_admin", "add_user", "authenticate", "create_session",
           "deactivate_user", "end_session", "has_role", "has_users", "reset_password", "session_user", "set_role",
           "user_dict", "users"]
