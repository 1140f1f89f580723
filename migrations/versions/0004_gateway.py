"""knowledge gateway: audit of SQL/status executions, request traces, agent memory

Revision ID: 0004_gateway
Revises: 0003_line_map
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004_gateway"
down_revision: str | Sequence[str] | None = "0003_line_map"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "gateway_audit",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("trace_id", sa.String(32), nullable=False),
        sa.Column("at", sa.DateTime(), nullable=False),
        sa.Column("principal", sa.String(128), nullable=False),
        sa.Column("source_id", sa.String(64), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("template", sa.String(64), nullable=False),
        sa.Column("params", sa.Text(), nullable=False),
        sa.Column("row_count", sa.Integer(), nullable=False),
        sa.Column("duration_ms", sa.Float(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("error", sa.Text(), nullable=False),
    )
    op.create_index("ix_gateway_audit_trace", "gateway_audit", ["trace_id"])
    op.create_index("ix_gateway_audit_at", "gateway_audit", ["at"])
    op.create_table(
        "gateway_traces",
        sa.Column("trace_id", sa.String(32), primary_key=True),
        sa.Column("at", sa.DateTime(), nullable=False),
        sa.Column("principal", sa.String(128), nullable=False),
        sa.Column("operation", sa.String(32), nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("events", sa.Text(), nullable=False),
    )
    op.create_index("ix_gateway_traces_at", "gateway_traces", ["at"])
    op.create_table(
        "memory",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("owner", sa.String(128), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("key", sa.String(128), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
    )
    op.create_index("ix_memory_owner", "memory", ["owner"])


def downgrade() -> None:
    op.drop_index("ix_memory_owner", table_name="memory")
    op.drop_table("memory")
    op.drop_index("ix_gateway_traces_at", table_name="gateway_traces")
    op.drop_table("gateway_traces")
    op.drop_index("ix_gateway_audit_at", table_name="gateway_audit")
    op.drop_index("ix_gateway_audit_trace", table_name="gateway_audit")
    op.drop_table("gateway_audit")
