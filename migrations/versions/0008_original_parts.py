"""original parts: uploads' bytes kept in the database, so API replicas and workers on
different hosts share them

Revision ID: 0008_original_parts
Revises: 0007_upload_scopes
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008_original_parts"
down_revision: str | Sequence[str] | None = "0007_upload_scopes"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "original_parts",
        sa.Column("name", sa.String(80), primary_key=True),
        sa.Column("part", sa.Integer(), primary_key=True),
        sa.Column("data", sa.LargeBinary(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("original_parts")
