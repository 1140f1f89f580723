"""chunks keep the source lines of each text line, for sentence-level citation spans

Revision ID: 0003_line_map
Revises: 0002_table_structure
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003_line_map"
down_revision: str | Sequence[str] | None = "0002_table_structure"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("chunks", sa.Column("line_map", sa.Text(), nullable=False, server_default=""))


def downgrade() -> None:
    op.drop_column("chunks", "line_map")
