"""table chunks keep their structure: resolved header per column and body rows

Revision ID: 0002_table_structure
Revises: 0001_initial
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002_table_structure"
down_revision: str | Sequence[str] | None = "0001_initial"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("chunks", sa.Column("table_json", sa.Text(), nullable=False, server_default=""))


def downgrade() -> None:
    op.drop_column("chunks", "table_json")
