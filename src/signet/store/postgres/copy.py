"""Copy a SQLite workspace's core tables into a PostgreSQL store (and back), then verify. Rows go in
batches, each its own transaction with `ON CONFLICT DO NOTHING`, so a stopped run is simply run
again; each table's row count and a SHA-256 over its rows must match on both sides, and a table
not copied is named as left behind. Copy with the daemon stopped (or from a `signet backup`).
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
from signet.store.postgres.vectors import literal, parse
from signet.types import utc_now

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True, slots=True)
class TableCopy:
    """One table: the columns copied, how a row becomes PostgreSQL parameters, and its
    fingerprint (the same text computed from either side)."""

    name: str
    columns: tuple[str, ...]
    order: str = "seq"  # the PostgreSQL column that gives insertion order (for copying back)
    casts: dict[str, str] = field(default_factory=dict)  # column -> SQL cast on insert
    fingerprint_sql: tuple[str, str] = ("", "")  # (sqlite select, postgres select)
    # Paged by these columns on both sides instead (rowid / `order`): a unique key.
    key: tuple[str, ...] = ()
    # An integer `id` PostgreSQL generates (GENERATED ALWAYS AS IDENTITY) that other rows cite
    # (history's coldId): copied as it is, then the identity moves past the highest.
    identity: bool = False


def _same(sql: str) -> tuple[str, str]:
    """A fingerprint select that reads the same on both sides."""
    return sql, sql


_MEMORY_COLUMNS = (
    "id", "content", "type", "category", "content_hash", "normalized_content", "confidence",
    "importance", "source_id", "source_type", "tags", "who", "why", "project", "agent_id",
    "session_id", "created_at", "updated_at", "event_at", "is_deleted", "deleted_at",
    "extraction_status", "embedding_model", "extraction_model", "update_count", "version",
    "last_accessed", "access_count", "pinned", "hints", "superseded_by",
)

TABLES: tuple[TableCopy, ...] = (
    TableCopy(
        "memories", _MEMORY_COLUMNS,
        casts={"tags": "jsonb", "is_deleted": "boolean", "pinned": "boolean"},
        fingerprint_sql=(
            "SELECT id, version, is_deleted, content FROM memories",
            "SELECT id, version, is_deleted::int, content FROM memories",
        ),
    ),
    TableCopy(
        "memory_history",
        ("id", "memory_id", "event", "old_content", "new_content", "changed_by", "reason",
         "metadata", "actor_type", "session_id", "request_id", "created_at", "token_id"),
        fingerprint_sql=_same("SELECT id, memory_id, event, new_content FROM memory_history"),
    ),
    TableCopy(
        "embeddings",
        ("content_hash", "vector", "dimensions", "model", "source_type", "source_id",
         "created_at", "stale"),
        order="id",
        casts={"vector": "vector", "stale": "boolean"},
        fingerprint_sql=(
            "SELECT content_hash, model, stale, vector FROM embeddings",
            "SELECT content_hash, model, stale::int, vector::text FROM embeddings",
        ),
    ),
    TableCopy(
        "memory_jobs",
        ("id", "memory_id", "job_type", "status", "payload", "result", "attempts",
         "max_attempts", "leased_at", "completed_at", "failed_at", "error", "document_id",
         "created_at", "updated_at", "run_after"),
        fingerprint_sql=_same("SELECT id, status, attempts, job_type FROM memory_jobs"),
    ),
    TableCopy(
        "session_transcripts",
        ("session_key", "content", "harness", "project", "agent_id", "created_at", "session_id",
         "raw_hash", "content_hash", "message_count", "started_at", "last_event_at", "ended_at",
         "path", "raw_path", "summary_status", "updated_at"),
        fingerprint_sql=_same(
            "SELECT session_key, content_hash, message_count, ended_at, summary_status"
            " FROM session_transcripts"
        ),
    ),
    TableCopy(
        "summary_jobs",
        ("id", "session_key", "session_id", "trigger", "harness", "project", "agent_id",
         "transcript", "status", "attempts", "max_attempts", "result", "error", "captured_at",
         "started_at", "ended_at", "leased_at", "completed_at", "created_at", "updated_at"),
        fingerprint_sql=_same("SELECT id, session_key, status, attempts FROM summary_jobs"),
    ),
    # The artifacts' index (derived from the markdown files, which stay in the workspace) and
    # the tombstones that keep a re-index from bringing a forgotten session back. Their key is
    # (agent, path|token): copied back in that order.
    TableCopy(
        "memory_artifacts",
        ("agent_id", "source_path", "source_sha256", "source_kind", "session_id", "session_key",
         "session_token", "project", "harness", "captured_at", "started_at", "ended_at",
         "manifest_path", "memory_sentence", "memory_sentence_quality", "content", "updated_at",
         "artifact_id", "thread_key", "condenses", "parent_path"),
        order="(agent_id || chr(31) || source_path)",
        fingerprint_sql=_same(
            "SELECT agent_id, source_path, source_sha256, parent_path FROM memory_artifacts"
        ),
    ),
    TableCopy(
        "memory_artifact_tombstones",
        ("agent_id", "session_token", "removed_at", "reason", "removed_paths"),
        order="(agent_id || chr(31) || session_token)",
        fingerprint_sql=_same(
            "SELECT agent_id, session_token, removed_paths FROM memory_artifact_tombstones"
        ),
    ),
    # Documents, their connectors and chunk links (after the memories they link; connectors
    # before the documents that name them).
    TableCopy(
        "connectors",
        ("id", "provider", "display_name", "config_json", "cursor_json", "status",
         "last_sync_at", "last_error", "created_at", "updated_at", "agent_id", "project"),
        fingerprint_sql=_same("SELECT id, status, cursor_json, updated_at FROM connectors"),
    ),
    TableCopy(
        "documents",
        ("id", "source_url", "source_type", "content_type", "content_hash", "title",
         "raw_content", "status", "error", "connector_id", "chunk_count", "memory_count",
         "metadata_json", "created_at", "updated_at", "completed_at", "agent_id", "project",
         "source_key"),
        fingerprint_sql=_same(
            "SELECT id, status, content_hash, memory_count, updated_at FROM documents"
        ),
    ),
    TableCopy(
        "document_memories",
        ("document_id", "memory_id", "chunk_index"),
        order="(document_id || chr(31) || memory_id)",
        fingerprint_sql=_same("SELECT document_id, memory_id, chunk_index FROM document_memories"),
    ),
    TableCopy(
        "tokens",
        ("id", "name", "role", "permissions", "scope_project", "scope_agent", "key_hash",
         "created_at", "expires_at", "revoked_at", "last_used_at"),
        order="id",
        fingerprint_sql=_same("SELECT id, key_hash, revoked_at, role FROM tokens"),
    ),
    # The knowledge graph (PostgreSQL migration 002_graph.sql), parents before children.
    TableCopy(
        "entities",
        ("id", "name", "entity_type", "description", "canonical_name", "mentions", "agent_id",
         "community_id", "created_at", "updated_at"),
        fingerprint_sql=_same(
            "SELECT id, canonical_name, agent_id, mentions, community_id FROM entities"),
    ),
    TableCopy(
        "entity_aliases", ("alias", "canonical_alias", "entity_id", "agent_id", "created_at"),
        key=("canonical_alias", "agent_id", "entity_id"),
        fingerprint_sql=_same("SELECT canonical_alias, agent_id, entity_id FROM entity_aliases"),
    ),
    TableCopy(
        "relations",
        ("id", "source_entity_id", "target_entity_id", "relation_type", "strength", "mentions",
         "confidence", "metadata", "created_at", "updated_at"),
        order="id",
        fingerprint_sql=_same(
            "SELECT id, source_entity_id, target_entity_id, relation_type, mentions FROM relations"),
    ),
    TableCopy(
        "memory_entity_mentions",
        ("memory_id", "entity_id", "mention_text", "confidence", "created_at"),
        key=("memory_id", "entity_id"),
        fingerprint_sql=_same("SELECT memory_id, entity_id FROM memory_entity_mentions"),
    ),
    TableCopy(
        "entity_aspects",
        ("id", "entity_id", "aspect_name", "description", "confidence", "weight", "agent_id",
         "created_at", "updated_at"),
        order="id",
        fingerprint_sql=_same("SELECT id, entity_id, aspect_name FROM entity_aspects"),
    ),
    TableCopy(
        "entity_attributes",
        ("id", "aspect_id", "entity_id", "kind", "attribute_key", "attribute_value",
         "confidence", "source_memory_id", "agent_id", "created_at", "updated_at"),
        order="id",
        fingerprint_sql=_same(
            "SELECT id, aspect_id, attribute_key, attribute_value FROM entity_attributes"),
    ),
    TableCopy(
        "entity_dependencies",
        ("id", "source_entity_id", "target_entity_id", "dependency_type", "strength",
         "traversal_weight", "metadata", "agent_id", "created_at", "updated_at"),
        order="id",
        fingerprint_sql=_same(
            "SELECT id, source_entity_id, target_entity_id, dependency_type"
            " FROM entity_dependencies"),
    ),
    TableCopy(
        "entity_pinning",
        ("entity_id", "agent_id", "pinned_by", "reason", "pinned_at", "pin_type",
         "weight_override"),
        key=("entity_id", "agent_id"),
        fingerprint_sql=_same("SELECT entity_id, agent_id, pin_type FROM entity_pinning"),
    ),
    TableCopy(
        "entity_communities",
        ("id", "agent_id", "label", "size", "modularity", "quality", "member_ids", "created_at"),
        order="id",
        fingerprint_sql=_same("SELECT id, agent_id, label, member_ids FROM entity_communities"),
    ),
    # The pipeline (PostgreSQL migration 003_pipeline.sql): the cold tier and the review queue.
    TableCopy(
        "memories_cold",
        ("id", "memory_id", "content", "content_hash", "type", "tags", "importance", "snapshot",
         "reason", "archived_by", "archived_at"),
        order="id", identity=True,
        fingerprint_sql=_same("SELECT id, memory_id, content, archived_at FROM memories_cold"),
    ),
    TableCopy(
        "memory_review_queue",
        ("id", "memory_id", "source_memory_id", "action", "old_content", "new_content",
         "proposal", "verdict", "reason", "status", "created_at", "resolved_at", "resolved_by",
         "target_version"),
        order="id",
        fingerprint_sql=_same(
            "SELECT id, memory_id, status, new_content, target_version FROM memory_review_queue"),
    ),
    # The hooks' injection ledger per caller and session (PostgreSQL migrations 010, 011).
    TableCopy(
        "hook_injections", ("caller", "session_id", "memory_id", "event", "injected_at"),
        key=("caller", "session_id", "memory_id"),
        fingerprint_sql=_same(
            "SELECT caller, session_id, memory_id, event FROM hook_injections"),
    ),
)
# SQLite bookkeeping and derived tables that are not state to carry over.
_NOT_STATE = frozenset({
    "schema_migrations", "schema_migrations_audit", "sqlite_sequence", "memories_fts_vocab",
    "lexical_log",
})


@dataclass
class CopyReport:
    copied: dict[str, int] = field(default_factory=dict)  # rows inserted by this run
    counts: dict[str, tuple[int, int]] = field(default_factory=dict)  # (sqlite, postgres)
    mismatched: list[str] = field(default_factory=list)
    left_behind: dict[str, int] = field(default_factory=dict)  # not copied: table -> rows
    no_target_table: list[str] = field(default_factory=list)  # of those, absent on the target
    signing_key: str = "absent"  # same (copied or already equal) | differs | absent

    @property
    def ok(self) -> bool:
        return not self.mismatched and self.signing_key != "differs"

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok, "copied": self.copied,
            "counts": {k: {"sqlite": a, "postgres": b} for k, (a, b) in self.counts.items()},
            "mismatched": self.mismatched, "left_behind": self.left_behind,
            "no_target_table": self.no_target_table, "signing_key": self.signing_key,
        }


def copy_to_postgres(
    sqlite_path: Path, pg: psycopg.Connection, *, key_path: Path | None = None,
    batch: int = 1000, progress: Progress | None = None,
) -> CopyReport:
    """Copy and verify; `pg` is an autocommit connection to a migrated PostgreSQL store."""
    report = CopyReport()
    source = connect(sqlite_path, read_only=True)
    try:
        for table in TABLES:
            report.copied[table.name] = _copy_table(source, pg, table, batch, progress)
        for table in TABLES:
            vector = 3 if table.name == "embeddings" else None  # the vector's position
            ours = _digest(source, table.fingerprint_sql[0], vector, from_sqlite=True)
            theirs = _digest(pg, table.fingerprint_sql[1], vector, from_sqlite=False)
            report.counts[table.name] = (ours[0], theirs[0])
            if ours != theirs:
                report.mismatched.append(table.name)
        report.left_behind = _left_behind(source)
        report.no_target_table = [n for n in report.left_behind if not _has_table(pg, n)]
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


def _left_behind(source: Connection) -> dict[str, int]:
    copied = {t.name for t in TABLES}
    names = [
        r[0] for r in source.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            " AND sql NOT LIKE 'CREATE VIRTUAL TABLE%'"
        )
    ]
    out = {}
    for name in sorted(names):
        if name in copied or name in _NOT_STATE or "_fts" in name or name.endswith("_config"):
            continue
        rows = int(source.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0])
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
    """The core tables of a PostgreSQL store into `store` (a workspace's SQLite), verified."""
    report = CopyReport()
    for table in TABLES:
        report.copied[table.name] = _copy_back(pg, store, table, batch, progress)
    for table in TABLES:
        vector = 3 if table.name == "embeddings" else None
        theirs = _digest(pg, table.fingerprint_sql[1], vector, from_sqlite=False)
        ours = _digest(store.reader(), table.fingerprint_sql[0], vector, from_sqlite=True)
        report.counts[table.name] = (ours[0], theirs[0])
        if ours != theirs:
            report.mismatched.append(table.name)
    report.signing_key = _key_back(pg, key_path)
    return report


def _copy_back(
    pg: psycopg.Connection, store: Store, table: TableCopy, batch: int,
    progress: Progress | None,
) -> int:
    total = int(_one(pg, f"SELECT count(*) FROM {table.name}"))
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
            before = conn.total_changes
            conn.executemany(insert, params)
            inserted += conn.total_changes - before
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
