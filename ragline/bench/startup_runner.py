"""Run by `ragline bench startup` as `python -c <this file> ARGS...`: the `ragline` command
with ARGS, printing to stderr the monotonic clock when a model is first called
(`RAGLINE_FIRST_MODEL_CALL <seconds>`). The embedder classes are wrapped as their module is
imported, so nothing is imported earlier than the command itself would import it."""

import importlib.abc
import importlib.machinery
import sys
import time
from collections.abc import Sequence
from types import ModuleType

_MODULE = "indexing.embedders"
_METHODS = ("embed_query", "embed_passages", "_embed_queries")


class _FirstCall:
    """Prints the clock at the first call of any method it wraps."""

    def __init__(self) -> None:
        self.seen = False

    def wrap(self, cls: type, name: str) -> None:
        original = getattr(cls, name)

        def wrapped(this: object, *args: object, **kw: object) -> object:
            if not self.seen:
                self.seen = True
                print(f"RAGLINE_FIRST_MODEL_CALL {time.monotonic():.6f}", file=sys.stderr)
            return original(this, *args, **kw)

        setattr(cls, name, wrapped)


class _Loader(importlib.abc.Loader):
    def __init__(self, inner: importlib.abc.Loader, first: _FirstCall) -> None:
        self.inner = inner
        self.first = first

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.inner.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self.inner.exec_module(module)
        for value in list(vars(module).values()):
            if isinstance(value, type) and value.__module__ == _MODULE:
                for name in _METHODS:
                    if name in vars(value):
                        self.first.wrap(value, name)


class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self) -> None:
        self.first = _FirstCall()

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != _MODULE:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _Loader(spec.loader, self.first)
        return spec


sys.meta_path.insert(0, _Finder())
sys.argv = ["ragline", *sys.argv[1:]]
from ragline.cli import main  # noqa: E402

main()
