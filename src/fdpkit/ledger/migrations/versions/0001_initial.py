"""Initial ledger schema: datasets, releases, thresholds, approvals, users, the hash-chained
event log and its head, the composed-state cache, web sessions.

Revision ID: 0001
Revises:
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

GENESIS = "0" * 64


def _ts(name: str, nullable: bool = False) -> sa.Column:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "datasets",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("unit", sa.String(200), nullable=False),
        sa.Column("relation", sa.String(40), nullable=False),
        sa.Column("description", sa.Text, nullable=False),
        _ts("created_at"),
    )
    op.create_table(
        "releases",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("dataset_id", sa.Integer, sa.ForeignKey("datasets.id"), nullable=False, index=True),
        sa.Column("title", sa.String(300), nullable=False),
        sa.Column("purpose", sa.Text, nullable=False),
        sa.Column("spec", sa.Text, nullable=False),
        sa.Column("analyst", sa.String(200), nullable=False),
        sa.Column("state", sa.String(20), nullable=False, index=True),
        _ts("created_at"), _ts("approved_at", True), _ts("released_at", True), _ts("closed_at", True),
        sa.Column("gaussian_mu", sa.Float, nullable=True),
        sa.Column("epsilon_ref", sa.Float, nullable=False),
        sa.Column("override_reason", sa.Text, nullable=True),
        sa.Column("override_by", sa.String(200), nullable=True),
    )
    op.create_table(
        "thresholds",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("dataset_id", sa.Integer, sa.ForeignKey("datasets.id"), nullable=False, index=True),
        sa.Column("metric", sa.String(20), nullable=False),
        sa.Column("level", sa.String(20), nullable=False),
        sa.Column("value", sa.Float, nullable=False),
        sa.Column("delta", sa.Float, nullable=True),
        sa.Column("fpr", sa.Float, nullable=True),
        sa.UniqueConstraint("dataset_id", "metric", "level"),
    )
    op.create_table(
        "approvals",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("release_id", sa.Integer, sa.ForeignKey("releases.id"), nullable=False, index=True),
        sa.Column("approver", sa.String(200), nullable=False),
        sa.Column("decision", sa.String(20), nullable=False),
        sa.Column("comment", sa.Text, nullable=False),
        _ts("created_at"),
        sa.Column("report_json", sa.LargeBinary, nullable=True),
        sa.Column("report_pdf", sa.LargeBinary, nullable=True),
        sa.Column("report_json_sha256", sa.String(64), nullable=True),
        sa.Column("report_pdf_sha256", sa.String(64), nullable=True),
    )
    op.create_table(
        "users",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("role", sa.String(20), nullable=False),
        sa.Column("password_hash", sa.String(300), nullable=False),
        sa.Column("active", sa.Boolean, nullable=False),
        _ts("created_at"),
    )
    op.create_table(
        "events",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("seq", sa.Integer, nullable=False, unique=True),
        _ts("at"),
        sa.Column("kind", sa.String(40), nullable=False, index=True),
        sa.Column("actor", sa.String(200), nullable=False),
        sa.Column("dataset_id", sa.Integer, nullable=True, index=True),
        sa.Column("release_id", sa.Integer, nullable=True, index=True),
        sa.Column("payload", sa.Text, nullable=False),
        sa.Column("prev_hash", sa.String(64), nullable=False),
        sa.Column("hash", sa.String(64), nullable=False),
    )
    op.create_index("ix_events_at", "events", ["at"])
    head = op.create_table(
        "chain_head",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("hash", sa.String(64), nullable=False),
    )
    op.bulk_insert(head, [{"id": 1, "seq": 0, "hash": GENESIS}])
    op.create_table(
        "composed_states",
        sa.Column("dataset_id", sa.Integer, sa.ForeignKey("datasets.id"), primary_key=True),
        sa.Column("release_ids", sa.Text, nullable=False),
        sa.Column("epsilon_sum", sa.Float, nullable=False),
        sa.Column("state", sa.LargeBinary, nullable=False),
    )
    op.create_table(
        "web_sessions",
        sa.Column("token_sha256", sa.String(64), primary_key=True),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id"), nullable=False),
        sa.Column("csrf", sa.String(64), nullable=False),
        _ts("created_at"), _ts("expires_at"),
    )


def downgrade() -> None:
    for table in ("web_sessions", "composed_states", "chain_head", "events", "users", "approvals",
                  "thresholds", "releases", "datasets"):
        op.drop_table(table)
