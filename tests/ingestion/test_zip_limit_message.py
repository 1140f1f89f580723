"""The archive-expansion refusal states the real numbers (issue 14, item 10): a total just
over the limit must not read "expands to 1024 MB, over the 1024 MB limit"."""

from __future__ import annotations

import io
import zipfile

import pytest

import ingestion.parse as parse
from core.errors import ParseError


def test_total_expansion_message_states_exact_sizes() -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("[Content_Types].xml", "<Types/>" * 125)  # 1,000 bytes
        zf.writestr("word/document.xml", "x" * 3001)
    with pytest.raises(ParseError) as err:
        parse.check_zip(buf.getvalue(), max_unzipped=4000)
    message = str(err.value)
    assert "4,001 bytes" in message and "4,000 bytes" in message, message
