"""Copy a SQLite workspace's tables (copy_tables.py) into a PostgreSQL store (and back), then verify.
Rows go in batches, each its own transaction with `ON CONFLICT DO NOTHING`, so a stopped run is
simply run again; each table's row count and a SHA-256 over its rows must match on both sides,
and a source table not copied that holds rows is named as left behind, with why. Copy with the
daemon stopped (or from a `signet backup`).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import psycopg

from signet.store.connection import Connection, connect
from signet.store.db import Store
from signet.store.postgres.copy_tables import NOT_COPIED, NOT_STATE, TABLES, TableCopy
from signet.store.postgres.vectors import literal, parse
from signet.types import utc_now

Progress = Callable[[str, int, int], None]


@dataclass
class CopyReport:
    copied: dict[str, int] = field(default_factory=dict)  # rows inserted by this run
    counts: dict[str, tuple[int, int]] = field(default_factory=dict)  # (sqlite, postgres)
    mismatched: list[str] = field(default_factory=list)
    left_behind: dict[str, int] = field(default_factory=dict)  # not copied: table -> rows
    no_target_table: list[str] = field(default_factory=list)  # of those, absent on the target
    why: dict[str, str] = field(default_factory=dict)  # of those, why not copied
    signing_key: str = "absent"  # same (copied or already equal) | differs | absent

    @property
    def ok(self) -> bool:
        return not self.mismatched and self.signing_key != "differs"

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok, "copied": self.copied,
            "counts": {k: {"sqlite": a, "postgres": b} for k, (a, b) in self.counts.items()},
            "mismatched": self.mismatched, "left_behind": self.left_behind,
            "no_target_table": self.no_target_table, "why_not_copied": self.why,
            "signing_key": self.signing_key,
        }

    def leaving(self, rows: dict[str, int], on_target: Callable[[str], bool]) -> None:
        """Name the source's tables not copied that hold rows, and whether the target has
        each (`on_target`)."""
        self.left_behind = rows
        self.no_target_table = [name for name in rows if not on_target(name)]
        self.why = {name: NOT_COPIED.get(name, "not part of the copy") for name in rows}


def copy_to_postgres(
    sqlite_path: Path, pg: psycopg.Connection, *, key_path: Path | None = None,
    batch: int = 1000, progress: Progress | None = None,
) -> CopyReport:
    """Copy and verify; `pg` is an autocommit connection to a migrated PostgreSQL store."""
    report = CopyReport()
    source = connect(sqlite_path, read_only=True)
    try:
        present = _sqlite_tables(source)
        for table in TABLES:
            copied = 0
            if table.name in present:  # else a table SQLite makes only when its feature is on
                copied = _copy_table(source, pg, table, batch, progress)
            report.copied[table.name] = copied
        _verify(report, source, pg, present)
        report.leaving(_sqlite_left_behind(source, present), lambda name: _has_table(pg, name))
    finally:
        source.close()
    report.signing_key = _copy_key(pg, key_path)
    return report


def _copy_table(
    source: Connection, pg: psycopg.Connection, table: TableCopy, batch: int,
    progress: Progress | None,
) -> int:
    total = int(source.execute(f"SELECT count(*) FROM {table.name}").fetchone()[0])
    values = ", ".join(
        f"%s::{table.casts[c]}" if c in table.casts else "%s" for c in table.columns
    )
    overriding = " OVERRIDING SYSTEM VALUE" if table.identity else ""
    insert = (
        f"INSERT INTO {table.name} ({', '.join(table.columns)}){overriding} VALUES ({values})"
        " ON CONFLICT DO NOTHING"
    )
    inserted = done = 0
    key = table.key or ("rowid",)
    last: tuple[Any, ...] | None = None
    while True:
        rows = source.execute(
            f"SELECT {', '.join(key)}, {', '.join(table.columns)} FROM {table.name}"
            f"{_after(key, last, '?')} ORDER BY {', '.join(key)} LIMIT ?",
            (*(last or ()), batch),
        ).fetchall()
        if not rows:
            break
        last = tuple(rows[-1])[: len(key)]
        params = [_params(table, tuple(row)[len(key):]) for row in rows]
        with pg.transaction(), pg.cursor() as cur:
            cur.executemany(insert, params)
            inserted += max(cur.rowcount, 0)
        done += len(rows)
        if progress is not None:
            progress(table.name, done, total)
    if table.identity:  # the next generated id follows the copied ones
        pg.execute(
            f"SELECT setval(pg_get_serial_sequence('{table.name}', 'id'), max(id))"
            f" FROM {table.name} HAVING max(id) IS NOT NULL"
        )
    return inserted


def _after(key: tuple[str, ...], last: tuple[Any, ...] | None, mark: str) -> str:
    """The keyset condition of the next page (none for the first)."""
    if last is None:
        return ""
    return f" WHERE ({', '.join(key)}) > ({', '.join([mark] * len(key))})"


def _params(table: TableCopy, row: tuple[Any, ...]) -> list[Any]:
    out = list(row)
    for i, column in enumerate(table.columns):
        if column == "vector":
            out[i] = literal(np.frombuffer(row[i], dtype="<f4"))
        elif table.casts.get(column) == "boolean" and out[i] is not None:
            out[i] = bool(out[i])
    return out


def _digest(
    conn: Any, sql: str, vector: int | None, *, from_sqlite: bool
) -> tuple[int, str]:
    """(rows, sha256 over the sorted fingerprints); a vector (column `vector`) hashes as its
    float32 bytes, read from SQLite's BLOB or parsed from pgvector's text form."""
    lines = sorted(_fingerprint(row, vector, from_sqlite) for row in _rows(conn, sql))
    digest = hashlib.sha256()
    for line in lines:
        digest.update(line)
    return len(lines), digest.hexdigest()


def _rows(conn: Any, sql: str) -> Iterator[tuple[Any, ...]]:
    cursor = conn.execute(sql)
    while chunk := cursor.fetchmany(5000):
        yield from (tuple(r) for r in chunk)


def _fingerprint(row: Iterable[Any], vector: int | None, from_sqlite: bool) -> bytes:
    parts = []
    for i, value in enumerate(row):
        if i == vector:
            value = bytes(value).hex() if from_sqlite else _vector_hex(str(value))
        parts.append("\x00" if value is None else str(value))
    return ("\x1f".join(parts) + "\x1e").encode("utf-8")


def _vector_hex(text: str) -> str:
    """pgvector's text form back to the float32 bytes (hex) the SQLite BLOB holds."""
    return parse(text).astype("<f4", copy=False).tobytes().hex()


def _verify(report: CopyReport, sqlite: Any, pg: psycopg.Connection, present: set[str]) -> None:
    """Each table's count and digest on both sides (`present`: the tables SQLite has; one it
    lacks reads as empty)."""
    for table in TABLES:
        vector = 3 if table.name == "embeddings" else None  # the vector's position
        ours = (_digest(sqlite, table.fingerprint_sql[0], vector, from_sqlite=True)
                if table.name in present else (0, hashlib.sha256().hexdigest()))
        theirs = _digest(pg, table.fingerprint_sql[1], vector, from_sqlite=False)
        report.counts[table.name] = (ours[0], theirs[0])
        if ours != theirs:
            report.mismatched.append(table.name)


def _sqlite_tables(conn: Any) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _sqlite_left_behind(source: Any, present: set[str]) -> dict[str, int]:
    """SQLite's tables with rows that are not copied (its FTS indexes follow the rows)."""
    virtual = {
        r[0] for r in source.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'"
            " AND sql LIKE 'CREATE VIRTUAL TABLE%'")
    }
    names = [n for n in present - virtual if not n.startswith("sqlite_")]
    return _with_rows(source, [n for n in names if _reported(n)])


def _pg_left_behind(pg: psycopg.Connection) -> dict[str, int]:
    """PostgreSQL's tables with rows that are not copied back."""
    names = [str(r[0]) for r in pg.execute(
        "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()").fetchall()]
    return _with_rows(pg, [n for n in names if _reported(n)])


def _reported(name: str) -> bool:
    return (name not in {t.name for t in TABLES} and name not in NOT_STATE
            and "_fts" not in name and not name.endswith("_config"))


def _with_rows(conn: Any, names: list[str]) -> dict[str, int]:
    out = {}
    for name in sorted(names):
        rows = int(conn.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0])
        if rows:
            out[name] = rows
    return out


def _has_table(pg: psycopg.Connection, name: str) -> bool:
    row = pg.execute("SELECT to_regclass(%s) IS NOT NULL", (name,)).fetchone()
    return bool(row and row[0])


def _copy_key(pg: psycopg.Connection, key_path: Path | None) -> str:
    """The workspace's signing key becomes the store's, so tokens it issued keep working."""
    if key_path is None or not key_path.is_file():
        return "absent"
    key = key_path.read_bytes()
    pg.execute(
        "INSERT INTO signing_keys (name, secret, created_at) VALUES ('auth', %s, %s)"
        " ON CONFLICT (name) DO NOTHING",
        (key, utc_now()),
    )
    row = pg.execute("SELECT secret FROM signing_keys WHERE name = 'auth'").fetchone()
    return "same" if row is not None and bytes(row[0]) == key else "differs"


def copy_to_sqlite(
    pg: psycopg.Connection, store: Store, *, key_path: Path | None = None, batch: int = 1000,
    progress: Progress | None = None,
) -> CopyReport:
    """The tables of a PostgreSQL store into `store` (a workspace's SQLite), verified."""
    report = CopyReport()
    for table in TABLES:
        report.copied[table.name] = _copy_back(pg, store, table, batch, progress)
    present = _sqlite_tables(store.reader())
    _verify(report, store.reader(), pg, present)
    report.leaving(_pg_left_behind(pg), present.__contains__)
    report.signing_key = _key_back(pg, key_path)
    return report


def _copy_back(
    pg: psycopg.Connection, store: Store, table: TableCopy, batch: int,
    progress: Progress | None,
) -> int:
    total = int(_one(pg, f"SELECT count(*) FROM {table.name}"))
    if total and table.sqlite_create is not None:
        with store.write_tx() as conn:
            table.sqlite_create(conn)
    wanted = ", ".join(_readable(table, c) for c in table.columns)
    insert = (
        f"INSERT OR IGNORE INTO {table.name} ({', '.join(table.columns)})"
        f" VALUES ({', '.join('?' * len(table.columns))})"
    )
    inserted = done = 0
    key = table.key or (table.order,)
    last: tuple[Any, ...] | None = None
    while True:
        rows = pg.execute(
            f"SELECT {', '.join(key)}, {wanted} FROM {table.name}{_after(key, last, '%s')}"
            f" ORDER BY {', '.join(key)} LIMIT %s",
            [*(last or ()), batch],
        ).fetchall()
        if not rows:
            break
        last = tuple(rows[-1])[: len(key)]
        params = [_sqlite_params(table, tuple(row)[len(key):]) for row in rows]
        with store.write_tx() as conn:
            # The rows this statement inserted (total_changes would count the triggers' too).
            inserted += max(conn.executemany(insert, params).rowcount, 0)
        done += len(rows)
        if progress is not None:
            progress(table.name, done, total)
    return inserted


def _readable(table: TableCopy, column: str) -> str:
    cast = table.casts.get(column)
    if cast in ("jsonb", "vector"):
        return f"{column}::text"
    if cast == "boolean":
        return f"{column}::int"
    return column


def _sqlite_params(table: TableCopy, row: tuple[Any, ...]) -> list[Any]:
    out = list(row)
    for i, column in enumerate(table.columns):
        if column == "vector":
            out[i] = bytes.fromhex(_vector_hex(str(row[i])))
    return out


def _one(pg: psycopg.Connection, sql: str) -> Any:
    row = pg.execute(sql).fetchone()
    return row[0] if row else None


def _key_back(pg: psycopg.Connection, key_path: Path | None) -> str:
    row = pg.execute("SELECT secret FROM signing_keys WHERE name = 'auth'").fetchone()
    if row is None or key_path is None:
        return "absent"
    key = bytes(row[0])
    if not key_path.exists():
        key_path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(key)
    return "same" if key_path.read_bytes() == key else "differs"
