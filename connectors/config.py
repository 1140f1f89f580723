"""The gateway's declared sources: SQL templates and HTTP status sources, read from TOML.

Everything an agent can reach beyond the documents is declared here, never composed at
run time: a template's SQL is fixed, its parameters have types and allowed values, and a
source admits only the roles it lists (none listed = nobody).
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from core.errors import ConfigError
from core.types import Principal

NAME = re.compile(r"^[a-z][a-z0-9_]{0,47}$")
PACKAGED_SAMPLE = Path(__file__).parent / "sample" / "gateway.toml"


class Param(BaseModel):
    """One named parameter: its type and what values it may take.

    `bind` names a principal attribute (e.g. "region"): the value then comes from the
    caller's key, never from the question, and a caller without that attribute is refused
    unless one of `unbound_roles` lets them see every value."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["str", "int", "float", "date", "month", "enum"] = "str"
    description: str = ""
    values: list[str] = Field(default_factory=list)  # enum: allowed values
    aliases: dict[str, str] = Field(default_factory=dict)  # question word -> enum value
    pattern: str = ""  # str: full-match regex
    min: float | None = None
    max: float | None = None
    max_length: int = 100
    default: Any = None
    required: bool = True
    bind: str = ""
    unbound_roles: list[str] = Field(default_factory=list)
    # How rules find the value in a question: a regex whose group 1 is the value.
    extract: str = ""


class Template(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    description: str
    sql: str
    params: dict[str, Param] = Field(default_factory=dict)
    limit: int = 20
    roles: list[str] = Field(default_factory=list)  # narrows the source's roles; empty = same
    # Words that say a question is about this template's entity and measure.
    keywords: list[str] = Field(default_factory=list)
    answer_column: str = ""  # the column whose value answers the question, if any

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not NAME.match(v):
            raise ValueError(f"template name {v!r} must match {NAME.pattern}")
        return v


class SqlSource(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    description: str = ""
    url: str = ""  # SQLAlchemy URL; "{data_dir}" is replaced
    url_env: str = ""  # or the name of an environment variable holding it
    roles: list[str] = Field(default_factory=list)
    timeout_s: float = 15.0
    freshness_window_s: float = 0.0  # 0 = no window
    # A query returning when the data last changed (one timestamp), for the freshness age.
    updated_at_sql: str = ""
    templates: list[Template] = Field(default_factory=list)

    def resolved_url(self, data_dir: Path) -> str:
        url = os.environ.get(self.url_env, "") if self.url_env else ""
        url = url or self.url
        if not url:
            raise ConfigError(
                f"SQL source {self.id!r} has no URL: set `url` or the variable {self.url_env}"
            )
        return url.replace("{data_dir}", str(data_dir))


class StatusParam(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pattern: str = r"[A-Za-z0-9_-]{1,64}"  # full-match; also what rules look for
    description: str = ""
    # Regex with one group that finds the value in a question (e.g. r"ticket\s*#?(\d+)").
    extract: str = ""


class HttpSource(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    description: str = ""
    url: str  # template, e.g. http://host/tickets/{ticket_id}; "{base_url_env}" not allowed
    base_url_env: str = ""  # if set, "{base}" in url is this variable's value
    params: dict[str, StatusParam] = Field(default_factory=dict)
    roles: list[str] = Field(default_factory=list)
    auth_header: str = ""  # e.g. "X-API-Key" or "Authorization"
    auth_env: str = ""  # environment variable holding the header's value
    auth_prefix: str = ""  # e.g. "Bearer "
    timeout_s: float = 15.0
    retries: int = 2  # GET only
    freshness_window_s: float = 60.0
    cache_ttl_s: float = 30.0  # capped at the freshness window
    mapping: dict[str, str] = Field(default_factory=dict)  # field -> "$.path.to[0].value"
    keywords: list[str] = Field(default_factory=list)

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        if not NAME.match(v):
            raise ValueError(f"status source id {v!r} must match {NAME.pattern}")
        return v


class DocumentsSource(BaseModel):
    model_config = ConfigDict(extra="forbid")

    freshness_window_s: float = 0.0  # documents older than this are "may be outdated"


class GatewayConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    documents: DocumentsSource = Field(default_factory=DocumentsSource)
    sql: list[SqlSource] = Field(default_factory=list)
    http: list[HttpSource] = Field(default_factory=list)

    def templates(self) -> dict[str, tuple[SqlSource, Template]]:
        return {t.name: (s, t) for s in self.sql for t in s.templates}

    def usable_templates(self, principal: Principal) -> list[str]:
        """The names of the templates `principal` may use, sorted: the only ones it is
        told of (in errors and choices too)."""
        return sorted(
            t.name for s in self.sql for t in s.templates if may_use(principal, t.roles or s.roles)
        )

    def usable_sources(self, principal: Principal) -> list[str]:
        """The ids of the status sources `principal` may use, sorted."""
        return sorted(h.id for h in self.http if may_use(principal, h.roles))


def may_use(principal: Principal, roles: list[str]) -> bool:
    """Default deny: a source that lists no roles admits nobody but superusers."""
    return principal.superuser or bool(principal.roles & set(roles))


def load_gateway_config(path: str | Path | None) -> GatewayConfig:
    """The sources file; no file = documents only."""
    if not path:
        return GatewayConfig()
    p = Path(path)
    try:
        raw = tomllib.loads(p.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise ConfigError(f"cannot read gateway sources {p}: {e}") from e
    try:
        config = GatewayConfig.model_validate(raw)
    except ValidationError as e:
        raise ConfigError(f"invalid gateway sources {p}: {e}") from e
    names = [t.name for s in config.sql for t in s.templates]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ConfigError(f"template names must be unique across sources: {dupes}")
    return config
