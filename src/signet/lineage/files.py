"""Files of the lineage: written whole or not at all, read back tolerant of what a crash leaves.

Every file the lineage writes (a cleaned transcript, a raw original, a summary, an arc, MEMORY.md)
goes to a temporary name in the same directory, is flushed to disk, then renamed over the
target: a process killed mid-write leaves the old file (or none) and a stray `.tmp-*` file,
never half a file. Cleaned transcripts are JSONL, one message per line.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

from signet.lineage.formats import Message

__all__ = ["read_messages", "safe_name", "write_atomic", "write_messages"]

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
