"""One import, whatever its format: a Signet export folder (bundle.py, rows restored as they
were), a mem0 JSON export or a folder of markdown notes (importers.py, through the write path).
The daemon's `POST /api/import` and the CLI's in-process `signet import` both call
`import_from`, so the formats are told apart in one place."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from signet.config import Config
from signet.errors import InvalidInput, NotFound
from signet.paths import lookup, shown
from signet.portable import bundle, importers
from signet.store.portable import PortableStore
from signet.types import Actor

__all__ = ["SOURCES", "import_from"]

SOURCES = ("signet", "mem0", "markdown")


class Workspace(importers.Writer, Protocol):
    portable: PortableStore  # the store's rows, on either backend (store/portable.py)
    config: Config


def _quiet(_what: str, _n: int) -> None:
    pass


def import_from(
    app: Workspace, path: Path | str, source: str = "signet", *, project: str | None = None,
    progress: bundle.Progress | None = None,
) -> dict[str, Any]:
    """Import `path` in format `source`; the counts of what was read, written and refused."""
    path = Path(path)
    if lookup(path) is None:
        raise NotFound(f"nothing to import at {shown(path)}")
    actor = Actor(name=f"import-{source}")
    if source == "signet":
        return bundle.import_bundle(app.portable, app.config.workspace, path, progress or _quiet)
    if source == "mem0":
        return importers.import_mem0(app, path, actor=actor, project=project)
    if source == "markdown":
        return importers.import_markdown(app, path, actor=actor, project=project)
    raise InvalidInput(f"unknown import format {source!r}; expected one of {', '.join(SOURCES)}")
