"""What every group of `ragline` commands shares: the consoles, the common options, the
settings and the application opened from them.

The consoles print plain text. File names, titles, job reasons and libraries' messages
often hold brackets ("[Draft] Policy", "[Errno 2]"), which rich would read as markup:
lost from the output, or a crash on a "closing tag" such as "[/tmp/a]". Colour is given
with `style=` or `Text`, never written into a string."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
from rich.console import Console
from rich.text import Text

if TYPE_CHECKING:  # imported where used: `ragline --help` stays light
    from concurrent.futures import Future

    from core.settings import Settings
    from indexing.embedders import Embedder
    from indexing.stores.sql_metadata import SqlMetadataStore
    from ragline.app import Ragline

console = Console(markup=False, highlight=False)
err = Console(stderr=True, markup=False, highlight=False, soft_wrap=True)

DataDir = Annotated[
    Path | None,
    typer.Option("--data-dir", help="Where the embedded stores live (RAGLINE_DATA_DIR)."),
]
User = Annotated[str, typer.Option("--user", help="Who is asking.")]
Roles = Annotated[list[str] | None, typer.Option("--role", help="A role of the user (repeatable).")]
AsJson = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]


def settings_for(data_dir: Path | None, *, existing: bool = False) -> Settings:
    """The settings, `--data-dir` over RAGLINE_DATA_DIR. `existing`: the command only
    reads, so an embedded data dir with nothing in it ends the command (exit 2) before
    anything is created there: a mistyped path would get a new, empty store, and the
    answer "nothing indexed" instead of "no data here". Settings that cannot be used end
    it too, in one line naming the variable (exit 2)."""
    from core.errors import ConfigError
    from core.settings import load_settings

    try:
        settings = load_settings(data_dir=data_dir) if data_dir else load_settings()
    except ConfigError as exc:
        fail("error", exc, 2)
    if existing:
        require_data(settings)
    return settings


def require_data(settings: Settings) -> None:
    """End the command (exit 2) unless the data dir holds data (see `settings_for`)."""
    from core.errors import RaglineError

    try:
        usable_data_dir(settings, existing=True)
    except RaglineError as exc:
        fail("error", exc, 2)


def usable_data_dir(settings: Settings, *, existing: bool) -> None:
    """Raise DataDirError when the data dir cannot serve the command: `existing` and no
    embedded metadata database there yet, or (else) a data dir that cannot be created
    (under a file, or no permission). A server metadata database (RAGLINE_METADATA_URL)
    holds the data: nothing is looked for then."""
    from core.errors import DataDirError

    where = settings.data_dir
    try:
        if not existing:
            where.mkdir(parents=True, exist_ok=True)
        elif not settings.metadata_url and not settings.sqlite_path.is_file():
            raise DataDirError(
                f"no Ragline data in {where} (nothing ingested there yet; "
                "check --data-dir or RAGLINE_DATA_DIR)"
            )
    except OSError as exc:
        raise DataDirError(f"cannot use the data dir {where}: {exc.strerror or exc}") from exc


def open_app(
    data_dir: Path | None,
    embedder: Future[Embedder] | None = None,
    settings: Settings | None = None,
    *,
    existing: bool = False,
) -> Ragline:
    """The application on these settings (see `settings_for` for `existing`); a
    configuration it refuses ends the command with its reason (exit 2)."""
    from core.errors import RaglineError
    from ragline.app import Ragline

    settings = settings or settings_for(data_dir, existing=existing)
    try:
        if not existing:
            usable_data_dir(settings, existing=False)
        return Ragline(settings, embedder.result() if embedder is not None else None)
    except RaglineError as exc:
        fail("error", exc, 2)


def open_metadata(data_dir: Path | None) -> SqlMetadataStore:
    """The metadata store alone, of a data dir that holds data already: what reads jobs,
    gaps and audit logs needs (no embedder, no derived store)."""
    from core.errors import RaglineError
    from indexing.stores.sql_metadata import SqlMetadataStore

    settings = settings_for(data_dir, existing=True)
    try:
        return SqlMetadataStore(settings.resolved_metadata_url)
    except RaglineError as exc:
        fail("error", exc, 2)


def one_of(*choices: str) -> Callable[[str], str]:
    """The parser of an option with fixed choices, whose error reads "must be one of a,
    b, c": typer's own check of a Literal words it as pydantic does ("Value error, ...")."""

    def parse(value: str) -> str:
        if value not in choices:
            raise typer.BadParameter(f"must be one of {', '.join(choices)}")
        return value

    return parse


def labelled(label: str, message: object, colour: str = "red") -> Text:
    """ "label: message", the label coloured and the message as it is."""
    return Text.assemble((f"{label}:", colour), f" {message}")


def fail(label: str, message: object, code: int = 1) -> NoReturn:
    """Print "label: message" on stderr and end the command with `code`."""
    err.print(labelled(label, message))
    cause = message if isinstance(message, BaseException) else None
    raise typer.Exit(code) from cause
