from pathlib import Path

import pytest

from core.settings import Settings


def test_env_nested_and_flat_llm_alias(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RAGLINE_CONFIG_FILE", str(tmp_path / "absent.toml"))
    monkeypatch.setenv("RAGLINE_LLM_BASE_URL", "http://127.0.0.1:8000/v1")
    monkeypatch.setenv("RAGLINE_CHUNK__MAX_TOKENS", "256")
    s = Settings()
    assert s.llm.base_url == "http://127.0.0.1:8000/v1"
    assert s.chunk.max_tokens == 256
    monkeypatch.setenv("RAGLINE_LLM__BASE_URL", "http://vllm:8000/v1")
    assert Settings().llm.base_url == "http://vllm:8000/v1"  # the nested form wins


def test_toml_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    cfg = tmp_path / "ragline.toml"
    cfg.write_text(
        'data_dir = "/srv/rl"\n[embedder]\nkind = "e5"\n[[ingest.acl_rules]]\n'
        'glob = "*/finance/*"\ntags = ["finance"]\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("RAGLINE_CONFIG_FILE", str(cfg))
    s = Settings()
    assert s.data_dir == Path("/srv/rl") and s.embedder.kind == "e5"
    assert s.ingest.acl_rules[0].tags == ["finance"]
