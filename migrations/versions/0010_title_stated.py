"""documents' title_stated: a title a writer gave is kept by a new version given none,
where a parsed title follows the new content

Revision ID: 0010_title_stated
Revises: 0009_original_accepted_at
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010_title_stated"
down_revision: str | Sequence[str] | None = "0009_original_accepted_at"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("documents", sa.Column("title_stated", sa.Boolean(), nullable=True))


def downgrade() -> None:
    op.drop_column("documents", "title_stated")
