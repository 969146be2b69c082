"""SQL for documents, their chunk links (document_memories) and connectors.

A document is one ingested source (pasted text, a file, a URL) inside an agent's and project's
slice; `source_key` names the source within that slice so re-ingesting it finds the same row.
Its status walks queued -> extracting -> chunking -> embedding -> indexing -> done | failed,
one short transaction per step (documents/worker.py). Reads take an optional scope and answer
None / nothing for a document outside it, so a scoped caller cannot tell it exists.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from signet.store.connection import Connection, Row
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


def _scope(scope: MemoryScope | None) -> dict[str, Any]:
    scope = scope or MemoryScope()
    return {"agent": scope.agent_id, "project": scope.project}


def insert(
    conn: Connection, *, source_type: str, source_key: str, source_url: str | None,
    title: str | None, content_type: str | None, raw_content: str | None,
    agent_id: str, project: str | None, metadata: dict[str, Any], now: str,
    connector_id: str | None = None,
) -> str:
    doc_id = uuid.uuid4().hex
    conn.execute(
        "INSERT INTO documents (id, source_url, source_type, content_type, title, raw_content,"
        " status, metadata_json, created_at, updated_at, agent_id, project, source_key,"
        " connector_id) VALUES (?,?,?,?,?,?,'queued',?,?,?,?,?,?,?)",
        (doc_id, source_url, source_type, content_type, title, raw_content, dumps(metadata),
         now, now, agent_id, project, source_key, connector_id),
    )
    return doc_id


def requeue(
    conn: Connection, doc_id: str, *, source_type: str, source_url: str | None,
    raw_content: str | None, metadata: dict[str, Any], title: str | None, now: str,
) -> None:
    """A known source again, changed: back to queued with the new input (chunks stay until
    the new set replaces them). The source's type and URL are the new registration's: the
    worker reads only what this caller named, never a path the stored row held (a row from
    a crafted bundle could name any file on the host)."""
    conn.execute(
        "UPDATE documents SET status = 'queued', error = NULL, source_type = ?, source_url = ?,"
        " raw_content = ?, metadata_json = ?, title = coalesce(?, title), updated_at = ?,"
        " completed_at = NULL WHERE id = ?",
        (source_type, source_url, raw_content, dumps(metadata), title, now, doc_id),
    )


def get(conn: Connection, doc_id: str, scope: MemoryScope | None = None) -> Document | None:
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM documents WHERE id = :id AND {_SCOPE}",
        {"id": doc_id, **_scope(scope)},
    ).fetchone()
    return _document(row) if row else None


def raw_content(conn: Connection, doc_id: str) -> str | None:
    row = conn.execute("SELECT raw_content FROM documents WHERE id = ?", (doc_id,)).fetchone()
    return row[0] if row else None


def find_by_source(conn: Connection, new: NewDocument) -> Document | None:
    """The document of `new`'s source in its slice: the same source key, or for a local file
    the same path whoever registered it (the oldest, should there be several)."""
    path = new.source_url if new.source_type == "file" else None
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM documents WHERE agent_id = ? AND project IS ? AND"
        " (source_key = ? OR (? IS NOT NULL AND source_type = 'file' AND source_url = ?))"
        " ORDER BY created_at, rowid LIMIT 1",
        (new.agent_id, new.project, new.source_key, path, path),
    ).fetchone()
    return _document(row) if row else None


def adopt(conn: Connection, doc_id: str, connector_id: str) -> None:
    """The document now belongs to this connector (it syncs the folder the file is in)."""
    conn.execute("UPDATE documents SET connector_id = ? WHERE id = ?", (connector_id, doc_id))


def list_page(
    conn: Connection, scope: MemoryScope | None, *, status: str | None, connector_id: str | None,
    limit: int, offset: int,
) -> tuple[list[Document], int]:
    where = f"{_SCOPE} AND (:status IS NULL OR status = :status)" \
        " AND (:connector IS NULL OR connector_id = :connector)"
    params = {**_scope(scope), "status": status, "connector": connector_id}
    total = conn.execute(f"SELECT count(*) FROM documents WHERE {where}", params).fetchone()[0]
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM documents WHERE {where}"
        " ORDER BY created_at DESC, rowid DESC LIMIT :limit OFFSET :offset",
        {**params, "limit": limit, "offset": offset},
    ).fetchall()
    return [_document(r) for r in rows], int(total)


def set_status(conn: Connection, doc_id: str, status: str, now: str, **fields: Any) -> bool:
    """Move a document to `status`, setting the named columns too; False when it is gone."""
    assert status in STATUSES
    allowed = {"error", "title", "content_hash", "content_type", "raw_content", "chunk_count",
               "memory_count", "completed_at", "source_url", "metadata_json"}
    assert set(fields) <= allowed, fields
    sets = "".join(f", {name} = :{name}" for name in fields)
    cursor = conn.execute(
        f"UPDATE documents SET status = :status, updated_at = :now{sets} WHERE id = :id",
        {"status": status, "now": now, "id": doc_id, **fields},
    )
    return cursor.rowcount == 1


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
    return [(r[0], int(r[1]), r[2]) for r in rows]


def link(
    conn: Executes, doc_id: str, memory_id: str, chunk_index: int, dialect: Dialect = SQLITE
) -> None:
    conn.execute(dialect.sql(
        "INSERT INTO document_memories (document_id, memory_id, chunk_index) VALUES (?,?,?)"
        " ON CONFLICT (document_id, memory_id) DO UPDATE SET chunk_index = excluded.chunk_index"),
        (doc_id, memory_id, chunk_index),
    )


def unlink(conn: Connection, doc_id: str, memory_ids: Sequence[str]) -> None:
    conn.executemany(
        "DELETE FROM document_memories WHERE document_id = ? AND memory_id = ?",
        [(doc_id, m) for m in memory_ids],
    )


def owned_live_chunks(conn: Connection, doc_id: str) -> list[str]:
    """Live memories this document wrote (source_id = the document)."""
    rows = conn.execute(
        "SELECT id FROM memories WHERE source_id = ? AND source_type = 'document'"
        " AND is_deleted = 0",
        (doc_id,),
    ).fetchall()
    return [r[0] for r in rows]


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
    conn: Connection, *, provider: str, display_name: str | None, config: dict[str, Any],
    agent_id: str, project: str | None, now: str,
) -> str:
    connector_id = uuid.uuid4().hex
    conn.execute(
        "INSERT INTO connectors (id, provider, display_name, config_json, cursor_json, status,"
        " created_at, updated_at, agent_id, project) VALUES (?,?,?,?,'{}','idle',?,?,?,?)",
        (connector_id, provider, display_name, dumps(config), now, now, agent_id, project),
    )
    return connector_id


def get_connector(conn: Connection, connector_id: str, scope: MemoryScope | None = None) -> Connector | None:
    row = conn.execute(
        f"SELECT {_CONNECTOR_COLUMNS} FROM connectors WHERE id = :id AND {_SCOPE}",
        {"id": connector_id, **_scope(scope)},
    ).fetchone()
    return _connector(row) if row else None


def list_connectors(conn: Connection, scope: MemoryScope | None = None) -> list[Connector]:
    rows = conn.execute(
        f"SELECT {_CONNECTOR_COLUMNS} FROM connectors WHERE {_SCOPE} ORDER BY created_at, id",
        _scope(scope),
    ).fetchall()
    return [_connector(r) for r in rows]


def set_connector_state(
    conn: Connection, connector_id: str, *, status: str, now: str, last_error: str | None = None,
    cursor: dict[str, Any] | None = None, synced: bool = False,
) -> None:
    conn.execute(
        "UPDATE connectors SET status = ?, last_error = ?, updated_at = ?,"
        " cursor_json = coalesce(?, cursor_json),"
        " last_sync_at = CASE WHEN ? THEN ? ELSE last_sync_at END WHERE id = ?",
        (status, last_error, now, dumps(cursor) if cursor is not None else None, synced, now,
         connector_id),
    )


def set_connector_config(
    conn: Connection, connector_id: str, config: dict[str, Any], now: str
) -> None:
    conn.execute("UPDATE connectors SET config_json = ?, updated_at = ? WHERE id = ?",
                 (dumps(config), now, connector_id))


def delete_connector(conn: Connection, connector_id: str) -> None:
    conn.execute("DELETE FROM connectors WHERE id = ?", (connector_id,))


def document_counts(conn: Connection, connector_id: str) -> dict[str, int]:
    rows = conn.execute(
        "SELECT status, count(*) FROM documents WHERE connector_id = ? GROUP BY status",
        (connector_id,),
    ).fetchall()
    return {r[0]: int(r[1]) for r in rows}


def connector_documents(conn: Connection, connector_id: str) -> list[str]:
    return [r[0] for r in conn.execute(
        "SELECT id FROM documents WHERE connector_id = ?", (connector_id,))]
