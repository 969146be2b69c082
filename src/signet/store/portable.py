"""SQL for export and import: every data table as rows of plain values, each after the tables it
references. Derived tables (FTS, the source index) and operational or secret ones (jobs, tokens,
idempotency keys, migrations, caches, logs) stay behind; a table a later migration adds travels
unchanged. Import uses INSERT OR IGNORE, so a re-import adds nothing, and skips rows whose parent
was not inserted. Both backends speak SQLite's values, so a bundle from either imports into the
other.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import sqlean as sqlite3

from signet.errors import InvalidInput, StoreError
from signet.store.connection import Connection
from signet.store.db import Store

NOT_EXPORTED = frozenset({
    "sqlite_sequence", "sqlite_stat1", "schema_migrations", "schema_migrations_audit",
    "tokens", "login_codes", "idempotency_keys", "idempotency_scoped_keys", "memory_jobs",
    "summary_jobs", "umap_cache",
    "memory_sources", "maintenance_runs", "maintenance_actions", "maintenance_requeues",
    "memory_search_telemetry", "lexical_log",
    "signing_keys",  # PostgreSQL's token signing key: a secret (SQLite keeps it in a file)
})
BLOB = "$b64"


@dataclass(frozen=True, slots=True)
class Table:
    name: str
    columns: tuple[str, ...]
    key: tuple[str, ...]  # primary key columns
    references: tuple[tuple[str, str, str], ...]  # (column, parent table, parent column)
    # An INTEGER key that only numbers rows of a table with a natural unique key of its own
    # (embeddings: content_hash) is left to the target, so ids cannot collide there.
    renumber: bool = False


class Snapshot(Protocol):
    """One consistent moment of a store, read table by table."""

    def tables(self) -> list[Table]: ...

    def rows(self, table: Table) -> Iterator[dict[str, Any]]: ...


class PortableStore(Protocol):
    """What export and import need of a store: a snapshot to read, and batches to insert."""

    @property
    def backend(self) -> str: ...

    def snapshot(self) -> AbstractContextManager[Snapshot]:
        """One read transaction for the whole export."""
        ...

    def tables(self) -> list[Table]:
        """The target's exported tables, parents first."""
        ...

    def insert(
        self, table: Table, items: Sequence[dict[str, Any]], skipped: dict[str, set[Any]]
    ) -> int:
        """Insert a batch in one write transaction (as `insert` below); rows inserted."""
        ...


@dataclass(frozen=True, slots=True)
class _SqliteSnapshot:
    conn: Connection

    def tables(self) -> list[Table]:
        return tables(self.conn)

    def rows(self, table: Table) -> Iterator[dict[str, Any]]:
        return rows(self.conn, table)


@dataclass(frozen=True, slots=True)
class SqlitePortable:
    """The portable protocol on a workspace's Store: the functions below, unchanged."""

    store: Store
    backend: str = "sqlite"

    @contextmanager
    def _snapshot(self) -> Iterator[Snapshot]:
        conn = self.store.reader()
        conn.execute("BEGIN")  # one snapshot for every table
        try:
            yield _SqliteSnapshot(conn)
        finally:
            conn.execute("COMMIT")

    def snapshot(self) -> AbstractContextManager[Snapshot]:
        return self._snapshot()

    def tables(self) -> list[Table]:
        return tables(self.store.reader())

    def insert(
        self, table: Table, items: Sequence[dict[str, Any]], skipped: dict[str, set[Any]]
    ) -> int:
        with self.store.write_tx() as conn:
            return insert(conn, table, items, skipped)


def tables(conn: Connection) -> list[Table]:
    """The exported tables, parents before children."""
    rows = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall()
    virtual = [r[0] for r in rows if (r[1] or "").upper().startswith("CREATE VIRTUAL")]
    names = [
        r[0] for r in rows
        if r[0] not in NOT_EXPORTED and r[0] not in virtual and not r[0].startswith("sqlite_")
        and not any(r[0].startswith(f"{v}_") for v in virtual)
    ]
    found = {name: _table(conn, name) for name in names}
    return ordered(found)


def _table(conn: Connection, name: str) -> Table:
    info = conn.execute(f"PRAGMA table_info({_q(name)})").fetchall()
    columns = tuple(r["name"] for r in info)
    key = tuple(r["name"] for r in sorted(info, key=lambda r: r["pk"]) if r["pk"])
    fks = conn.execute(f"PRAGMA foreign_key_list({_q(name)})").fetchall()
    refs = implied_references(
        name, columns, tuple((r["from"], r["table"], r["to"] or "id") for r in fks))
    integer_key = len(key) == 1 and any(
        r["name"] == key[0] and r["type"].upper() == "INTEGER" for r in info)
    natural = any(
        r["unique"] and r["origin"] == "u"
        for r in conn.execute(f"PRAGMA index_list({_q(name)})").fetchall()
    )
    return Table(name, columns, key, refs, renumber=integer_key and natural)


def implied_references(
    name: str, columns: Sequence[str], refs: tuple[tuple[str, str, str], ...]
) -> tuple[tuple[str, str, str], ...]:
    """The foreign keys plus the memory a `memory_id` column names without one: memory_history
    (and the like) outlive a purge, so they have no foreign key; on import they still belong
    to that memory."""
    if name != "memories" and "memory_id" in columns and all(r[0] != "memory_id" for r in refs):
        return (*refs, ("memory_id", "memories", "id"))
    return refs


def ordered(found: dict[str, Table]) -> list[Table]:
    """The tables, parents before children (memories first)."""
    done: list[Table] = []
    placed: set[str] = set()

    def place(name: str, path: tuple[str, ...] = ()) -> None:
        if name in placed or name not in found or name in path:
            return
        for _col, parent, _pcol in found[name].references:
            place(parent, (*path, name))
        placed.add(name)
        done.append(found[name])

    for name in sorted(found, key=lambda n: (n != "memories", n)):
        place(name)
    return done


def rows(conn: Connection, table: Table, batch: int = 1000) -> Iterator[dict[str, Any]]:
    """Every row of `table` as JSON-ready values (BLOBs as {"$b64": ...}), by rowid."""
    cols = ", ".join(_q(c) for c in table.columns)
    cursor = conn.execute(f"SELECT {cols} FROM {_q(table.name)}")
    while chunk := cursor.fetchmany(batch):
        for row in chunk:
            yield {c: _encode(row[i]) for i, c in enumerate(table.columns)}


def insert(
    conn: Connection, table: Table, items: Sequence[dict[str, Any]],
    skipped: dict[str, set[Any]],
) -> int:
    """Insert what is new; return how many rows went in. `skipped` maps a table to the key
    values of its rows that did not (filled here for this table, read for its parents)."""
    own = skipped.setdefault(table.name, set())
    inserted = 0
    for item in items:
        values = {c: _decode(item[c], table.name) for c in table.columns if c in item}
        if orphan(values, table, skipped):
            own.add(key_of(values, table))
            continue
        # Only the columns the bundle has: a bundle from an older schema leaves the newer
        # columns to their defaults.
        cols = [c for c in values if not (table.renumber and c == table.key[0])]
        sql = (f"INSERT OR IGNORE INTO {_q(table.name)} ({', '.join(_q(c) for c in cols)})"
               f" VALUES ({', '.join('?' * len(cols))})")
        try:
            added = conn.execute(sql, [values[c] for c in cols]).rowcount == 1
        except (sqlite3.InterfaceError, sqlite3.IntegrityError) as exc:
            # A value that is no SQL value (a list, an object) or a row naming a parent the
            # bundle does not hold: the bundle is damaged or hand-made; say which row.
            raise InvalidInput(
                f"{table.name}: the row {key_of(values, table)!r} cannot be imported: {exc}"
            ) from exc
        if added:
            inserted += 1
        else:
            own.add(key_of(values, table))
    return inserted


def orphan(values: dict[str, Any], table: Table, skipped: dict[str, set[Any]]) -> bool:
    for column, parent, _pcol in table.references:
        if values.get(column) is not None and values[column] in skipped.get(parent, ()):
            return True
    return False


def key_of(values: dict[str, Any], table: Table) -> Any:
    if len(table.key) == 1:
        return values.get(table.key[0])
    return tuple(values.get(c) for c in table.key)


def backup(conn: Connection, path: Path) -> None:
    """SQLite's online backup API into a new file at `path`: a consistent copy of one moment,
    taken while other connections keep writing. The copy uses a rollback journal (no -wal file
    beside it), so the one file is the whole backup."""
    try:
        target = sqlite3.connect(str(path), isolation_level=None)
    except sqlite3.OperationalError as exc:  # "unable to open database file": no such folder
        raise OSError(f"cannot create {path} ({exc})") from exc
    try:
        conn.backup(target)
        target.execute("PRAGMA journal_mode = DELETE")
        if target.execute("PRAGMA integrity_check").fetchone()[0] != "ok":
            raise StoreError(f"the backup at {path} failed its integrity check")
    finally:
        target.close()


def _encode(value: Any) -> Any:
    if isinstance(value, bytes | bytearray | memoryview):
        return {BLOB: base64.b64encode(bytes(value)).decode("ascii")}
    return value


def encode(value: Any) -> Any:
    """A value as the bundle holds it (bytes as {"$b64": ...})."""
    return _encode(value)


def decode(value: Any, table: str) -> Any:
    """A bundle's value back (a {"$b64": ...} as bytes); InvalidInput naming `table` when
    it is not base64."""
    return _decode(value, table)


def _decode(value: Any, table: str) -> Any:
    if isinstance(value, dict) and set(value) == {BLOB}:
        try:
            return base64.b64decode(value[BLOB], validate=True)
        except (binascii.Error, TypeError) as exc:
            raise InvalidInput(f"{table}: a {BLOB} value is not base64: {exc}") from exc
    return value


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
