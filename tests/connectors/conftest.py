"""The gateway on the real sample data: the SQLite sample database built once per session
from the repository's public tables, the packaged sample sources, and records (audit,
traces, memory) in a fresh SQLite metadata database per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine

from connectors.config import PACKAGED_SAMPLE, GatewayConfig, load_gateway_config
from connectors.gateway import Gateway
from connectors.records import GatewayRecords
from connectors.sample.database import load_sample
from indexing.models import Base


@pytest.fixture(scope="session")
def sample_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sample")
    load_sample(f"sqlite:///{root / 'sample.db'}")
    return root


@pytest.fixture(scope="session")
def sample_config() -> GatewayConfig:
    return load_gateway_config(PACKAGED_SAMPLE)


@pytest.fixture
def records(tmp_path: Path) -> GatewayRecords:
    engine = create_engine(f"sqlite:///{tmp_path / 'meta.db'}")
    Base.metadata.create_all(engine)
    return GatewayRecords(engine)


@pytest.fixture
def gateway(
    sample_dir: Path, sample_config: GatewayConfig, records: GatewayRecords
) -> Iterator[Gateway]:
    gw = Gateway(sample_config, sample_dir, records, breaker_failures=2, breaker_cooldown_s=0.5)
    yield gw
    gw.close()
