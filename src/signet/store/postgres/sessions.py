"""The sessions store seam on PostgreSQL; shared statements live in store/sessions.py, artifacts.py
and head.py. Its own: session search ranks a generated `tsvector` with idf from the caller's
slice and `ts_headline` snippets; one live summary job per session is a unique partial index;
`one_at_a_time` is an advisory lock, so one daemon runs a synthesis or re-index at a time.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import psycopg
from psycopg.rows import dict_row

from signet.errors import Conflict
from signet.store import artifacts as art_sql
from signet.store import sessions as sessions_sql
from signet.store.artifacts import ArtifactRow
from signet.store.dialect import POSTGRES
from signet.store.fts import query_tokens
from signet.store.postgres.core import PostgresCore
from signet.store.postgres.retention import try_lock
from signet.store.session_store import SessionReads
from signet.store.sessions import SessionRow, SummaryJob, SummaryOutcome
from signet.store.sessions import _row as session_of
from signet.types import Memory, MemoryScope

__all__ = ["PostgresSessions"]

_COLUMNS = ", ".join(f"t.{n}" for n in SessionRow.__dataclass_fields__)
# ts_headline's options, SQLite's snippet(..., '[', ']', ' ... ', 16) in its terms.
HEADLINE = 'StartSel=[, StopSel=], MaxWords=16, MinWords=6, MaxFragments=2, FragmentDelimiter=" ... "'


def _scope(agent_id: str | None, project: str | None, alias: str = "t") -> tuple[str, list[Any]]:
    return (
        f"(%s::text IS NULL OR {alias}.agent_id = %s) AND (%s::text IS NULL OR {alias}.project = %s)",
        [agent_id, agent_id, project, project],
    )


class PostgresSessions(SessionReads):
    backend, dialect = "postgres", POSTGRES

    def __init__(self, core: PostgresCore) -> None:
        self.core = core
        self.pool = core.pool

    @contextmanager
    def _reading(self) -> Iterator[psycopg.Cursor[dict[str, Any]]]:
        with self.pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            yield cur

    # -- transcripts ------------------------------------------------------------------------
    def search(
        self, query: str, *, agent_id: str | None, project: str | None, limit: int
    ) -> list[tuple[SessionRow, float, str]]:
        words = query_tokens(query)
        if not words or limit <= 0:
            return []
        where, args = _scope(agent_id, project)
        with self._reading() as cur:
            terms = cur.execute(
                "SELECT q::text AS q, (SELECT count(*) FROM session_transcripts t"
                f" WHERE t.lexical @@ q AND {where}) AS df FROM unnest(%s::text[]) AS w,"
                " LATERAL to_tsquery('english', quote_literal(w)) AS q WHERE numnode(q) > 0",
                [*args, words],
            ).fetchall()
            docs = cur.execute(
                f"SELECT count(*) AS n FROM session_transcripts t WHERE {where}", args
            ).fetchone()
            weighted = _idf(terms, int(docs["n"] if docs else 0))
            if not weighted:
                return []
            queries = [q for q, _ in weighted]
            rows = cur.execute(
                f"SELECT {_COLUMNS}, s.score, ts_headline('english', t.content, %s::tsquery, %s)"
                " AS snip FROM (SELECT t.session_key, (SELECT sum(x.w * ts_rank(t.lexical, x.q, 1))"
                " FROM unnest(%s::tsquery[], %s::float8[]) AS x(q, w)) AS score"
                f" FROM session_transcripts t WHERE t.lexical @@ %s::tsquery AND {where}"
                " ORDER BY score DESC, t.seq LIMIT %s) AS s"
                " JOIN session_transcripts t ON t.session_key = s.session_key"
                " ORDER BY s.score DESC, t.seq",
                [_any(queries), HEADLINE, queries, [w for _, w in weighted], _any(queries),
                 *args, limit],
            ).fetchall()
        return [(session_of(r), float(r["score"]), str(r["snip"])) for r in rows]  # type: ignore[arg-type]

    def for_memories(
        self, pairs: Sequence[tuple[str, str, str | None]]
    ) -> dict[tuple[str, str], SessionRow]:
        found: dict[tuple[str, str], SessionRow] = {}
        with self._reading() as cur:
            for agent_id, session_id, project in pairs:
                row = cur.execute(
                    f"SELECT {_COLUMNS} FROM session_transcripts t WHERE t.agent_id = %s"
                    " AND t.session_id = %s AND (%s::text IS NULL OR t.project = %s)"
                    " ORDER BY t.created_at DESC LIMIT 1",
                    (agent_id, session_id, project, project),
                ).fetchone()
                if row:
                    found[(agent_id, session_id)] = session_of(row)  # type: ignore[arg-type]
        return found

    def save_import(
        self, row: SessionRow, *, created: bool, summary_trigger: str | None, now: str,
        max_attempts: int,
    ) -> tuple[SessionRow, str | None]:
        job = None
        with self.pool.connection() as conn, conn.transaction():
            if created:
                names = list(SessionRow.__dataclass_fields__)
                inserted = conn.execute(
                    f"INSERT INTO session_transcripts ({', '.join(names)}) VALUES"
                    f" ({', '.join(['%s'] * len(names))}) ON CONFLICT (session_key) DO NOTHING"
                    " RETURNING session_key",
                    [getattr(row, n) for n in names],
                ).fetchone()
                if inserted is None:
                    raise Conflict(f"session {row.session_id} was imported by another process"
                                   " at the same moment; import it again")
            else:
                conn.execute(
                    "UPDATE session_transcripts SET content = %s, raw_hash = %s, content_hash = %s,"
                    " message_count = %s, last_event_at = %s, ended_at = %s, updated_at = %s"
                    " WHERE session_key = %s",
                    (row.content, row.raw_hash, row.content_hash, row.message_count,
                     row.last_event_at, row.ended_at, now, row.session_key),
                )
            if summary_trigger is not None:
                job = _enqueue_summary(conn, row, summary_trigger, now, max_attempts)
        stored = self.get(row.session_key)
        assert stored is not None
        return stored, job

    def close_idle(self, before: str, now: str, max_attempts: int) -> int:
        with self.pool.connection() as conn, conn.transaction(), \
                conn.cursor(row_factory=dict_row) as cur:
            # SKIP LOCKED: two daemons sweeping at once close each session once.
            rows = cur.execute(
                f"SELECT {_COLUMNS} FROM session_transcripts t WHERE t.ended_at IS NULL"
                " AND t.last_event_at < %s ORDER BY t.last_event_at LIMIT 100"
                " FOR UPDATE SKIP LOCKED",
                (before,),
            ).fetchall()
            for found in rows:
                session = session_of(found)  # type: ignore[arg-type]
                cur.execute(
                    "UPDATE session_transcripts SET ended_at = %s, updated_at = %s"
                    " WHERE session_key = %s",
                    (session.last_event_at, now, session.session_key),
                )
                ended = replace(session, ended_at=session.last_event_at)
                _enqueue_summary(conn, ended, "inactivity", now, max_attempts)
        return len(rows)

    def memories_of(
        self, agent_id: str, session_id: str, project: str | None, limit: int = 200
    ) -> list[str]:
        with self._reading() as cur:
            return sessions_sql.memories_of(cur, agent_id, session_id, project, limit,
                                            dialect=POSTGRES)

    def memory(self, memory_id: str, scope: MemoryScope | None) -> Memory | None:
        return self.core.get_memory(memory_id, scope)

    def resolve_memory(self, ref: str, scope: MemoryScope | None) -> str:
        return self.core.resolve_id("memories", ref, noun="memory", scope=scope)

    # -- the summary queue ------------------------------------------------------------------
    def lease_summary(self, now: str) -> SummaryJob | None:
        with self._reading() as cur:
            return sessions_sql.lease_summary(cur, now, POSTGRES)

    def fail_summary(self, job: SummaryJob, error: str, now: str) -> None:
        with self.pool.connection() as conn, conn.transaction():
            if sessions_sql.owns_summary(conn.cursor(row_factory=dict_row), job, POSTGRES):
                sessions_sql.fail_summary(conn, job, error, now, POSTGRES)

    def reap_summary_leases(self, now: str, timeout_ms: int) -> int:
        with self.pool.connection() as conn:
            return sessions_sql.reap_summary_leases(conn, now, timeout_ms, POSTGRES)

    def covered(self, session_key: str) -> int:
        with self._reading() as cur:
            return sessions_sql.covered(cur, session_key, POSTGRES)

    def finish_summary(self, job: SummaryJob, outcome: SummaryOutcome, now: str) -> None:
        # Bound to this thread: the memory service's insert joins it (PostgresCore.transaction).
        with self.core.transaction() as conn:
            sessions_sql.finish_summary(
                conn, conn.cursor(row_factory=dict_row), job, outcome, now, POSTGRES)

    def add_condensed(self, row: ArtifactRow, children: Sequence[str]) -> None:
        with self.pool.connection() as conn, conn.transaction():
            art_sql.upsert(conn, row, POSTGRES)
            art_sql.set_parent(conn, row.agent_id, list(children), row.source_path, POSTGRES)

    def known_entities(self, agent_id: str, names: dict[str, str]) -> list[str]:
        with self.pool.connection() as conn:
            return sessions_sql.known_entities(conn, agent_id, names, POSTGRES)

    def unseen_terms(self, terms: set[str]) -> int:
        """Terms no memory's lexical index holds. The index is stemmed (SQLite counts exact
        words): "deploying" is seen once "deploy" is stored; a stop word is never seen."""
        if not terms:
            return 0
        wanted = sorted(terms)
        seen = 0
        with self.pool.connection() as conn:
            for start in range(0, len(wanted), 500):
                row = conn.execute(
                    "SELECT count(*) FROM unnest(%s::text[]) AS w,"
                    " LATERAL to_tsquery('english', quote_literal(w)) AS q"
                    " WHERE numnode(q) > 0 AND EXISTS (SELECT 1 FROM memories m"
                    " WHERE m.lexical @@ q)",
                    (wanted[start : start + 500],),
                ).fetchone()
                seen += int(row[0]) if row else 0
        return len(wanted) - seen

    def dominant_community(self, agent_id: str, canonical_names: list[str]) -> str | None:
        if not canonical_names:
            return None
        with self.pool.connection() as conn:
            rows = conn.execute(
                "SELECT community_id, count(*) AS n FROM entities WHERE agent_id = %s"
                " AND canonical_name = ANY(%s) GROUP BY community_id ORDER BY n DESC, community_id",
                (agent_id, canonical_names[:500]),
            ).fetchall()
        total = sum(int(r[1]) for r in rows)
        best = next((r for r in rows if r[0] is not None), None)
        return str(best[0]) if best and 2 * int(best[1]) >= total else None

    # -- artifacts --------------------------------------------------------------------------
    def replace_artifacts(self, rows: Mapping[tuple[str, str], ArtifactRow]) -> int:
        with self.pool.connection() as conn, conn.transaction():
            stale = [k for k in art_sql.all_paths(conn.cursor(row_factory=dict_row))
                     if k not in rows]
            for agent_id, path in stale:
                art_sql.delete(conn, agent_id, [path], POSTGRES)
            for row in rows.values():
                art_sql.upsert(conn, row, POSTGRES)
        return len(stale)

    def forget_session(
        self, session: SessionRow, artifact_paths: Sequence[str], removed: Sequence[str],
        reason: str | None, now: str,
    ) -> None:
        with self.pool.connection() as conn, conn.transaction():
            art_sql.delete(conn, session.agent_id, artifact_paths, POSTGRES)
            sessions_sql.delete(conn, session.session_key, POSTGRES)
            art_sql.tombstone(conn, session.agent_id, session.session_key, list(removed),
                              reason, now, POSTGRES)

    @contextmanager
    def one_at_a_time(self, task: str) -> Iterator[bool]:
        with self.pool.connection() as conn, try_lock(conn, task) as held:
            yield held


def _idf(terms: Sequence[dict[str, Any]], docs: int) -> list[tuple[str, float]]:
    """(tsquery, BM25's idf) per distinct stemmed query word."""
    out: dict[str, float] = {}
    for term in terms:
        df = int(term["df"])
        out.setdefault(str(term["q"]), math.log(1.0 + (docs - df + 0.5) / (df + 0.5)))
    return list(out.items())


def _any(queries: Sequence[str]) -> str:
    return " | ".join(f"({q})" for q in queries)


def _enqueue_summary(
    conn: psycopg.Connection, session: SessionRow, trigger: str, now: str, max_attempts: int
) -> str | None:
    """A pending summary job for `session`; None when one is live (the unique partial index)."""
    row = conn.execute(
        "INSERT INTO summary_jobs (id, session_key, session_id, trigger, harness, project,"
        " agent_id, status, max_attempts, captured_at, started_at, ended_at, created_at,"
        " updated_at) VALUES (%s,%s,%s,%s,%s,%s,%s,'pending',%s,%s,%s,%s,%s,%s)"
        " ON CONFLICT (session_key) WHERE status IN ('pending', 'leased') DO NOTHING RETURNING id",
        (uuid.uuid4().hex, session.session_key, session.session_id, trigger, session.harness,
         session.project, session.agent_id, max_attempts, now, session.started_at,
         session.ended_at, now, now),
    ).fetchone()
    return str(row[0]) if row else None
