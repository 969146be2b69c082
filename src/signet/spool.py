"""The capture spool: what a hook hands over, kept on disk until the daemon has imported it
(daemon/spool_import.py). A file `memory/spool/<ns>-<pid>-<rand>.spool` holds a JSON line then
the transcript's raw bytes, written under a dot-name, fsynced and renamed, so a crash leaves a
whole file or none. Standard library only: the hook process must stay light.
"""

from __future__ import annotations

import json
import os
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "SPOOL_DIR", "SpoolEntry", "pending", "read", "remove", "set_aside", "spool_dir",
    "stale_temp_files", "write",
]

SPOOL_DIR = os.path.join("memory", "spool")
SUFFIX = ".spool"
FAILED = "failed"
VERSION = 1
MAX_HEADER_BYTES = 16 * 1024 * 1024


class SpoolEntry:
    """One spooled event: the hook's request and the transcript's raw bytes (or None)."""

    __slots__ = ("event", "harness", "path", "payload", "pid", "spooled_at", "transcript")

    def __init__(
        self, path: str, event: str, harness: str, payload: dict[str, Any],
        transcript: bytes | None, pid: int, spooled_at: float,
    ) -> None:
        self.path, self.event, self.harness, self.payload = path, event, harness, payload
        self.transcript, self.pid, self.spooled_at = transcript, pid, spooled_at


def spool_dir(workspace: str) -> str:
    return os.path.join(workspace, SPOOL_DIR)


def write(
    workspace: str, event: str, harness: str, payload: dict[str, Any],
    transcript: bytes | None = None,
) -> str | None:
    """Spool one event durably; its path, or None when the workspace does not exist (a hook
    never creates one)."""
    if not os.path.isdir(workspace):
        return None
    folder = spool_dir(workspace)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    now = time.time()
    header = {
        "version": VERSION, "event": event, "harness": harness, "payload": payload,
        "transcript_bytes": None if transcript is None else len(transcript),
        "pid": os.getpid(), "spooled_at": now,
    }
    name = f"{time.time_ns():020d}-{os.getpid()}-{os.urandom(4).hex()}{SUFFIX}"
    temp = os.path.join(folder, f".{name}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        data = json.dumps(header, ensure_ascii=False).encode("utf-8") + b"\n" + (transcript or b"")
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        _unlink(temp)
        raise
    os.close(fd)
    final = os.path.join(folder, name)
    os.replace(temp, final)
    _fsync_dir(folder)
    return final


def pending(workspace: str) -> list[str]:
    """The spooled files waiting for import, oldest first."""
    folder = spool_dir(workspace)
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return [os.path.join(folder, n) for n in sorted(names) if n.endswith(SUFFIX) and not n.startswith(".")]


def read(path: str) -> SpoolEntry:
    """One spooled file; ValueError naming the problem when it is not one."""
    with open(path, "rb") as handle:
        data = handle.read()
    head, newline, rest = data.partition(b"\n")
    if not newline or len(head) > MAX_HEADER_BYTES:
        raise ValueError("no header line")
    try:
        header = json.loads(head)
    except ValueError as exc:
        raise ValueError(f"the header is not JSON: {exc}") from None
    if not isinstance(header, dict) or header.get("version") != VERSION:
        raise ValueError("not a version 1 spool file")
    size = header.get("transcript_bytes")
    if size is not None and size != len(rest):
        raise ValueError(f"the transcript is {len(rest)} bytes, the header says {size}")
    payload = header.get("payload")
    if not isinstance(payload, dict) or not isinstance(header.get("event"), str):
        raise ValueError("the header has no event or payload")
    return SpoolEntry(
        path, header["event"], str(header.get("harness") or "generic"), payload,
        rest if size is not None else None, int(header.get("pid") or 0),
        float(header.get("spooled_at") or 0),
    )


def remove(path: str | None) -> None:
    """Delete a spooled file once its event reached the daemon (gone already is fine)."""
    if path:
        _unlink(path)


def set_aside(path: str, reason: str) -> str:
    """Move a file that cannot be imported to failed/, with the reason beside it."""
    folder = os.path.join(os.path.dirname(path), FAILED)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    target = os.path.join(folder, os.path.basename(path))
    with open(target + ".reason", "w", encoding="utf-8") as handle:
        handle.write(reason.strip() + "\n")
    os.replace(path, target)
    return target


def stale_temp_files(workspace: str, older_than_s: float) -> list[str]:
    """Dot-named files a writer killed mid-write left behind (never renamed into place)."""
    folder = spool_dir(workspace)
    cutoff = time.time() - older_than_s
    found = []
    try:
        for name in os.listdir(folder):
            path = os.path.join(folder, name)
            if name.startswith(".") and name.endswith(".tmp") and os.stat(path).st_mtime < cutoff:
                found.append(path)
    except OSError:
        return found
    return found


def _fsync_dir(folder: str) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
