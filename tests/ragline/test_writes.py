"""The one write rule (ragline/writes.py), case by case."""

from __future__ import annotations

from dataclasses import replace

import pytest

from core.types import Document, Principal
from ragline.writes import (
    UploadTarget,
    WriteDenied,
    authorize_write,
    principal_from_dict,
    principal_to_dict,
)

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


def _target(
    principal: Principal | None, at_key: list[Document], own_taken: bool = False
) -> UploadTarget:
    from ragline.writes import upload_target

    return upload_target(principal, "upload:plan.md", at_key, "own0000000000000", own_taken)


def test_upload_target_never_depends_on_documents_the_writer_cannot_see() -> None:
    from core.ids import doc_id_for

    original = replace(ALPHA, doc_id=doc_id_for("upload:plan.md"))
    others = replace(ALPHA, doc_id="ffff000000000000")
    # Hidden documents at the key, or none: dave gets his own id and no existing document.
    answers = {_target(DAVE, docs) for docs in ([], [original], [original, others])}
    assert answers == {UploadTarget("own0000000000000", None)}
    # Ann sees alpha's: she replaces it (the original id first).
    assert _target(ANN, [others, original]) == UploadTarget(original.doc_id, original)
    # Her own document at the key comes before the original.
    mine = replace(ALPHA, doc_id="own0000000000000")
    assert _target(ANN, [original, mine]).doc_id == "own0000000000000"
    # Operators see everything and create the key's original id.
    assert _target(None, [original]).doc_id == original.doc_id
    assert _target(None, []).doc_id == original.doc_id
    # A document dave cannot see holds his own id (restricted away from him since): a
    # fresh random id, which nobody can compare with anything.
    fresh = _target(DAVE, [original], own_taken=True)
    assert fresh.existing is None and fresh.doc_id not in ("own0000000000000", original.doc_id)
    assert len(fresh.doc_id) == 16


def test_originals_are_for_writers_superusers_and_the_configured_roles() -> None:
    from ragline.writes import original_denial

    assert original_denial(ANN, ALPHA, False, ["admin"]) is None  # may write it
    assert original_denial(DAVE, PUBLIC, False, ["admin"]) is None  # public: writable
    why = original_denial(READER, ALPHA, False, ["admin"])
    assert why is not None and "/v1/documents/d1/view" in why
    assert original_denial(READER, ALPHA, True, ["admin"]) is None  # readers: on
    boss = Principal("bo", roles=frozenset({"admin"}), tags=frozenset({"alpha"}))
    assert original_denial(boss, ALPHA, False, ["admin"]) is None
    assert original_denial(Principal("root", superuser=True), ALPHA, False, []) is None
