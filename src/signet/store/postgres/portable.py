"""Export and import (`PortableStore`) on PostgreSQL. Tables, keys and foreign keys come from the
catalog, less `NOT_EXPORTED`; rows travel in SQLite's spelling (0/1, JSON text, float32 bytes),
so bundles cross backends. Export is one REPEATABLE READ, READ ONLY transaction; import inserts
batches with `ON CONFLICT DO NOTHING`, skipping rows whose parent was skipped.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import psycopg
from psycopg import sql
from psycopg_pool import ConnectionPool

from signet.errors import InvalidInput
from signet.store.portable import (
    NOT_EXPORTED,
    Snapshot,
    Table,
    decode,
    encode,
    implied_references,
    key_of,
    ordered,
    orphan,
)
from signet.store.postgres import vectors
from signet.store.postgres.vectors import literal

_BATCH = 1000
_SCALARS = frozenset({"text", "integer", "bigint", "smallint", "double precision", "real"})


@dataclass(frozen=True, slots=True)
class _Columns:
    """How each exported column of a table is read and written on this backend."""

    types: dict[str, str]  # column -> format_type (vector, jsonb, boolean, ...)
    identity_key: bool  # the key is an identity column (inserted with OVERRIDING SYSTEM VALUE)


def _catalog(conn: psycopg.Connection) -> tuple[list[Table], dict[str, _Columns]]:
    names = [r[0] for r in conn.execute(
        "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE c.relkind IN ('r', 'p') AND n.nspname = current_schema()"
        " AND NOT c.relispartition"
    ).fetchall() if r[0] not in NOT_EXPORTED and r[0] != "schema_migrations"]
    found: dict[str, Table] = {}
    kinds: dict[str, _Columns] = {}
    for name in names:
        found[name], kinds[name] = _table(conn, name)
    return ordered(found), kinds


def _table(conn: psycopg.Connection, name: str) -> tuple[Table, _Columns]:
    rel = sql.Identifier(name).as_string(conn)
    attrs = conn.execute(
        "SELECT attname, format_type(atttypid, atttypmod), attgenerated <> '', attidentity <> ''"
        " FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped"
        " ORDER BY attnum", (rel,),
    ).fetchall()
    key = tuple(r[0] for r in conn.execute(
        "SELECT a.attname FROM pg_index i, unnest(i.indkey) WITH ORDINALITY AS k(attnum, pos)"
        " JOIN pg_attribute a ON a.attnum = k.attnum WHERE i.indrelid = %s::regclass"
        " AND i.indisprimary AND a.attrelid = i.indrelid ORDER BY k.pos", (rel,),
    ).fetchall())
    identity = {r[0] for r in attrs if r[3]}
    columns = tuple(r[0] for r in attrs if not r[2] and (r[0] not in identity or r[0] in key))
    types = {r[0]: r[1] for r in attrs if r[0] in columns}
    fks = conn.execute(
        "SELECT a.attname, p.relname, pa.attname FROM pg_constraint c"
        " JOIN pg_class p ON p.oid = c.confrelid"
        " JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]"
        " JOIN pg_attribute pa ON pa.attrelid = c.confrelid AND pa.attnum = c.confkey[1]"
        " WHERE c.conrelid = %s::regclass AND c.contype = 'f' AND cardinality(c.conkey) = 1",
        (rel,),
    ).fetchall()
    refs = implied_references(name, columns, tuple((r[0], r[1], r[2]) for r in fks))
    natural = conn.execute(
        "SELECT EXISTS (SELECT 1 FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid"
        " AND a.attnum = i.indkey[0] WHERE i.indrelid = %s::regclass AND i.indisunique"
        " AND NOT i.indisprimary AND i.indpred IS NULL AND a.attidentity = '')", (rel,),
    ).fetchone()
    integer_key = len(key) == 1 and types.get(key[0]) in ("integer", "bigint")
    table = Table(name, columns, key, refs, renumber=bool(integer_key and natural and natural[0]))
    return table, _Columns(types, identity_key=len(key) == 1 and key[0] in identity)


def _read(column: str, kind: str) -> sql.Composable:
    """The select expression giving a column's value in SQLite's spelling."""
    ident = sql.Identifier(column)
    if kind == "boolean":
        return sql.SQL("{}::int").format(ident)
    if kind == "vector" or kind.startswith("vector("):
        return sql.SQL("{}::real[]").format(ident)
    if kind in _SCALARS or kind == "bytea":
        return ident
    return sql.SQL("{}::text").format(ident)  # json, jsonb and anything else as text


def _exported(value: Any, kind: str) -> Any:
    if (kind == "vector" or kind.startswith("vector(")) and value is not None:
        return encode(np.asarray(value, dtype="<f4").tobytes())
    return encode(value)


def _written(value: Any, kind: str, table: str) -> Any:
    """A bundle's value as this column takes it."""
    value = decode(value, table)
    if value is None:
        return None
    if kind == "boolean":
        return bool(value)
    if kind == "vector" or kind.startswith("vector("):
        if not isinstance(value, bytes):
            raise InvalidInput(f"{table}: a vector is not float32 bytes")
        return literal(np.frombuffer(value, dtype="<f4"))
    if kind in ("json", "jsonb") and not isinstance(value, str):
        return json.dumps(value)
    return value


class _PgSnapshot:
    def __init__(self, conn: psycopg.Connection) -> None:
        self.conn = conn
        self._tables, self._kinds = _catalog(conn)

    def tables(self) -> list[Table]:
        return self._tables

    def rows(self, table: Table) -> Iterator[dict[str, Any]]:
        types = self._kinds[table.name].types
        order = table.key or table.columns
        query = sql.SQL("SELECT {} FROM {} ORDER BY {}").format(
            sql.SQL(", ").join(_read(c, types[c]) for c in table.columns),
            sql.Identifier(table.name), sql.SQL(", ").join(map(sql.Identifier, order)))
        with self.conn.cursor(name=f"export_{table.name}") as cursor:
            cursor.execute(query)
            while chunk := cursor.fetchmany(_BATCH):
                for row in chunk:
                    yield {c: _exported(row[i], types[c]) for i, c in enumerate(table.columns)}


class PostgresPortable:
    """The portable protocol on a shared database (PostgresCore's pool)."""

    backend = "postgres"

    def __init__(self, pool: ConnectionPool) -> None:
        self.pool = pool

    @contextmanager
    def _snapshot(self) -> Iterator[Snapshot]:
        with self.pool.connection() as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            yield _PgSnapshot(conn)

    def snapshot(self) -> AbstractContextManager[Snapshot]:
        return self._snapshot()

    def tables(self) -> list[Table]:
        with self.pool.connection() as conn:
            return _catalog(conn)[0]

    def insert(
        self, table: Table, items: Sequence[dict[str, Any]], skipped: dict[str, set[Any]]
    ) -> int:
        own = skipped.setdefault(table.name, set())
        inserted = 0
        with self.pool.connection() as conn:
            kinds = _table(conn, table.name)[1]
            try:
                with conn.transaction():
                    for item in items:
                        values = {c: _written(item[c], kinds.types[c], table.name)
                                  for c in table.columns if c in item}
                        if orphan(values, table, skipped):
                            own.add(key_of(values, table))
                        elif _insert_row(conn, table, kinds, values):
                            inserted += 1
                        else:
                            own.add(key_of(values, table))
                    if kinds.identity_key and not table.renumber and inserted:
                        _advance_identity(conn, table.name, table.key[0])
                if table.name == "embeddings":  # the search's HNSW index for what arrived
                    for dimensions in {i.get("dimensions") for i in items}:
                        if isinstance(dimensions, int):
                            vectors.ensure_index(conn, dimensions)
            except (psycopg.errors.DataError, psycopg.errors.IntegrityError,
                    psycopg.errors.SyntaxErrorOrAccessRuleViolation) as exc:
                # A value of the wrong type, a row naming a parent the bundle does not hold:
                # the bundle is damaged or hand-made; say which table (the batch is undone).
                raise InvalidInput(
                    f"{table.name}: a row cannot be imported: {str(exc).splitlines()[0]}"
                ) from exc
        return inserted


def _insert_row(
    conn: psycopg.Connection, table: Table, kinds: _Columns, values: dict[str, Any]
) -> bool:
    cols = [c for c in values if not (table.renumber and c == table.key[0])]
    statement = sql.SQL("INSERT INTO {} ({}) {}VALUES ({}) ON CONFLICT DO NOTHING").format(
        sql.Identifier(table.name), sql.SQL(", ").join(map(sql.Identifier, cols)),
        sql.SQL("OVERRIDING SYSTEM VALUE " if kinds.identity_key and not table.renumber
                else ""),
        sql.SQL(", ").join(sql.SQL("%s::" + kinds.types[c]) for c in cols),
    )
    return conn.execute(statement, [values[c] for c in cols]).rowcount == 1


def _advance_identity(conn: psycopg.Connection, table: str, column: str) -> None:
    """Keys inserted with their values: the identity's next value goes past the largest."""
    conn.execute(
        sql.SQL("SELECT setval(pg_get_serial_sequence(%s, %s), (SELECT max({}) FROM {}))").format(
            sql.Identifier(column), sql.Identifier(table)),
        (sql.Identifier(table).as_string(conn), column),
    )
