"""Reversible edits of a harness's config files, for `signet connect`.

An `Edit` holds pure functions that add and remove Signet's entries from a file's text; an unchanged
result writes nothing. The first install keeps the original bytes in `<name>.signet-backup` and
records in the connect manifest whether the file existed and the SHA-256 of what was written.
Uninstalling restores the backup byte for byte when the file is still what Signet wrote, otherwise
removes only Signet's entries. Writes are atomic.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from signet.errors import ConfigError

__all__ = ["Change", "Edit", "Manifest", "check", "install", "uninstall"]

BACKUP_SUFFIX = ".signet-backup"


@dataclass(frozen=True)
class Edit:
    path: Path
    what: str  # what Signet adds here, for the report ("MCP server signet", "hooks ...")
    add: Callable[[str | None], str]
    remove: Callable[[str], str | None]  # None: nothing of the file is left, delete it


@dataclass(frozen=True)
class Change:
    path: Path
    action: str  # added | unchanged | restored | removed | deleted | absent
    what: str
    diff: str = ""
    backup: Path | None = None

    def line(self) -> str:
        extra = f" (backup: {self.backup})" if self.backup else ""
        return f"{self.path}: {self.what} {self.action}{extra}"


class Manifest:
    """`<workspace>/connect/manifest.json`: per file path, {existed, written_sha256}."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self.data: dict[str, Any] = json.loads(path.read_text("utf-8"))
        except FileNotFoundError:
            self.data = {}
        except (OSError, ValueError) as exc:
            raise ConfigError(f"{path}: unreadable connect manifest: {exc}") from exc

    def get(self, file: Path) -> dict[str, Any] | None:
        entry = self.data.get(str(file))
        return entry if isinstance(entry, dict) else None

    def put(self, file: Path, entry: dict[str, Any] | None) -> None:
        if entry is None:
            self.data.pop(str(file), None)
        else:
            self.data[str(file)] = entry

    def save(self) -> None:
        _write(self.path, json.dumps(self.data, indent=2, sort_keys=True) + "\n")


def check(edits: list[Edit], *, removing: bool) -> None:
    """Compute every edit before writing any, so a file that cannot be edited (bad JSON, a
    foreign table) stops the whole connect with nothing half done."""
    for edit in edits:
        old = _read(edit.path)
        if removing:
            if old is not None:
                edit.remove(old)
        else:
            edit.add(old)


def install(edit: Edit, manifest: Manifest, *, dry_run: bool) -> Change:
    old = _read(edit.path)
    new = edit.add(old)
    if new == old:
        return Change(edit.path, "unchanged", edit.what)
    diff = _diff(edit.path, old, new)
    if dry_run:
        return Change(edit.path, "would be added", edit.what, diff)
    entry = manifest.get(edit.path)
    backup = None
    if entry is None:
        entry = {"existed": old is not None}
        if old is not None:
            backup = edit.path.with_name(edit.path.name + BACKUP_SUFFIX)
            _write(backup, old, like=edit.path)
    _write(edit.path, new, like=edit.path if old is not None else None)
    manifest.put(edit.path, {**entry, "written_sha256": _sha(new)})
    return Change(edit.path, "added", edit.what, diff, backup)


def uninstall(edit: Edit, manifest: Manifest, *, dry_run: bool) -> Change:
    old = _read(edit.path)
    entry = manifest.get(edit.path)
    backup = edit.path.with_name(edit.path.name + BACKUP_SUFFIX)
    if old is None:
        if not dry_run:
            manifest.put(edit.path, None)
        return Change(edit.path, "absent", edit.what)
    if entry is not None and entry.get("written_sha256") == _sha(old):
        original = _read(backup) if entry.get("existed") else None
        if entry.get("existed") and original is None:
            raise ConfigError(f"{backup}: the backup of {edit.path} is missing; nothing was changed")
        action = "restored" if original is not None else "deleted"
    else:
        original = edit.remove(old)
        if original == old:
            if not dry_run:
                manifest.put(edit.path, None)
            return Change(edit.path, "absent", edit.what)
        action = "removed" if original is not None else "deleted"
    diff = _diff(edit.path, old, original)
    if dry_run:
        return Change(edit.path, f"would be {action}", edit.what, diff)
    if original is None:
        edit.path.unlink()
    else:
        _write(edit.path, original, like=edit.path)
    if action == "restored" or action == "deleted":
        backup.unlink(missing_ok=True)
    manifest.put(edit.path, None)
    return Change(edit.path, action, edit.what, diff)


def _read(path: Path) -> str | None:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from exc
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text; left alone") from exc


def _write(path: Path, text: str, *, like: Path | None = None) -> None:
    """Atomically, keeping the mode of `like` (the file being replaced) when there is one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = like.stat().st_mode & 0o777 if like is not None and like.exists() else 0o644
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
            out.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _diff(path: Path, old: str | None, new: str | None) -> str:
    lines = difflib.unified_diff(
        (old or "").splitlines(keepends=True), (new or "").splitlines(keepends=True),
        fromfile=str(path) if old is not None else "/dev/null",
        tofile=str(path) if new is not None else "/dev/null",
    )
    return "".join(lines)
