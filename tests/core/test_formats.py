"""A query's doc_type filter: format names or the extensions that name them; anything else
refused with the known names."""

from __future__ import annotations

import pytest

from core.errors import InvalidRequest
from core.formats import DOC_TYPES, EXTENSION_FORMATS, doc_type_filter
from core.types import Principal, QueryFilter


def test_names_and_extensions_become_stored_formats() -> None:
    assert doc_type_filter(["pdf", "MD", ".htm", " txt ", "csv", "odt", "doc"]) == {
        "pdf",
        "markdown",
        "html",
        "text",
        "odf",
        "doc",
    }
    # Every extension ingestion parses names a format a filter accepts.
    assert set(EXTENSION_FORMATS.values()) <= DOC_TYPES
    assert doc_type_filter([]) == frozenset()


@pytest.mark.parametrize("value", ["pfd", "markdwon", "", "exe", ".", "pdf,docx"])
def test_an_unknown_format_is_refused_with_the_known_ones(value: str) -> None:
    with pytest.raises(InvalidRequest, match=r"not a document format; known: .*markdown"):
        doc_type_filter([value])


def test_the_principal_filter_checks_its_doc_types() -> None:
    alice = Principal(user="alice")
    assert QueryFilter.for_principal(alice, doc_types=["md"]).doc_types == {"markdown"}
    with pytest.raises(InvalidRequest, match="'pfd'"):
        QueryFilter.for_principal(alice, doc_types=frozenset({"pfd"}))
