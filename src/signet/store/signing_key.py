"""The secret that signs API tokens, when it lives in a file (the sqlite backend).

`<workspace>/.secrets/auth.key`: 32 random bytes, mode 0600 in a 0700 directory, created
atomically (O_EXCL) the first time it is asked for, so two processes starting at once agree on
one key. On PostgreSQL the key is a row shared by every daemon (store/postgres/core.py).
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from signet.errors import ConfigError

SECRET_BYTES = 32


def workspace_key_path(workspace: Path) -> Path:
    """Where a workspace keeps its signing key."""
    return Path(workspace) / ".secrets" / "auth.key"


def file_key(path: Path) -> bytes:
    """The key in `path`, created (0600, in a 0700 directory) when missing."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        data = path.read_bytes()
        if len(data) < SECRET_BYTES:
            raise ConfigError(f"{path}: the auth secret is truncated; delete it to make a new one"
                              " (every issued token stops working)") from None
        return data
    with os.fdopen(fd, "wb") as handle:
        handle.write(secrets.token_bytes(SECRET_BYTES))
    os.chmod(path, 0o600)
    return path.read_bytes()
