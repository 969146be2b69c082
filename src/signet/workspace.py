"""The workspace initialiser: lays out `$SIGNET_WORKSPACE`, adding only what is missing, so running
it twice is harmless. Private data goes in 0700 folders and the identity files and agent.yaml are
0600, set by chmod so the umask cannot loosen them; an open pre-existing folder is kept with a
warning. `private_dir`, `private_file` and `private_tree` give the store's files the same modes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from signet.config import CONFIG_FILE, render_agent_yaml
from signet.errors import ConfigError

__all__ = [
    "IDENTITY_FILES", "InitReport", "init_workspace", "private_dir", "private_file",
    "private_tree",
]

PRIVATE_DIR = 0o700
SHARED_DIR = 0o755
FILE_MODE = 0o600  # identity files and agent.yaml: about the user, for the user only

# Relative directory -> mode, parents before children.
DIRECTORIES: tuple[tuple[str, int], ...] = (
    ("memory", PRIVATE_DIR),
    ("memory/scripts", SHARED_DIR),
    ("skills", SHARED_DIR),
    (".secrets", PRIVATE_DIR),
    (".daemon", PRIVATE_DIR),
    (".daemon/logs", PRIVATE_DIR),
)

# The identity files harnesses load; their starter text lives in resources/workspace-<NAME>.
IDENTITY_FILES: tuple[str, ...] = ("AGENTS.md", "SOUL.md", "IDENTITY.md", "USER.md", "MEMORY.md")


@dataclass(frozen=True, slots=True)
class InitReport:
    """What `init_workspace` did: paths it created and existing paths it left alone."""

    workspace: Path
    created: tuple[Path, ...]
    kept: tuple[Path, ...]
    warnings: tuple[str, ...] = ()


def init_workspace(path: Path) -> InitReport:
    """Create whatever is missing of the workspace layout at `path`; never overwrite."""
    root = Path(path).expanduser().absolute()
    created: list[Path] = []
    kept: list[Path] = []
    _ensure_dir(root, PRIVATE_DIR, created, kept)
    for relative, mode in DIRECTORIES:
        _ensure_dir(root / relative, mode, created, kept)
    _ensure_file(root / CONFIG_FILE, render_agent_yaml(), created, kept)
    for name in IDENTITY_FILES:
        _ensure_file(root / name, _template(name), created, kept)
    warnings = [
        f"{folder} is open to other accounts (mode {folder.stat().st_mode & 0o777:o});"
        f" chmod 700 {folder} keeps them out"
        for folder in (root, root / "memory")
        if folder in kept and folder.stat().st_mode & 0o077
    ]
    return InitReport(root, tuple(created), tuple(kept), tuple(warnings))


def private_dir(path: Path) -> None:
    """Make `path` and any missing parents 0700 (chmod after mkdir: the umask cannot loosen
    them); a folder that exists keeps its mode."""
    missing = [p for p in (path, *path.parents) if not p.exists()]
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=PRIVATE_DIR)
        except FileExistsError:
            continue  # made meanwhile by someone else: theirs, as it is
        os.chmod(folder, PRIVATE_DIR)


def private_file(path: Path) -> None:
    """Create `path` empty and 0600 when absent; tighten it to 0600 when others could read it
    (its mode only, never its bytes). A symlink is left alone."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE))
    except FileExistsError:
        if path.is_file() and not path.is_symlink() and path.stat().st_mode & 0o077:
            os.chmod(path, FILE_MODE)
        return
    os.chmod(path, FILE_MODE)


def private_tree(root: Path) -> None:
    """Every folder under `root` (itself included) 0700, every file 0600; links untouched."""
    os.chmod(root, PRIVATE_DIR)
    for folder, dirs, files in os.walk(root):
        for name in dirs:
            if not os.path.islink(os.path.join(folder, name)):
                os.chmod(os.path.join(folder, name), PRIVATE_DIR)
        for name in files:
            if not os.path.islink(os.path.join(folder, name)):
                os.chmod(os.path.join(folder, name), FILE_MODE)


def _ensure_dir(path: Path, mode: int, created: list[Path], kept: list[Path]) -> None:
    if path.is_dir():
        kept.append(path)
        return
    if path.exists() or path.is_symlink():
        raise ConfigError(f"{path}: exists but is not a directory; move it aside and run init again")
    path.mkdir(mode=mode, parents=True)
    os.chmod(path, mode)
    created.append(path)


def _ensure_file(path: Path, text: str, created: list[Path], kept: list[Path]) -> None:
    # O_EXCL makes "create only if absent" one step, so a file appearing meanwhile is never
    # truncated.
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:
        kept.append(path)
        if path.is_file() and not path.is_symlink() and path.stat().st_mode & 0o077:
            os.chmod(path, FILE_MODE)  # readable by others: tightened, content untouched
        return
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.chmod(path, FILE_MODE)
    created.append(path)


def _template(name: str) -> str:
    return resources.files("signet").joinpath("resources").joinpath(f"workspace-{name}").read_text("utf-8")
