"""SQL for documents, their chunk links (document_memories) and connectors. A document is one source
inside a slice; `source_key` finds it again on re-ingest. Its status moves one short transaction
per step (documents/worker.py). A document outside the caller's scope reads as absent, so a
scoped caller cannot tell it exists.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from signet.store.connection import Row
from signet.store.dialect import SQLITE, Dialect, Executes
from signet.types import MemoryScope, dumps

STATUSES = ("queued", "extracting", "chunking", "embedding", "indexing", "done", "failed")
_COLUMNS = (
    "id, source_url, source_type, content_type, content_hash, title, status, error,"
    " connector_id, chunk_count, memory_count, metadata_json, created_at, updated_at,"
    " completed_at, agent_id, project, source_key"
)
_SCOPE = "(:agent IS NULL OR agent_id = :agent) AND (:project IS NULL OR project = :project)"


@dataclass(frozen=True, slots=True)
class Document:
    id: str
    source_url: str | None
    source_type: str
    content_type: str | None
    content_hash: str | None
    title: str | None
    status: str
    error: str | None
    connector_id: str | None
    chunk_count: int
    memory_count: int
    metadata: dict[str, Any]
    created_at: str
    updated_at: str
    completed_at: str | None
    agent_id: str
    project: str | None
    source_key: str | None

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


@dataclass(frozen=True, slots=True)
class NewDocument:
    """A source to register: what the document service checked and placed in a slice."""

    source_type: str  # text | file | url
    source_key: str  # the source within its slice (re-registering it finds the same row)
    source_url: str | None
    digest: str | None  # the source's sha256 when known at registration (text, file)
    title: str | None
    raw_content: str | None
    agent_id: str
    project: str | None
    connector_id: str | None = None

    @property
    def metadata(self) -> dict[str, Any]:
        return {"source_sha256": self.digest} if self.digest else {}

    def unchanged(self, known: Document) -> bool:
        """Re-registering `known` with this input changes nothing: the same bytes are indexed."""
        return self.digest is not None and known.status == "done" \
            and known.metadata.get("source_sha256") == self.digest


def _document(row: Row) -> Document:
    return Document(
        id=row["id"], source_url=row["source_url"], source_type=row["source_type"] or "text",
        content_type=row["content_type"], content_hash=row["content_hash"], title=row["title"],
        status=row["status"], error=row["error"], connector_id=row["connector_id"],
        chunk_count=int(row["chunk_count"]), memory_count=int(row["memory_count"]),
        metadata=json.loads(row["metadata_json"] or "{}"), created_at=row["created_at"],
        updated_at=row["updated_at"], completed_at=row["completed_at"],
        agent_id=row["agent_id"], project=row["project"], source_key=row["source_key"],
    )


def _scope(scope: MemoryScope | None, dialect: Dialect) -> tuple[str, tuple[Any, ...]]:
    """The scope as a WHERE fragment and its parameters: None leaves that column free."""
    scope = scope or MemoryScope()
    text, q = dialect.text_mark, dialect.mark
    return (f"({text} IS NULL OR agent_id = {q}) AND ({text} IS NULL OR project = {q})",
            (scope.agent_id, scope.agent_id, scope.project, scope.project))


# Every statement below runs on both backends, rendered in the caller's dialect; rows are read
# by column name (on PostgreSQL through a dict_row cursor).


def insert(
    conn: Executes, *, source_type: str, source_key: str, source_url: str | None,
    title: str | None, content_type: str | None, raw_content: str | None,
    agent_id: str, project: str | None, metadata: dict[str, Any], now: str,
    connector_id: str | None = None, dialect: Dialect = SQLITE,
) -> str:
    doc_id = uuid.uuid4().hex
    conn.execute(dialect.sql(
        "INSERT INTO documents (id, source_url, source_type, content_type, title, raw_content,"
        " status, metadata_json, created_at, updated_at, agent_id, project, source_key,"
        " connector_id) VALUES (?,?,?,?,?,?,'queued',?,?,?,?,?,?,?)"),
        (doc_id, source_url, source_type, content_type, title, raw_content, dumps(metadata),
         now, now, agent_id, project, source_key, connector_id),
    )
    return doc_id


def requeue(
    conn: Executes, doc_id: str, *, source_type: str, source_url: str | None,
    raw_content: str | None, metadata: dict[str, Any], title: str | None, now: str,
    dialect: Dialect = SQLITE,
) -> None:
    """A known source again, changed: back to queued with the new input (chunks stay until
    the new set replaces them). The type and URL are the new registration's, never a path
    the stored row held (a row from a crafted bundle could name any file on the host)."""
    conn.execute(dialect.sql(
        "UPDATE documents SET status = 'queued', error = NULL, source_type = ?, source_url = ?,"
        " raw_content = ?, metadata_json = ?, title = coalesce(?, title), updated_at = ?,"
        " completed_at = NULL WHERE id = ?"),
        (source_type, source_url, raw_content, dumps(metadata), title, now, doc_id),
    )


def get(
    conn: Executes, doc_id: str, scope: MemoryScope | None = None, *, lock: bool = False,
    dialect: Dialect = SQLITE,
) -> Document | None:
    """The document inside `scope`; `lock` holds its row until the transaction ends."""
    where, args = _scope(scope, dialect)
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM documents WHERE id = {dialect.mark} AND {where}"
        + (dialect.row_lock if lock else ""), (doc_id, *args),
    ).fetchone()
    return _document(row) if row else None


def raw_content(conn: Executes, doc_id: str, dialect: Dialect = SQLITE) -> str | None:
    row = conn.execute(dialect.sql("SELECT raw_content FROM documents WHERE id = ?"),
                       (doc_id,)).fetchone()
    return row["raw_content"] if row else None


def find_by_source(
    conn: Executes, new: NewDocument, dialect: Dialect = SQLITE
) -> Document | None:
    """The document of `new`'s source in its slice: the same source key, or for a local file
    the same path whoever registered it (the oldest, should there be several)."""
    path = new.source_url if new.source_type == "file" else None
    q = dialect.mark
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM documents WHERE agent_id = {q} AND {dialect.same('project', q)}"
        f" AND (source_key = {q} OR ({dialect.text_mark} IS NOT NULL AND source_type = 'file'"
        f" AND source_url = {q})) ORDER BY created_at, {dialect.insertion_order} LIMIT 1",
        (new.agent_id, new.project, new.source_key, path, path),
    ).fetchone()
    return _document(row) if row else None


def adopt(conn: Executes, doc_id: str, connector_id: str, dialect: Dialect = SQLITE) -> None:
    """The document now belongs to this connector (it syncs the folder the file is in)."""
    conn.execute(dialect.sql("UPDATE documents SET connector_id = ? WHERE id = ?"),
                 (connector_id, doc_id))


def list_page(
    conn: Executes, scope: MemoryScope | None, *, status: str | None, connector_id: str | None,
    limit: int, offset: int, dialect: Dialect = SQLITE,
) -> tuple[list[Document], int]:
    where, args = _scope(scope, dialect)
    text, q = dialect.text_mark, dialect.mark
    where += f" AND ({text} IS NULL OR status = {q}) AND ({text} IS NULL OR connector_id = {q})"
    args = (*args, status, status, connector_id, connector_id)
    total = conn.execute(f"SELECT count(*) AS n FROM documents WHERE {where}", args).fetchone()
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM documents WHERE {where}"
        f" ORDER BY created_at DESC, {dialect.insertion_order} DESC LIMIT {q} OFFSET {q}",
        (*args, limit, offset),
    ).fetchall()
    return [_document(r) for r in rows], int(total["n"])


_STATUS_FIELDS = frozenset({"error", "title", "content_hash", "content_type", "raw_content",
                            "chunk_count", "memory_count", "completed_at", "source_url",
                            "metadata_json"})


def set_status(
    conn: Executes, doc_id: str, status: str, now: str, dialect: Dialect = SQLITE,
    **fields: Any,
) -> bool:
    """Move a document to `status`, setting the named columns too; False when it is gone."""
    assert status in STATUSES and set(fields) <= _STATUS_FIELDS, fields
    sets = "".join(f", {name} = ?" for name in fields)
    cursor = conn.execute(
        dialect.sql(f"UPDATE documents SET status = ?, updated_at = ?{sets} WHERE id = ?"),
        (status, now, *fields.values(), doc_id),
    )
    return bool(cursor.rowcount == 1)


def delete(conn: Executes, doc_id: str, dialect: Dialect = SQLITE) -> None:
    conn.execute(dialect.sql("DELETE FROM documents WHERE id = ?"), (doc_id,))


# --- chunk links -----------------------------------------------------------------------------


def chunk_links(
    conn: Executes, doc_id: str, dialect: Dialect = SQLITE
) -> list[tuple[str, int, str | None]]:
    """(memory id, chunk index, content hash) of the document's chunks, in order."""
    rows = conn.execute(dialect.sql(
        "SELECT d.memory_id, d.chunk_index, m.content_hash FROM document_memories d"
        " JOIN memories m ON m.id = d.memory_id WHERE d.document_id = ?"
        " ORDER BY d.chunk_index"),
        (doc_id,),
    ).fetchall()
    return [(r["memory_id"], int(r["chunk_index"]), r["content_hash"]) for r in rows]


def link(
    conn: Executes, doc_id: str, memory_id: str, chunk_index: int, dialect: Dialect = SQLITE
) -> None:
    conn.execute(dialect.sql(
        "INSERT INTO document_memories (document_id, memory_id, chunk_index) VALUES (?,?,?)"
        " ON CONFLICT (document_id, memory_id) DO UPDATE SET chunk_index = excluded.chunk_index"),
        (doc_id, memory_id, chunk_index),
    )


def unlink(
    conn: Executes, doc_id: str, memory_ids: Sequence[str], dialect: Dialect = SQLITE
) -> None:
    if memory_ids:
        which, args = dialect.one_of("memory_id", memory_ids)
        conn.execute(f"DELETE FROM document_memories WHERE document_id = {dialect.mark}"
                     f" AND {which}", (doc_id, *args))


def owned_live_chunks(conn: Executes, doc_id: str, dialect: Dialect = SQLITE) -> list[str]:
    """Live memories this document wrote (source_id = the document), oldest first."""
    rows = conn.execute(dialect.sql(
        "SELECT id FROM memories WHERE source_id = ? AND source_type = 'document'"
        f" AND {dialect.no('is_deleted')} ORDER BY {dialect.insertion_order}"),
        (doc_id,),
    ).fetchall()
    return [r["id"] for r in rows]


def owned(
    conn: Executes, doc_id: str, memory_ids: Sequence[str], dialect: Dialect = SQLITE
) -> list[str]:
    """Those of `memory_ids` this document wrote, oldest first."""
    if not memory_ids:
        return []
    which, args = dialect.one_of("id", memory_ids)
    rows = conn.execute(
        f"SELECT id FROM memories WHERE {which} AND source_id = {dialect.mark}"
        f" ORDER BY {dialect.insertion_order}", (*args, doc_id),
    ).fetchall()
    return [r["id"] for r in rows]


# --- connectors ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Connector:
    id: str
    provider: str
    display_name: str | None
    config: dict[str, Any]
    cursor: dict[str, Any]
    status: str
    last_sync_at: str | None
    last_error: str | None
    created_at: str
    updated_at: str
    agent_id: str
    project: str | None

    def to_dict(self) -> dict[str, Any]:
        data = {name: getattr(self, name) for name in self.__dataclass_fields__}
        data["files"] = len(self.cursor.get("files", {}))
        del data["cursor"]
        return data


_CONNECTOR_COLUMNS = (
    "id, provider, display_name, config_json, cursor_json, status, last_sync_at, last_error,"
    " created_at, updated_at, agent_id, project"
)


def _connector(row: Row) -> Connector:
    return Connector(
        id=row["id"], provider=row["provider"], display_name=row["display_name"],
        config=json.loads(row["config_json"] or "{}"), cursor=json.loads(row["cursor_json"] or "{}"),
        status=row["status"], last_sync_at=row["last_sync_at"], last_error=row["last_error"],
        created_at=row["created_at"], updated_at=row["updated_at"], agent_id=row["agent_id"],
        project=row["project"],
    )


def insert_connector(
    conn: Executes, *, provider: str, display_name: str | None, config: dict[str, Any],
    agent_id: str, project: str | None, now: str, dialect: Dialect = SQLITE,
) -> str:
    connector_id = uuid.uuid4().hex
    conn.execute(dialect.sql(
        "INSERT INTO connectors (id, provider, display_name, config_json, cursor_json, status,"
        " created_at, updated_at, agent_id, project) VALUES (?,?,?,?,'{}','idle',?,?,?,?)"),
        (connector_id, provider, display_name, dumps(config), now, now, agent_id, project),
    )
    return connector_id


def get_connector(
    conn: Executes, connector_id: str, scope: MemoryScope | None = None,
    dialect: Dialect = SQLITE,
) -> Connector | None:
    where, args = _scope(scope, dialect)
    row = conn.execute(
        f"SELECT {_CONNECTOR_COLUMNS} FROM connectors WHERE id = {dialect.mark} AND {where}",
        (connector_id, *args),
    ).fetchone()
    return _connector(row) if row else None


def list_connectors(
    conn: Executes, scope: MemoryScope | None = None, dialect: Dialect = SQLITE
) -> list[Connector]:
    where, args = _scope(scope, dialect)
    rows = conn.execute(
        f"SELECT {_CONNECTOR_COLUMNS} FROM connectors WHERE {where} ORDER BY created_at, id",
        args,
    ).fetchall()
    return [_connector(r) for r in rows]


def set_connector_state(
    conn: Executes, connector_id: str, *, status: str, now: str, last_error: str | None = None,
    cursor: dict[str, Any] | None = None, synced: bool = False, dialect: Dialect = SQLITE,
) -> None:
    conn.execute(dialect.sql(
        "UPDATE connectors SET status = ?, last_error = ?, updated_at = ?,"
        " cursor_json = coalesce(?, cursor_json),"
        " last_sync_at = CASE WHEN ? THEN ? ELSE last_sync_at END WHERE id = ?"),
        (status, last_error, now, dumps(cursor) if cursor is not None else None,
         dialect.flag(synced), now, connector_id),
    )


def set_connector_config(
    conn: Executes, connector_id: str, config: dict[str, Any], now: str,
    dialect: Dialect = SQLITE,
) -> None:
    conn.execute(dialect.sql("UPDATE connectors SET config_json = ?, updated_at = ? WHERE id = ?"),
                 (dumps(config), now, connector_id))


def delete_connector(conn: Executes, connector_id: str, dialect: Dialect = SQLITE) -> None:
    conn.execute(dialect.sql("DELETE FROM connectors WHERE id = ?"), (connector_id,))


def document_counts(
    conn: Executes, connector_id: str, dialect: Dialect = SQLITE
) -> dict[str, int]:
    rows = conn.execute(dialect.sql(
        "SELECT status, count(*) AS n FROM documents WHERE connector_id = ? GROUP BY status"),
        (connector_id,),
    ).fetchall()
    return {str(r["status"]): int(r["n"]) for r in rows}


def connector_documents(
    conn: Executes, connector_id: str, dialect: Dialect = SQLITE
) -> list[str]:
    rows = conn.execute(dialect.sql(
        f"SELECT id FROM documents WHERE connector_id = ? ORDER BY {dialect.insertion_order}"),
        (connector_id,),
    ).fetchall()
    return [str(r["id"]) for r in rows]
