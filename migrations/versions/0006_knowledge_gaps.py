"""knowledge gaps: unanswered or weakly answered questions, deduplicated and counted

Revision ID: 0006_knowledge_gaps
Revises: 0005_alert_events
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006_knowledge_gaps"
down_revision: str | Sequence[str] | None = "0005_alert_events"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "knowledge_gaps",
        sa.Column("key", sa.String(40), primary_key=True),
        sa.Column("normalised", sa.Text(), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.Column("first_at", sa.DateTime(), nullable=False),
        sa.Column("last_at", sa.DateTime(), nullable=False),
        sa.Column("roles", sa.Text(), nullable=False),
        sa.Column("near_misses", sa.Text(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("best_coverage", sa.Float(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("closed_at", sa.DateTime(), nullable=True),
        sa.Column("closed_by", sa.Text(), nullable=False),
    )
    op.create_index("ix_gaps_status_last", "knowledge_gaps", ["status", "last_at"])


def downgrade() -> None:
    op.drop_index("ix_gaps_status_last", table_name="knowledge_gaps")
    op.drop_table("knowledge_gaps")
