"""Local accounts of the ledger's web pages: argon2id password hashes (argon2-cffi), roles,
and login sessions whose cookie token is stored only as its SHA-256. Passwords are never
stored, logged or put in an event; user changes are chained like every other change
(the event carries the SHA-256 of the hash, not the hash)."""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError
from sqlalchemy import delete, select

from fdpkit.ledger import db
from fdpkit.ledger.chain import append, now, utc
from fdpkit.ledger.core import Ledger, LedgerError, NotFound, _text
from fdpkit.ledger.models import ROLES, User, WebSession

#: Role ranks: each role may do what the roles below it may.
RANK = {r: i for i, r in enumerate(ROLES)}
SESSION_HOURS = 12
MIN_PASSWORD = 8
_HASHER = PasswordHasher()
_DUMMY = _HASHER.hash("fdpkit-dummy-password")


def has_role(user_role: str, needed: str) -> bool:
    """Whether ``user_role`` ranks at least ``needed`` (viewer < analyst < approver < admin);
    an unknown role has none."""
    return RANK.get(user_role, -1) >= RANK[needed]


def add_user(ledger: Ledger, name: str, *, role: str, password: str, actor: str) -> User:
    """Create a local account (argon2id hash of ``password``)."""
    name, actor = _text("name", name), _text("user", actor)
    if role not in ROLES:
        raise LedgerError(f"role must be one of {', '.join(ROLES)}, got {role!r}")
    if not isinstance(password, str) or len(password) < MIN_PASSWORD:
        raise LedgerError(f"password must have at least {MIN_PASSWORD} characters")
    hashed = _HASHER.hash(password)

    def fn(s, head):
        if s.execute(select(User.id).where(User.name == name)).first():
            raise LedgerError(f"user {name!r} already exists")
        u = User(name=name, role=role, password_hash=hashed, active=True, created_at=now())
        s.add(u)
        append(s, head, kind="user.added", actor=actor, rows=[u], data={"name": name, "role": role})
        return u
    return ledger._write(fn)  # noqa: SLF001 - same package


def users(ledger: Ledger) -> list[User]:
    """Every account of ``ledger``, by name."""
    with ledger.read() as s:
        return list(s.execute(select(User).order_by(User.name)).scalars())


def authenticate(ledger: Ledger, name: str, password: str) -> User | None:
    """The active user with this name and password, else None (same work either way)."""
    with ledger.read() as s:
        u = s.execute(select(User).where(User.name == str(name))).scalar_one_or_none()
    try:
        _HASHER.verify(u.password_hash if u is not None else _DUMMY, str(password))
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return None
    return u if (u is not None and u.active) else None


def create_session(ledger: Ledger, user: User) -> tuple[str, str]:
    """A new login session: (cookie token, CSRF token)."""
    token, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
    t = now()

    def fn(s):
        s.execute(delete(WebSession).where(WebSession.expires_at < t))
        s.add(WebSession(token_sha256=_digest(token), user_id=user.id, csrf=csrf, created_at=t,
                         expires_at=t + dt.timedelta(hours=SESSION_HOURS)))
    db.run_write(ledger.engine, fn)
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
    return {"id": u.id, "name": u.name, "role": u.role, "active": u.active}


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


__all__ = ["RANK", "NotFound", "add_user", "authenticate", "create_session", "end_session", "has_role",
           "session_user", "user_dict", "users"]
