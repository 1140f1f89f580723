"""The parsed-statement check: a template may only ever run as one plain SELECT with a
bounded LIMIT. Uses a real SQL parser (sqlglot), so comments, string literals and odd
spacing cannot hide a second statement or a write."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from core.errors import ConfigError

# Statement kinds that must not appear anywhere in the tree (a data-modifying CTE included).
_FORBIDDEN = (
    exp.Insert,
    exp.Update,
    exp.Delete,
    exp.Merge,
    exp.Drop,
    exp.Create,
    exp.Alter,
    exp.Command,
    exp.TruncateTable,
    exp.Into,
    exp.Lock,
    exp.Transaction,
    exp.Commit,
    exp.Rollback,
    exp.Set,
    exp.Pragma,
)
# Functions with side effects or that reach outside the database.
_FORBIDDEN_FUNCTIONS = re.compile(
    r"^(pg_|lo_|dblink|set_config|current_setting|load_extension|readfile|writefile|"
    r"fts3_tokenizer|copy|query_to_xml|xmlparse)",
    re.IGNORECASE,
)
_PYFORMAT = re.compile(r"%\((\w+)\)s")


class UnsafeSql(ConfigError):
    """A template's SQL is not one read-only SELECT."""


@dataclass(frozen=True, slots=True)
class CheckedSql:
    sql: str  # regenerated for the dialect, with :name parameters and the forced LIMIT
    limit: int  # rows returned at most
    fetch: int  # rows fetched: limit + 1 when the forced LIMIT can cut rows off
    params: frozenset[str]


def _dialect(name: str) -> str:
    return {"postgresql": "postgres", "sqlite": "sqlite"}.get(name, name)


def check_select(
    sql: str, dialect: str, limit: int, int_params_max: Mapping[str, int] | None = None
) -> CheckedSql:
    """Parse `sql` for `dialect` ("sqlite" | "postgresql") and return it with its LIMIT
    forced to at most `limit` rows; raise UnsafeSql for anything but one SELECT."""
    d = _dialect(dialect)
    try:
        statements = [s for s in sqlglot.parse(sql, read=d) if s is not None]
    except SqlglotError as e:
        raise UnsafeSql(f"SQL does not parse: {e}") from e
    if len(statements) != 1:
        raise UnsafeSql(f"exactly one statement is allowed, found {len(statements)}")
    tree = statements[0]
    if not isinstance(tree, exp.Select):
        raise UnsafeSql(f"only a SELECT may run, not {tree.key.upper()}")
    for node in tree.walk():
        if isinstance(node, _FORBIDDEN):
            raise UnsafeSql(f"{node.key.upper()} is not allowed in a template")
        if isinstance(node, exp.Func):
            name = node.name if isinstance(node, exp.Anonymous) else node.sql_name()
            if _FORBIDDEN_FUNCTIONS.match(name or ""):
                raise UnsafeSql(f"function {name} is not allowed in a template")
    params = frozenset(p.name for p in tree.find_all(exp.Placeholder) if p.name)
    fetch = limit + 1
    current = tree.args.get("limit")
    value = current.expression if isinstance(current, exp.Limit) else None
    if isinstance(value, exp.Literal) and value.is_int:
        if int(value.this) <= limit:  # the template's own smaller LIMIT: nothing is cut
            fetch = limit = int(value.this)
        else:
            tree = tree.limit(fetch)
    elif isinstance(value, exp.Placeholder):
        most = (int_params_max or {}).get(value.name)
        if most is None or most > limit:
            raise UnsafeSql(f"LIMIT :{value.name} needs an int parameter with max <= {limit}")
        fetch = limit = most
    elif value is not None:
        raise UnsafeSql("LIMIT must be a number or one parameter")
    else:
        tree = tree.limit(fetch)
    if tree.args.get("offset") is not None and not isinstance(
        tree.args["offset"].expression, exp.Literal | exp.Placeholder
    ):
        raise UnsafeSql("OFFSET must be a number or one parameter")
    out = tree.sql(dialect=d)
    if d == "postgres":  # back to SQLAlchemy's :name style; text() escapes % itself
        out = _PYFORMAT.sub(r":\1", out)
    return CheckedSql(out, limit, fetch, params)
