"""The rerank's model: used when its directory is set, refused in one message naming the
setting when it cannot be, and named in the audit trail only when it scored passages (a
path that was never loaded used to be recorded as the cross-encoder)."""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path

import pytest

from core.errors import ModelMissing
from core.settings import RetrievalSettings, Settings
from core.types import Principal
from fusion.rerank import FlagCrossEncoder, SignalReranker
from ragline.app import Ragline


def test_a_model_directory_that_cannot_be_used_is_refused_naming_the_setting(
    tmp_path: Path,
) -> None:
    with pytest.raises(ModelMissing, match="RAGLINE_RETRIEVAL__RERANKER_PATH='/no/such/dir'"):
        FlagCrossEncoder("/no/such/dir")
    if importlib.util.find_spec("FlagEmbedding") is None:
        with pytest.raises(ModelMissing, match=r"FlagEmbedding is missing: pip install"):
            FlagCrossEncoder(str(tmp_path))
    settings = Settings(
        data_dir=tmp_path / "data", retrieval=RetrievalSettings(reranker_path="/no/such/dir")
    )
    with pytest.raises(ModelMissing, match="RERANKER_PATH"):
        Ragline(settings)


class _Model:
    name = "/models/bge-reranker-v2-m3"

    def score(self, question: str, passages: Sequence[str]) -> list[float]:
        return [1.0 if "quorbex" in p else 0.0 for p in passages]


def test_the_audit_names_the_model_only_when_one_scores(tmp_path: Path) -> None:
    assert SignalReranker(cross_encoder=_Model()).cross_encoder_name == _Model.name
    (tmp_path / "a.md").write_text("# A\n\nThe quorbex quota is 7 crates.\n")
    rag = Ragline(Settings(data_dir=tmp_path / "data"))
    try:
        rag.ingest([tmp_path / "a.md"])
        answer = rag.ask("What is the quorbex quota?", Principal(user="a", superuser=True))
        assert rag.audit_payload(answer)["rerank"]["cross_encoder"] == ""
        rag.reranker = SignalReranker(cross_encoder=_Model())
        assert rag.audit_payload(answer)["rerank"]["cross_encoder"] == _Model.name
    finally:
        rag.close()
