"""Recall's reads on PostgreSQL (store/recall_reads.py's protocol), for the one Recaller. A recall
borrows one pooled connection in autocommit for its length and reads through it: BM25 over whole
memories, sources and hints (store/postgres/lexical.py), pgvector's HNSW shortlist rescored
exactly (store/postgres/vectors.py), source representatives from `memory_sources`, conversation
neighbours, and the rows the ranking needs. The graph channels read on the same connection
(`ChannelInput.conn`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import numpy as np
import psycopg
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from signet.store.dialect import POSTGRES
from signet.store.memories import row_to_memory
from signet.store.neighbours import neighbours
from signet.store.postgres import lexical, vectors
from signet.store.postgres.columns import MEMORY_COLUMNS
from signet.store.postgres.filters import filter_sql
from signet.store.recall_reads import Ranking, SourceHit, SourceKey
from signet.store.sources import MIN_MEMBERS
from signet.types import Memory, MemoryFilters

_SOURCE_JOIN = (
    "JOIN memory_sources s ON s.agent_id = m.agent_id AND s.source_id = m.source_id"
    " AND s.project_null = (m.project IS NULL) AND s.project_key = coalesce(m.project, '')"
)


class PostgresRecallReads:
    backend = "postgres"
    missing: frozenset[str] = frozenset()

    def __init__(self, pool: ConnectionPool, model: str | None) -> None:
        self.pool = pool
        self.model = model  # the embedder's: the vectors the semantic channel searches

    @property
    def searches_vectors(self) -> bool:
        return self.model is not None

    @contextmanager
    def reader(self) -> Iterator[PostgresRecallReader]:
        with self.pool.connection() as conn:
            yield PostgresRecallReader(conn, self.model)


class PostgresRecallReader:
    def __init__(self, conn: psycopg.Connection, model: str | None) -> None:
        self.conn = conn
        self.model = model

    def lexical(self, text: str, filters: MemoryFilters, limit: int) -> Ranking:
        return lexical.search(self.conn, text, filters, limit)

    def has_hints(self, filters: MemoryFilters) -> bool:
        where, params = filter_sql(filters)
        row = self.conn.execute(
            f"SELECT 1 FROM memories m WHERE m.hints <> '' AND {where} LIMIT 1", params
        ).fetchone()
        return row is not None

    def hints(self, text: str, filters: MemoryFilters, limit: int) -> Ranking:
        return lexical.search(self.conn, text, filters, limit, column="hint_lexical")

    def nearest(
        self, vector: np.ndarray, filters: MemoryFilters, limit: int, min_cosine: float
    ) -> Ranking:
        assert self.model is not None  # asked only when `searches_vectors`
        found = vectors.search(self.conn, vector, model=self.model, filters=filters, limit=limit)
        return [(m, s) for m, s in found if s >= min_cosine]

    def sources_ranked(self, filters: MemoryFilters) -> bool:
        agent, project = (filters.agent_id, filters.project) if filters.isolated else (None, None)
        row = self.conn.execute(
            f"SELECT 1 FROM memory_sources WHERE members >= {MIN_MEMBERS}"
            " AND (%s::text IS NULL OR agent_id = %s) AND (%s::text IS NULL OR project = %s)"
            " LIMIT 1",
            [agent, agent, project, project],
        ).fetchone()
        return row is not None

    def sources(self, text: str, filters: MemoryFilters, limit: int) -> list[SourceHit]:
        return lexical.search_sources(self.conn, text, filters, limit)

    def source_keys(self, ids: Sequence[str]) -> dict[str, SourceKey]:
        if not ids:
            return {}
        rows = self.conn.execute(
            f"SELECT m.id, m.agent_id, m.project, m.source_id FROM memories m {_SOURCE_JOIN}"
            f" WHERE m.id = ANY(%s) AND s.members >= {MIN_MEMBERS}",
            [list(ids)],
        ).fetchall()
        return {str(r[0]): (str(r[1]), r[2], str(r[3])) for r in rows}

    def documents(self, source_ids: Sequence[str]) -> set[str]:
        if not source_ids:
            return set()
        rows = self.conn.execute(
            "SELECT id FROM documents WHERE id = ANY(%s)", [list(dict.fromkeys(source_ids))]
        ).fetchall()
        return {str(r[0]) for r in rows}

    def source_representatives(
        self, hits: Sequence[SourceHit], filters: MemoryFilters
    ) -> dict[SourceKey, str]:
        if not hits:
            return {}
        where, params = filter_sql(filters)
        rows = self.conn.execute(
            "SELECT k.i, r.id FROM unnest(%s::text[], %s::text[], %s::text[])"
            " WITH ORDINALITY AS k(agent_id, project, source_id, i),"
            " LATERAL (SELECT m.id FROM memories m WHERE m.source_id = k.source_id"
            " AND m.agent_id = k.agent_id AND m.project IS NOT DISTINCT FROM k.project"
            f" AND {where} ORDER BY m.seq LIMIT 1) AS r",
            [[h.agent_id for h in hits], [h.project for h in hits],
             [h.source_id for h in hits], *params],
        ).fetchall()
        return {hits[int(i) - 1].key: str(memory_id) for i, memory_id in rows}

    def neighbours(self, ids: Sequence[str], *, same_project: bool) -> dict[str, list[str]]:
        return neighbours(self.conn, ids, same_project=same_project, dialect=POSTGRES)

    def allowed_ids(self, ids: Sequence[str], filters: MemoryFilters) -> set[str]:
        if not ids:
            return set()
        where, params = filter_sql(filters)
        rows = self.conn.execute(
            f"SELECT m.id FROM memories m WHERE m.id = ANY(%s) AND {where}", [list(ids), *params]
        ).fetchall()
        return {str(r[0]) for r in rows}

    def term_idf(self, tokens: Sequence[str], filters: MemoryFilters) -> dict[str, float]:
        return lexical.term_idf(self.conn, tokens, filters)

    def memories(self, ids: Sequence[str]) -> dict[str, Memory]:
        if not ids:
            return {}
        with self.conn.cursor(row_factory=dict_row) as cur:
            rows = cur.execute(
                f"SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.id = ANY(%s)", (list(ids),)
            ).fetchall()
        return {r["id"]: row_to_memory(r) for r in rows}  # type: ignore[arg-type]

    def vectors(self, ids: Sequence[str], model: str) -> dict[str, np.ndarray]:
        return vectors.of_memories(self.conn, ids, model)
