"""Requests to lift a hard limit that wait for a second person (four-eyes on the web).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "lift_requests",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("dataset_id", sa.Integer, sa.ForeignKey("datasets.id"), nullable=False, index=True),
        sa.Column("metric", sa.String(20), nullable=False),
        sa.Column("level", sa.String(20), nullable=False),
        sa.Column("action", sa.String(20), nullable=False),
        sa.Column("value", sa.Float, nullable=True),
        sa.Column("delta", sa.Float, nullable=True),
        sa.Column("fpr", sa.Float, nullable=True),
        sa.Column("basis_value", sa.Float, nullable=False),
        sa.Column("basis_delta", sa.Float, nullable=True),
        sa.Column("basis_fpr", sa.Float, nullable=True),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("requested_by", sa.String(200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("state", sa.String(20), nullable=False, index=True),
        sa.Column("decided_by", sa.String(200), nullable=True),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("comment", sa.Text, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("lift_requests")
