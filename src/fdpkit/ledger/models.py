"""The ledger's tables as typed SQLAlchemy 2 models (one module, no domain logic).

The schema is created and upgraded by the Alembic migrations in ``migrations/versions/``;
these classes only describe it (``SCHEMA_REVISION`` names the migration they match).
Times are timezone-aware UTC; every mutable row has an ``id`` that events refer to.
"""

from __future__ import annotations

import datetime as dt
from typing import Optional

from sqlalchemy import (
    Boolean, DateTime, Float, ForeignKey, Integer, LargeBinary, String, Text, UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from fdpkit.vocabulary import RELATION_ALIASES

#: The Alembic revision these models describe (tests check it is the migrations' head).
SCHEMA_REVISION = "0002"

#: Release states and the moves between them.
STATES = ("proposed", "approved", "released", "rejected", "withdrawn")
ROLES = ("viewer", "analyst", "approver", "admin")
LEVELS = ("notice", "warning", "hard")
METRICS = ("epsilon", "mu", "tpr")


class Base(DeclarativeBase):
    """The SQLAlchemy declarative base of the ledger's tables (schema owned by the Alembic
    migrations in ``fdpkit/ledger/migrations``)."""


class Dataset(Base):
    """A dataset whose releases the ledger composes: its unique ``name``, the privacy
    ``unit`` (e.g. "one person") and the neighbouring ``relation``."""

    __tablename__ = "datasets"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    unit: Mapped[str] = mapped_column(String(200))
    relation: Mapped[str] = mapped_column(String(40))
    description: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))

    @property
    def relation_name(self) -> str:
        """The relation in its canonical spelling (:mod:`fdpkit.vocabulary`): rows stored before
        issue 23 say "add-or-remove" (kept as stored: the event chain snapshots them), read
        as "add-remove"."""
        return RELATION_ALIASES.get(self.relation, self.relation)


class Release(Base):
    """One release of a dataset: the mechanism ``spec`` (canonical JSON), its ``state``
    (proposed, approved, released, rejected or withdrawn) with the time of each move, the
    exact ``gaussian_mu`` for Gaussian-family mechanisms, its own ε at δ = 1e-5
    (``epsilon_ref``, for the basic-composition sum) and any override of a hard threshold."""

    __tablename__ = "releases"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    dataset_id: Mapped[int] = mapped_column(ForeignKey("datasets.id"), index=True)
    title: Mapped[str] = mapped_column(String(300))
    purpose: Mapped[str] = mapped_column(Text, default="")
    spec: Mapped[str] = mapped_column(Text)  # canonical JSON of the mechanism spec
    analyst: Mapped[str] = mapped_column(String(200))
    state: Mapped[str] = mapped_column(String(20), index=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    approved_at: Mapped[Optional[dt.datetime]] = mapped_column(DateTime(timezone=True), nullable=True)
    released_at: Mapped[Optional[dt.datetime]] = mapped_column(DateTime(timezone=True), nullable=True)
    closed_at: Mapped[Optional[dt.datetime]] = mapped_column(DateTime(timezone=True), nullable=True)
    #: exact mu when the mechanism is Gaussian-family, else None
    gaussian_mu: Mapped[Optional[float]] = mapped_column(Float, nullable=True)
    #: the release's own epsilon at delta = 1e-5 (for the basic-composition sum)
    epsilon_ref: Mapped[float] = mapped_column(Float)
    override_reason: Mapped[Optional[str]] = mapped_column(Text, nullable=True)
    override_by: Mapped[Optional[str]] = mapped_column(String(200), nullable=True)


class Threshold(Base):
    """A dataset's threshold on the running total: ``metric`` (ε at ``delta``, μ, or
    TPR at ``fpr``), ``level`` (notice, warning or hard) and ``value``. One per dataset,
    metric and level."""

    __tablename__ = "thresholds"
    __table_args__ = (UniqueConstraint("dataset_id", "metric", "level"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    dataset_id: Mapped[int] = mapped_column(ForeignKey("datasets.id"), index=True)
    metric: Mapped[str] = mapped_column(String(20))
    level: Mapped[str] = mapped_column(String(20))
    value: Mapped[float] = mapped_column(Float)
    delta: Mapped[Optional[float]] = mapped_column(Float, nullable=True)  # epsilon thresholds
    fpr: Mapped[Optional[float]] = mapped_column(Float, nullable=True)  # tpr thresholds


#: States of a request to lift a hard limit (:class:`LiftRequest`).
LIFT_STATES = ("pending", "approved", "rejected", "withdrawn", "superseded")


class LiftRequest(Base):
    """A request to lift a dataset's hard limit (raise it, loosen its δ or FPR, or remove it:
    ``action`` "set" or "remove") that waits for a second person under four-eyes. ``basis_*``
    is the hard threshold as it stood when it was requested: approving applies the request
    only while the threshold still stands so. ``state``: pending, approved, rejected,
    withdrawn (by its requester) or superseded (the threshold changed first)."""

    __tablename__ = "lift_requests"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    dataset_id: Mapped[int] = mapped_column(ForeignKey("datasets.id"), index=True)
    metric: Mapped[str] = mapped_column(String(20))
    level: Mapped[str] = mapped_column(String(20))
    action: Mapped[str] = mapped_column(String(20))  # set / remove
    value: Mapped[Optional[float]] = mapped_column(Float, nullable=True)
    delta: Mapped[Optional[float]] = mapped_column(Float, nullable=True)
    fpr: Mapped[Optional[float]] = mapped_column(Float, nullable=True)
    basis_value: Mapped[float] = mapped_column(Float)
    basis_delta: Mapped[Optional[float]] = mapped_column(Float, nullable=True)
    basis_fpr: Mapped[Optional[float]] = mapped_column(Float, nullable=True)
    reason: Mapped[str] = mapped_column(Text)
    requested_by: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    state: Mapped[str] = mapped_column(String(20), index=True)
    decided_by: Mapped[Optional[str]] = mapped_column(String(200), nullable=True)
    decided_at: Mapped[Optional[dt.datetime]] = mapped_column(DateTime(timezone=True), nullable=True)
    comment: Mapped[str] = mapped_column(Text, default="")


class Approval(Base):
    """An approver's decision on a release (approved or rejected), with the privacy
    report stored as JSON and PDF and the SHA-256 of each."""

    __tablename__ = "approvals"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    release_id: Mapped[int] = mapped_column(ForeignKey("releases.id"), index=True)
    approver: Mapped[str] = mapped_column(String(200))
    decision: Mapped[str] = mapped_column(String(20))  # approved / rejected
    comment: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    report_json: Mapped[Optional[bytes]] = mapped_column(LargeBinary, nullable=True)
    report_pdf: Mapped[Optional[bytes]] = mapped_column(LargeBinary, nullable=True)
    report_json_sha256: Mapped[Optional[str]] = mapped_column(String(64), nullable=True)
    report_pdf_sha256: Mapped[Optional[str]] = mapped_column(String(64), nullable=True)


class User(Base):
    """A web account: unique ``name``, ``role`` (viewer, analyst, approver, admin) and an
    argon2id ``password_hash`` (never the password)."""

    __tablename__ = "users"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    role: Mapped[str] = mapped_column(String(20))
    password_hash: Mapped[str] = mapped_column(String(300))  # argon2id, never the password
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))


class Event(Base):
    """Append-only, hash-chained log: ``hash = sha256(prev_hash + canonical JSON)``."""

    __tablename__ = "events"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, unique=True)
    at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), index=True)
    kind: Mapped[str] = mapped_column(String(40), index=True)
    actor: Mapped[str] = mapped_column(String(200))
    dataset_id: Mapped[Optional[int]] = mapped_column(Integer, nullable=True, index=True)
    release_id: Mapped[Optional[int]] = mapped_column(Integer, nullable=True, index=True)
    payload: Mapped[str] = mapped_column(Text)
    prev_hash: Mapped[str] = mapped_column(String(64))
    hash: Mapped[str] = mapped_column(String(64))


class ChainHead(Base):
    """One row (id = 1): the last event's seq and hash. Writers lock it first, which
    serialises appends on every backend (SELECT ... FOR UPDATE on PostgreSQL)."""

    __tablename__ = "chain_head"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    seq: Mapped[int] = mapped_column(Integer)
    hash: Mapped[str] = mapped_column(String(64))


class ComposedState(Base):
    """Cache: the composition of a dataset's released releases (derived data, not part of
    the chain; rebuilt from the releases whenever it does not match them)."""

    __tablename__ = "composed_states"

    dataset_id: Mapped[int] = mapped_column(ForeignKey("datasets.id"), primary_key=True)
    release_ids: Mapped[str] = mapped_column(Text)  # JSON list, sorted
    epsilon_sum: Mapped[float] = mapped_column(Float)
    state: Mapped[bytes] = mapped_column(LargeBinary)


class WebSession(Base):
    """Login sessions of the web pages: only the SHA-256 of the cookie token is stored."""

    __tablename__ = "web_sessions"

    token_sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    csrf: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
    expires_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True))
