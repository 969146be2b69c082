"""Paths a caller names (a skill to install, a folder to import), looked up so the system's errors
become the caller's: a name that cannot be there is "not found", any other failure a refusal
naming the reason, never a server error. `Path.exists()` lets some errors out (ENAMETOOLONG),
which would be a 500.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from signet.errors import InvalidInput

__all__ = ["leads_out", "lookup", "shown"]

# Nothing can be at such a path: the caller hears "not found".
_ABSENT = {errno.ENOENT, errno.ENOTDIR, errno.ENAMETOOLONG, errno.ELOOP}


def lookup(path: Path) -> os.stat_result | None:
    """The path's stat, or None when nothing can be there; InvalidInput naming the reason
    for any other failure (no permission, an embedded NUL)."""
    try:
        return path.stat()
    except OSError as exc:
        if exc.errno in _ABSENT:
            return None
        raise InvalidInput(f"{shown(path)}: cannot be read ({exc.strerror or exc})") from None
    except ValueError as exc:
        raise InvalidInput(f"{shown(path)}: not a usable path ({exc})") from None


def shown(path: Path) -> str:
    """The path for a message, cut when it is very long."""
    text = str(path)
    return text if len(text) <= 200 else f"{text[:200]}..."


def leads_out(path: Path, root: Path) -> bool:
    """Whether `path`, a symlink under `root`, resolves outside `root` (resolved too), or to a
    folder holding the link itself (a cycle); a broken or looping link leads nowhere safe."""
    try:
        target = path.resolve(strict=True)
        base = root.resolve(strict=True)
    except (OSError, RuntimeError):
        return True
    if not target.is_relative_to(base):
        return True
    return target.is_dir() and path.parent.resolve().is_relative_to(target)
