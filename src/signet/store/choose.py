"""The one place the store backend is chosen: `store.backend` opens SQLite or PostgreSQL."""

from __future__ import annotations

from pathlib import Path

from signet.config import StoreConfig
from signet.errors import ConfigError
from signet.store.backend import Backend
from signet.store.sqlite_backend import SqliteBackend


def open_backend(config: StoreConfig, *, sqlite_path: Path, key_path: Path) -> Backend:
    """The configured backend. `sqlite_path` and `key_path` are the workspace's database and
    signing-key file, used by the sqlite backend only."""
    if config.backend == "sqlite":
        return SqliteBackend.open(sqlite_path, key_path)
    if not config.url:
        raise ConfigError("store.backend postgres needs store.url or SIGNET_STORE_URL")
    try:
        from signet.store.postgres.backend import PostgresBackend
    except ImportError as exc:  # the optional extra is not installed
        raise ConfigError(
            "store.backend postgres needs the postgres extra: pip install 'signet-memory[postgres]'"
            f" ({exc})"
        ) from exc
    return PostgresBackend.open(config.url)
