"""Files of the lineage: written whole or not at all, read back tolerant of what a crash leaves.
Every file goes to a temporary name, is flushed and renamed over the target, so a killed process
leaves the old file and a stray `.tmp-*`. A path the database holds is used only through
`workspace_file`, which refuses an absolute path, `..` or a symlink leading out of its folder: a
crafted bundle row must not touch files elsewhere.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path, PurePosixPath

from signet.lineage.formats import Message

__all__ = [
    "ARTIFACTS", "TRANSCRIPTS", "inside", "read_messages", "safe_name", "workspace_file",
    "write_atomic", "write_messages",
]

# Where the lineage keeps its files, relative to the workspace.
TRANSCRIPTS = ("memory/transcripts",)
ARTIFACTS = ("memory/sessions", "memory/threads")

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(text: str, limit: int = 80) -> str:
    """`text` as a file-name component: letters, digits, dot, dash and underscore only."""
    cleaned = _UNSAFE.sub("-", text).strip(".-") or "session"
    return cleaned[:limit]


def write_atomic(path: Path, data: bytes | str, *, mode: int = 0o600) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(raw)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_messages(path: Path, messages: list[Message]) -> None:
    lines = [json.dumps(m.to_dict(), ensure_ascii=False) for m in messages]
    write_atomic(path, "".join(line + "\n" for line in lines))


def read_messages(path: Path, limit: int | None = None) -> list[Message] | None:
    """The cleaned messages in `path` (the first `limit`), or None when the file is missing or
    not a cleaned transcript."""
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    out: list[Message] = []
    for line in text.splitlines():
        if limit is not None and len(out) >= limit:
            break
        try:
            item = json.loads(line)
            out.append(Message(str(item["role"]), str(item["text"]), item.get("ts")))
        except (json.JSONDecodeError, KeyError, TypeError):
            return None
    return out


def inside(rel: object, folders: tuple[str, ...]) -> bool:
    """Whether `rel` is, by its spelling, a relative path under one of `folders`: not
    absolute, no `..`, no backslash or NUL (what a stored path may look like)."""
    if not isinstance(rel, str) or not rel or "\x00" in rel or "\\" in rel:
        return False
    path = PurePosixPath(rel)
    if path.is_absolute() or ".." in path.parts:
        return False
    return any(path.is_relative_to(folder) and path != PurePosixPath(folder) for folder in folders)


def workspace_file(workspace: Path, rel: object, folders: tuple[str, ...]) -> Path | None:
    """`workspace / rel` when `rel` is inside one of `folders` by its spelling and, with every
    symlink resolved, still lies inside that folder of the workspace; None otherwise."""
    if not inside(rel, folders):
        return None
    target = workspace / str(rel)
    try:
        resolved = target.resolve()
        roots = [(workspace / folder).resolve() for folder in folders]
    except (OSError, RuntimeError):
        return None
    return target if any(resolved.is_relative_to(root) for root in roots) else None
