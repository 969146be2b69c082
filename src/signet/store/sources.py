"""The source index: BM25 over whole sources (a session's windows, a document's chunks sharing a
`source_id`), so recall can rank a request whose words are spread over a source
(recall/sources.py). Only sources of two live members or more are indexed. Triggers mark a source
dirty and `flush` re-indexes it in the writer's transaction just before commit, so the index is
never behind a committed write.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from json import dumps

from signet.store import slice_bm25
from signet.store.connection import Connection
from signet.store.fts import STEMMED_TABLE, query_tokens
from signet.store.memories import filter_sql
from signet.types import MemoryFilters

__all__ = [
    "SourceHit", "SourceKey", "any_ranked", "documents", "flush", "keys_of", "pending", "representatives", "search",
]

MIN_MEMBERS = 2


@dataclass(frozen=True, slots=True)
class SourceHit:
    agent_id: str
    project: str | None
    source_id: str
    score: float

    @property
    def key(self) -> SourceKey:
        return (self.agent_id, self.project, self.source_id)


# A source's identity: (agent, project, source id).
SourceKey = tuple[str, str | None, str]


def pending(conn: Connection) -> bool:
    """Whether some source waits to be re-indexed."""
    return conn.execute("SELECT 1 FROM memory_sources WHERE dirty = 1 LIMIT 1").fetchone() is not None


def any_ranked(conn: Connection, filters: MemoryFilters | None = None) -> bool:
    """Whether some source has MIN_MEMBERS live members (a partial index probe, migration 008);
    for an isolated slice, some source of the slice's agent and project."""
    if filters is None or not filters.isolated:
        return conn.execute(
            "SELECT 1 FROM memory_sources WHERE members >= 2 LIMIT 1"
        ).fetchone() is not None
    row = conn.execute(
        "SELECT 1 FROM memory_sources WHERE members >= 2 AND (? IS NULL OR agent_id = ?)"
        " AND (? IS NULL OR project = ?) LIMIT 1",
        [filters.agent_id, filters.agent_id, filters.project, filters.project],
    ).fetchone()
    return row is not None


def flush(conn: Connection) -> int:
    """Re-index every dirty source; returns how many. Runs inside a write transaction."""
    dirty = conn.execute(
        "SELECT rowid, agent_id, project, source_id FROM memory_sources WHERE dirty = 1"
    ).fetchall()
    for rowid, agent_id, project, source_id in dirty:
        _reindex(conn, int(rowid), (agent_id, project, source_id))
    return len(dirty)


def _reindex(conn: Connection, rowid: int, key: SourceKey) -> None:
    agent_id, project, source_id = key
    members, text = conn.execute(
        "SELECT count(*), group_concat(content, char(10)) FROM (SELECT content FROM memories "
        "WHERE source_id = ? AND agent_id = ? AND project IS ? AND is_deleted = 0 ORDER BY rowid)",
        (source_id, agent_id, project),
    ).fetchone()
    conn.execute("DELETE FROM memory_sources_fts WHERE rowid = ?", (rowid,))
    if not members:
        conn.execute("DELETE FROM memory_sources WHERE rowid = ?", (rowid,))
        return
    conn.execute(
        "UPDATE memory_sources SET members = ?, dirty = 0 WHERE rowid = ?", (members, rowid)
    )
    if members >= MIN_MEMBERS:
        conn.execute(
            "INSERT INTO memory_sources_fts(rowid, content) VALUES (?, ?)", (rowid, text)
        )


def search(
    conn: Connection, text: str, agent_id: str | None, limit: int, tokens: Sequence[str] = (),
    *, project: str | None = None, filters: MemoryFilters | None = None,
) -> list[SourceHit]:
    """Sources by BM25 over their whole text, best first (score is -bm25, higher is better),
    of `agent_id` and `project` when given (None: any).

    `tokens`: the query's words as the memory index chose them (fts.selective_tokens), so both
    indexes drop the same overly common words; by default all the query's words."""
    words = list(tokens) or query_tokens(text)
    if not words or limit <= 0:
        return []
    if filters is not None and filters.isolated:
        # A scoped caller: the slice's own statistics (store/slice_bm25.py).
        words = query_tokens(text)
        index = slice_bm25.gather(conn, words, filters, STEMMED_TABLE)
        ranked = slice_bm25.rank_sources(conn, index, words, filters, limit, MIN_MEMBERS)
        return [SourceHit(r.key[0], r.key[1], r.key[2], r.score) for r in ranked]
    match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
    rank = "bm25(memory_sources_fts)"
    columns = "s.agent_id, s.project, s.source_id"
    if agent_id is None and project is None:
        rows = conn.execute(
            f"SELECT {columns}, f.score FROM (SELECT rowid, -{rank} AS score "
            f"FROM memory_sources_fts WHERE memory_sources_fts MATCH ? ORDER BY {rank} LIMIT ?) f "
            "JOIN memory_sources s ON s.rowid = f.rowid ORDER BY f.score DESC",
            [match, limit],
        ).fetchall()
    else:
        rows = conn.execute(
            f"SELECT {columns}, -{rank} FROM memory_sources_fts "
            "JOIN memory_sources s ON s.rowid = memory_sources_fts.rowid "
            f"WHERE memory_sources_fts MATCH ? AND (? IS NULL OR s.agent_id = ?) "
            f"AND (? IS NULL OR s.project = ?) ORDER BY {rank} LIMIT ?",
            [match, agent_id, agent_id, project, project, limit],
        ).fetchall()
    return [SourceHit(r[0], r[1], r[2], float(r[3])) for r in rows]


def representatives(
    conn: Connection, hits: Sequence[SourceHit], filters: MemoryFilters
) -> dict[SourceKey, str]:
    """(agent, project, source) -> its first live member passing `filters` (write order), for
    sources none of whose members the other channels found."""
    where, params = filter_sql(filters)
    found: dict[SourceKey, str] = {}
    for hit in hits:
        row = conn.execute(
            "SELECT m.id FROM memories m WHERE m.source_id = ? AND m.agent_id = ? "
            f"AND m.project IS ? AND {where} ORDER BY m.rowid LIMIT 1",
            [hit.source_id, hit.agent_id, hit.project, *params],
        ).fetchone()
        if row is not None:
            found[hit.key] = row[0]
    return found


def documents(conn: Connection, source_ids: Sequence[str]) -> set[str]:
    """The ids among `source_ids` that name a document (a document's chunks carry its id)."""
    if not source_ids:
        return set()
    rows = conn.execute(
        "SELECT d.id FROM json_each(?) AS j JOIN documents d ON d.id = j.value",
        [dumps(list(dict.fromkeys(source_ids)))],
    ).fetchall()
    return {str(r[0]) for r in rows}


def keys_of(conn: Connection, ids: Sequence[str]) -> dict[str, SourceKey]:
    """Memory id -> (agent, project, source) for the memories of `ids` whose source is ranked
    as a whole (at least MIN_MEMBERS live members)."""
    found: dict[str, SourceKey] = {}
    wanted = list(dict.fromkeys(ids))
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        rows = conn.execute(
            "SELECT m.id, m.agent_id, m.project, m.source_id FROM json_each(?) AS j "
            "CROSS JOIN memories m ON m.id = j.value "
            "JOIN memory_sources s ON s.agent_id = m.agent_id "
            "AND IFNULL(s.project, x'') = IFNULL(m.project, x'') AND s.source_id = m.source_id "
            "WHERE s.members >= ?",
            [dumps(chunk), MIN_MEMBERS],
        ).fetchall()
        found.update({r[0]: (r[1], r[2], r[3]) for r in rows})
    return found
