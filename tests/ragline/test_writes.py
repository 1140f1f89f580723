"""The one write rule (ragline/writes.py), case by case."""

from __future__ import annotations

import pytest

from core.types import Document, Principal
from ragline.writes import WriteDenied, authorize_write, principal_from_dict, principal_to_dict

ALPHA = Document("d1", "upload:plan.md", "Plan", "markdown", acl_tags=frozenset({"alpha"}))
SHARED = Document("d2", "upload:s.md", "S", "markdown", acl_tags=frozenset({"alpha", "beta"}))
PUBLIC = Document("d3", "upload:p.md", "P", "markdown")
ANN = Principal("ann", tags=frozenset({"alpha"}), can_write=True)
DAVE = Principal("dave", can_write=True)
READER = Principal("rita", tags=frozenset({"alpha"}))


def test_operator_and_superuser_may_do_anything() -> None:
    authorize_write(None, ALPHA, ["x"])
    authorize_write(Principal("root", superuser=True), ALPHA, ["x"])


def test_read_only_keys_write_nothing() -> None:
    with pytest.raises(WriteDenied, match="can_write"):
        authorize_write(READER, None, None)


def test_a_hidden_document_is_refused_whatever_the_tags() -> None:
    for tags in (None, [], ["user:dave"]):
        with pytest.raises(WriteDenied, match="no access"):
            authorize_write(DAVE, ALPHA, tags, "upload:plan.md")


def test_foreign_tags_are_refused_the_same_way_with_or_without_a_hidden_document() -> None:
    messages = set()
    for existing in (ALPHA, None):
        with pytest.raises(WriteDenied) as err:
            authorize_write(DAVE, existing, ["alpha"])
        messages.add(str(err.value))
    assert messages == {"you may only restrict a document to tags you hold; not: ['alpha']"}


def test_a_member_may_replace_retag_and_keep_shared_tags() -> None:
    authorize_write(ANN, ALPHA, None)
    authorize_write(ANN, ALPHA, [])  # opening it up is the owners' call
    authorize_write(ANN, SHARED, ["alpha", "beta"])  # keeps beta though ann lacks it
    with pytest.raises(WriteDenied, match="gamma"):
        authorize_write(ANN, SHARED, ["alpha", "gamma"])
    authorize_write(DAVE, PUBLIC, ["user:dave"])


def test_principal_round_trips_through_a_task_message() -> None:
    assert principal_from_dict(principal_to_dict(ANN)) == ANN
    assert principal_from_dict(None) is None and principal_to_dict(None) is None
