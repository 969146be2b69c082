"""Numbered schema migrations (`store/migrations/NNN_name.sql`), applied once each and never edited
after they land.

Each runs in one transaction with the `schema_migrations` row recording its version, name and
checksum. On every open the checksums are compared: a file changed after it was applied is refused
(`MigrationTampered`), and a database with a newer version than this Signet knows is refused too
(`SchemaTooNew`).
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources

from signet.errors import MigrationTampered, SchemaTooNew
from signet.store.connection import Connection
from signet.store.dialect import Executes
from signet.types import utc_now

_NAME = re.compile(r"^(\d{3})_([a-z0-9_]+)\.sql$")

_BOOTSTRAP = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    checksum TEXT NOT NULL,
    applied_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS schema_migrations_audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    version INTEGER NOT NULL,
    name TEXT NOT NULL,
    duration_ms REAL NOT NULL,
    applied_at TEXT NOT NULL
);
"""


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode("utf-8")).hexdigest()


def bundled_migrations(package: str = "signet.store") -> list[Migration]:
    """The numbered migrations shipped in `package`'s migrations folder (the SQLite tree by
    default; store/postgres/migrate.py reads its own), in order."""
    folder = resources.files(package) / "migrations"
    found = []
    for entry in folder.iterdir():
        match = _NAME.match(entry.name)
        if match:
            found.append(Migration(int(match.group(1)), match.group(2), entry.read_text("utf-8")))
    return sorted(found, key=lambda m: m.version)


def applied(conn: Executes) -> dict[int, str]:
    """Version -> checksum of the migrations the database has applied (both backends)."""
    rows = conn.execute("SELECT version, checksum FROM schema_migrations").fetchall()
    return {int(r[0]): str(r[1]) for r in rows}


def pending(conn: Connection, migrations: list[Migration] | None = None) -> list[Migration]:
    conn.executescript(_BOOTSTRAP)
    done = applied(conn)
    return [m for m in (migrations or bundled_migrations()) if m.version not in done]


def migrate(conn: Connection, migrations: list[Migration] | None = None) -> list[int]:
    """Apply every pending migration in order; return the versions applied."""
    migrations = migrations if migrations is not None else bundled_migrations()
    conn.executescript(_BOOTSTRAP)
    return run_pending(applied(conn), migrations, lambda m: _apply(conn, m))


def run_pending(
    done: dict[int, str], migrations: list[Migration], apply: Callable[[Migration], None],
    *, where: str = "database", tree: str = "",
) -> list[int]:
    """Check the applied migrations against `migrations`, then `apply` each pending one in
    order; return the versions applied. SchemaTooNew when the database is ahead of this
    Signet, MigrationTampered when an applied file changed (`where`, `tree`: how the messages
    name the database and the migration folder)."""
    known = {m.version: m for m in migrations}
    latest = max(known, default=0)
    for version, checksum in sorted(done.items()):
        migration = known.get(version)
        if migration is None:
            if version > latest:
                raise SchemaTooNew(
                    f"{where} has migration {version}, newer than this Signet knows "
                    f"(latest {latest}); upgrade Signet"
                )
            continue
        if migration.checksum != checksum:
            raise MigrationTampered(
                f"{tree}migration {version:03d}_{migration.name}.sql changed after it was applied "
                f"(recorded checksum {checksum[:12]}, file {migration.checksum[:12]}); "
                "migrations are never edited: restore the file and add a new migration"
            )
    ran = []
    for migration in migrations:
        if migration.version not in done:
            apply(migration)
            ran.append(migration.version)
    return ran


def _apply(conn: Connection, migration: Migration) -> None:
    started = time.perf_counter()
    now = utc_now()
    conn.execute("BEGIN IMMEDIATE")
    try:
        # executescript would commit our transaction first; run statement by statement instead.
        for statement in _split(migration.sql):
            conn.execute(statement)
        conn.execute(
            "INSERT INTO schema_migrations(version, name, checksum, applied_at) VALUES (?,?,?,?)",
            (migration.version, migration.name, migration.checksum, now),
        )
        conn.execute(
            "INSERT INTO schema_migrations_audit(version, name, duration_ms, applied_at) "
            "VALUES (?,?,?,?)",
            (migration.version, migration.name, (time.perf_counter() - started) * 1000, now),
        )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def _split(sql: str) -> list[str]:
    """Split a script into complete statements (triggers hold inner semicolons)."""
    import sqlean

    statements, buffer = [], ""
    for line in sql.splitlines(keepends=True):
        buffer += line
        if sqlean.complete_statement(buffer):
            if buffer.strip():
                statements.append(buffer.strip())
            buffer = ""
    if buffer.strip() and not buffer.strip().startswith("--"):
        statements.append(buffer.strip())
    return statements
