"""The workspace's identity files (AGENTS.md, SOUL.md, IDENTITY.md, USER.md, MEMORY.md), read and
written for the HTTP API. The name is checked against `workspace.IDENTITY_FILES` before any path
is built; a write is capped at MAX_IDENTITY_BYTES and lands atomically, so a harness never reads
half a file.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from signet.config import Config
from signet.errors import Frozen, InvalidInput, NotFound
from signet.types import format_ts
from signet.workspace import IDENTITY_FILES

__all__ = ["MAX_IDENTITY_BYTES", "read_identity", "write_identity"]

MAX_IDENTITY_BYTES = 64 * 1024


def read_identity(cfg: Config, name: str) -> dict[str, Any]:
    path = _path(cfg, name)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise NotFound(f"{name} does not exist in the workspace (signet init creates it)") from None
    return _describe(name, path, data.decode("utf-8", "replace"))


def write_identity(cfg: Config, name: str, content: str) -> dict[str, Any]:
    if cfg.pipeline.mutations_frozen:
        raise Frozen()
    path = _path(cfg, name)
    data = content.encode("utf-8")
    if len(data) > MAX_IDENTITY_BYTES:
        raise InvalidInput(
            f"content: {len(data)} bytes; identity files are capped at 64 KiB ({MAX_IDENTITY_BYTES} bytes)"
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, 0o600)  # about the user: for the user only
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return _describe(name, path, content)


def _path(cfg: Config, name: str) -> Path:
    if name not in IDENTITY_FILES:
        raise NotFound(f"unknown identity file {name!r} (one of {', '.join(IDENTITY_FILES)})")
    return cfg.workspace / name


def _describe(name: str, path: Path, content: str) -> dict[str, Any]:
    from datetime import UTC, datetime

    modified = datetime.fromtimestamp(path.stat().st_mtime, UTC)
    return {"name": name, "content": content, "bytes": len(content.encode("utf-8")),
            "updated_at": format_ts(modified)}
