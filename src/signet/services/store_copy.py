"""`signet store migrate --to/--from postgres://...`: a workspace's core state between SQLite and
PostgreSQL.

The policy around store/postgres/copy.py: the source is the workspace's database brought to the
current schema first (so every column the copy reads exists), the target is migrated by opening
it as a store, and the result is verified table by table (counts and hashes). The copy is
resumable: run it again after an interruption and it continues.
"""

from __future__ import annotations

from signet.config import Config
from signet.errors import NotFound
from signet.store.db import Store
from signet.store.postgres.copy import CopyReport, Progress, copy_to_postgres, copy_to_sqlite
from signet.store.postgres.core import PostgresCore
from signet.store.signing_key import workspace_key_path


def migrate_to_postgres(
    config: Config, url: str, *, batch: int = 1000, progress: Progress | None = None
) -> CopyReport:
    if not config.db_path.is_file():
        raise NotFound(f"no SQLite database to copy at {config.db_path}")
    Store.open(config.db_path).close()  # the source at the current schema
    core = PostgresCore.open(url, max_size=1)
    try:
        with core.pool.connection() as conn:
            return copy_to_postgres(
                config.db_path, conn, key_path=workspace_key_path(config.workspace),
                batch=batch, progress=progress,
            )
    finally:
        core.close()


def migrate_to_sqlite(
    config: Config, url: str, *, batch: int = 1000, progress: Progress | None = None
) -> CopyReport:
    """The PostgreSQL store's core tables into the workspace's SQLite store (created if
    missing), verified; the store's signing key becomes the workspace's key file."""
    core = PostgresCore.open(url, max_size=1)
    try:
        store = Store.open(config.db_path)
        try:
            with core.pool.connection() as conn:
                return copy_to_sqlite(
                    conn, store, key_path=workspace_key_path(config.workspace), batch=batch,
                    progress=progress,
                )
        finally:
            store.close()
    finally:
        core.close()
