"""jobs' task and runner: an in-process runner's unfinished jobs are taken up again by
another process when the one that held them stopped or died

Revision ID: 0011_job_tasks
Revises: 0010_title_stated
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011_job_tasks"
down_revision: str | Sequence[str] | None = "0010_title_stated"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("jobs", sa.Column("task", sa.Text(), nullable=True))
    op.add_column("jobs", sa.Column("runner", sa.String(128), nullable=True))


def downgrade() -> None:
    op.drop_column("jobs", "runner")
    op.drop_column("jobs", "task")
