"""The folders where each harness keeps its own transcripts, and whether a path lies inside one. The
daemon reads a hook's `transcript_path` with its own rights, so for a caller without admin the
read is confined to these folders, judged after resolving every symlink and `..`. Cursor's are
only `agent-transcripts/`, as its project folders also hold terminal output and tool results. The
environment is the daemon's, read at each call.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["transcript_file", "transcript_folders"]

CURSOR_TRANSCRIPTS = "agent-transcripts"  # in each ~/.cursor/projects/<project>/


def transcript_folders(harness: str, env: Mapping[str, str] | None = None) -> tuple[Path, ...]:
    """The folders `harness` writes its transcripts to on this host (none for generic)."""
    env = os.environ if env is None else env
    home = Path(env.get("HOME") or Path.home())
    if harness == "claude-code":
        return (_under(env, "CLAUDE_CONFIG_DIR", home / ".claude") / "projects",)
    if harness == "codex":
        return (_under(env, "CODEX_HOME", home / ".codex") / "sessions",)
    if harness == "opencode":
        return (_under(env, "XDG_DATA_HOME", home / ".local" / "share") / "opencode",)
    if harness == "cursor":
        return (home / ".cursor" / "projects",)
    return ()


def transcript_file(path: str, harness: str, env: Mapping[str, str] | None = None) -> Path | None:
    """`path` resolved (symlinks and `..` followed) when it is an existing regular file inside
    one of the harness's transcript folders; None otherwise, whatever the reason."""
    candidate = Path(path)
    if not candidate.is_absolute():
        return None
    try:
        resolved = candidate.resolve(strict=True)
        if not resolved.is_file():
            return None
        roots = [folder.resolve() for folder in transcript_folders(harness, env)]
    except (OSError, RuntimeError, ValueError):
        return None
    inside = any(resolved.is_relative_to(root) and _transcript_place(resolved.relative_to(root), harness)
                 for root in roots)
    return resolved if inside else None


def _transcript_place(relative: Path, harness: str) -> bool:
    """Whether a file at `relative` (to a transcript folder) is where `harness` writes its
    transcripts: for Cursor, `<project>/agent-transcripts/...`; anywhere for the others."""
    if harness == "cursor":
        return len(relative.parts) >= 3 and relative.parts[1] == CURSOR_TRANSCRIPTS
    return True


def _under(env: Mapping[str, str], name: str, default: Path) -> Path:
    value = (env.get(name) or "").strip()
    return Path(value) if value and Path(value).is_absolute() else default
