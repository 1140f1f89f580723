"""original parts' accepted time: uploads' bytes that no document or job needs any more
are removed, but not those an upload accepted a moment ago (its job not queued yet)

Revision ID: 0009_original_accepted_at
Revises: 0008_original_parts
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009_original_accepted_at"
down_revision: str | Sequence[str] | None = "0008_original_parts"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("original_parts", sa.Column("accepted_at", sa.DateTime(), nullable=True))


def downgrade() -> None:
    op.drop_column("original_parts", "accepted_at")
