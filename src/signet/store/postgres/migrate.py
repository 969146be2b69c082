"""Numbered migrations for the PostgreSQL store (`store/postgres/migrations/`, their own numbering),
with store/migrate.py's rules: each once, in its own transaction with its recorded checksum; an
edited file is `MigrationTampered`, a newer database `SchemaTooNew`. The whole check-and-apply
runs under a session advisory lock, so of several daemons starting at once exactly one applies.
"""

from __future__ import annotations

import time

import psycopg

from signet.store import migrate as sqlite_migrate
from signet.store.migrate import Migration, applied
from signet.types import utc_now

# pg_advisory_lock key: any constant unique to "Signet migrations" (the bytes of 'sgnt-mig').
MIGRATION_LOCK = 0x73676E742D6D6967

_BOOTSTRAP = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version    integer PRIMARY KEY,
    name       text NOT NULL,
    checksum   text NOT NULL,
    applied_at text NOT NULL,
    duration_ms double precision NOT NULL DEFAULT 0
)
"""


def bundled_migrations() -> list[Migration]:
    return sqlite_migrate.bundled_migrations("signet.store.postgres")


def migrate(conn: psycopg.Connection, migrations: list[Migration] | None = None) -> list[int]:
    """Apply every pending migration in order under the advisory lock; return those applied.
    `conn` must be in autocommit mode (each migration opens its own transaction)."""
    migrations = migrations if migrations is not None else bundled_migrations()
    conn.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK,))
    try:
        conn.execute(_BOOTSTRAP)
        return sqlite_migrate.run_pending(
            applied(conn), migrations, lambda m: _apply(conn, m), where="PostgreSQL store",
            tree="postgres ")
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK,))


def _apply(conn: psycopg.Connection, migration: Migration) -> None:
    started = time.perf_counter()
    with conn.transaction():
        # One execute with the whole script: PostgreSQL runs the statements in order, and DDL
        # is transactional, so a failure leaves nothing half-applied.
        conn.execute(migration.sql.encode("utf-8"))
        conn.execute(
            "INSERT INTO schema_migrations (version, name, checksum, applied_at, duration_ms)"
            " VALUES (%s, %s, %s, %s, %s)",
            (migration.version, migration.name, migration.checksum, utc_now(),
             (time.perf_counter() - started) * 1000),
        )
