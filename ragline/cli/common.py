"""What every group of `ragline` commands shares: the consoles, the common options, the
settings and the application opened from them.

The consoles print plain text. File names, titles, job reasons and libraries' messages
often hold brackets ("[Draft] Policy", "[Errno 2]"), which rich would read as markup:
lost from the output, or a crash on a "closing tag" such as "[/tmp/a]". Colour is given
with `style=` or `Text`, never written into a string."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
from rich.console import Console
from rich.text import Text

if TYPE_CHECKING:  # imported where used: `ragline --help` stays light
    from concurrent.futures import Future

    from core.settings import Settings
    from indexing.embedders import Embedder
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


def settings_for(data_dir: Path | None) -> Settings:
    from core.settings import Settings

    return Settings(data_dir=data_dir) if data_dir else Settings()


def open_app(
    data_dir: Path | None,
    embedder: Future[Embedder] | None = None,
    settings: Settings | None = None,
) -> Ragline:
    """The application on these settings; a configuration it refuses ends the command
    with its reason (exit 2)."""
    from core.errors import RaglineError
    from ragline.app import Ragline

    try:
        settings = settings or settings_for(data_dir)
        return Ragline(settings, embedder.result() if embedder is not None else None)
    except RaglineError as exc:
        fail("error", exc, 2)


def labelled(label: str, message: object, colour: str = "red") -> Text:
    """ "label: message", the label coloured and the message as it is."""
    return Text.assemble((f"{label}:", colour), f" {message}")


def fail(label: str, message: object, code: int = 1) -> NoReturn:
    """Print "label: message" on stderr and end the command with `code`."""
    err.print(labelled(label, message))
    cause = message if isinstance(message, BaseException) else None
    raise typer.Exit(code) from cause
