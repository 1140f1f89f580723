"""docker-compose.yml against the Compose Specification's JSON schema (vendored in
deploy/compose-spec/ with its licence), and its images aligned with the versions that
deploy/local/services runs here. No Docker engine runs here: deploy/README.md says what
was and was not run."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "deploy" / "compose-spec" / "compose-spec.json"


def _compose() -> dict[str, Any]:
    return dict(yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8")))


def _validator() -> jsonschema.Draft201909Validator:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft201909Validator.check_schema(schema)
    return jsonschema.Draft201909Validator(schema)


def test_compose_file_follows_the_compose_specification() -> None:
    errors = [f"{list(e.path)}: {e.message}" for e in _validator().iter_errors(_compose())]
    assert errors == []
    assert (SCHEMA.parent / "LICENSE").is_file() and (SCHEMA.parent / "NOTICE").is_file()


@pytest.mark.parametrize(
    ("where", "value"),
    [
        (("services", "app", "restart"), ["always"]),  # a list where a string goes
        (("services", "app", "healthcheck", "retries"), "five"),
        (("services", "app", "no_such_key"), True),
        (("volumes", "ragline-data"), {"driver": 7}),
    ],
)
def test_the_schema_rejects_a_broken_compose_file(where: tuple[str, ...], value: Any) -> None:
    doc = _compose()
    node = doc
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = value
    assert list(_validator().iter_errors(doc)), f"accepted {where} = {value!r}"


def _image(service: str) -> str:
    return str(_compose()["services"][service]["image"])


def _lib(name: str) -> str:
    text = (ROOT / "deploy" / "local" / "lib.sh").read_text(encoding="utf-8")
    m = re.search(rf"^{name}=(\S+)", text, re.M)
    assert m, name
    return m.group(1)


def test_images_match_the_versions_the_local_services_run() -> None:
    assert _image("elasticsearch").endswith(":" + _lib("ES_VERSION"))
    assert _image("tika") == f"apache/tika:{_lib('TIKA_VERSION')}.0-full"
    pom = (ROOT / "deploy" / "local" / "neo4j" / "pom.xml").read_text(encoding="utf-8")
    neo4j = re.search(r"<artifactId>neo4j</artifactId>\s*<version>([^<]+)<", pom)
    assert neo4j and _image("neo4j") == f"neo4j:{neo4j.group(1)}-community"


def _installed(cmd: list[str], pattern: str) -> str | None:
    if shutil.which(cmd[0]) is None:
        return None
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    m = re.search(pattern, out.stdout + out.stderr)
    return m.group(1) if m else None


def test_debian_service_images_match_the_installed_packages() -> None:
    """PostgreSQL, Redis and Prometheus come from Debian's packages here: the compose
    images carry the same versions (checked where the package is installed)."""
    checked = 0
    pg = (
        sorted(p.name for p in Path("/usr/lib/postgresql").glob("*"))
        if Path("/usr/lib/postgresql").is_dir()
        else []
    )
    if pg:
        assert _image("postgres").split(":")[1] == pg[-1]
        checked += 1
    redis = _installed(["redis-server", "--version"], r"v=(\d+\.\d+)")
    if redis:
        assert _image("redis") == f"redis:{redis}"
        checked += 1
    prom = _installed(["prometheus", "--version"], r"version (\d+\.\d+\.\d+)")
    if prom:
        assert _image("prometheus") == f"prom/prometheus:v{prom}"
        checked += 1
    if not checked:
        pytest.skip("none of postgresql, redis-server, prometheus is installed here")
