"""upload scopes: several documents may share one upload key (one per writer who could
not see the others), and the deployment keeps a secret for their ids

Revision ID: 0007_upload_scopes
Revises: 0006_knowledge_gaps
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007_upload_scopes"
down_revision: str | Sequence[str] | None = "0006_knowledge_gaps"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # PostgreSQL's name for 0001's unnamed UniqueConstraint("source").
    op.drop_constraint("documents_source_key", "documents", type_="unique")
    op.create_index(op.f("ix_documents_source"), "documents", ["source"], unique=False)
    op.create_table(
        "deployment_secrets",
        sa.Column("name", sa.String(64), primary_key=True),
        sa.Column("value", sa.Text(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("deployment_secrets")
    op.drop_index(op.f("ix_documents_source"), table_name="documents")
    # Fails while two documents share a key: merge or delete them first.
    op.create_unique_constraint("documents_source_key", "documents", ["source"])
