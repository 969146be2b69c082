"""SQL for sessions: the lossless transcripts (session_transcripts) and the summary queue
(summary_jobs).

A session is (agent, project, harness session id); `session_key` digests the three, so two
scopes' sessions of one id never share a row, a file or a job. Every read takes the caller's
scope, so a scoped caller cannot learn another scope's session exists. summary_jobs has the
memory_jobs lifecycle (store/jobs.py), with one live job per session.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from signet.errors import InvalidInput
from signet.store import artifacts as art_sql
from signet.store import slice_bm25
from signet.store.artifacts import ArtifactRow
from signet.store.connection import Connection, Row
from signet.store.dialect import SQLITE, Dialect, Executes
from signet.store.fts import match_expression, query_tokens
from signet.types import format_ts, parse_ts

MAX_ERROR_CHARS = 2000
KEY_SEPARATOR = "\x1f"


def session_key(agent_id: str, project: str | None, session_id: str) -> str:
    """A session's key: a hash of its agent, project and id joined by U+001F. A part holding
    that separator is refused, so two scopes can never spell one key (an agent "a" with project
    "b<US>c" and an agent "a<US>b" with project "c" would)."""
    for name, part in (("agent", agent_id), ("project", project or ""), ("session id", session_id)):
        if KEY_SEPARATOR in part:
            raise InvalidInput(f"the {name} holds a unit separator (U+001F), which a session's"
                               " agent, project and id may not")
    digest = hashlib.sha256(KEY_SEPARATOR.join((agent_id, project or "", session_id)).encode())
    return f"sk_{digest.hexdigest()[:24]}"


@dataclass(frozen=True, slots=True)
class SessionRow:
    session_key: str
    session_id: str
    agent_id: str
    project: str | None
    harness: str | None
    content: str
    raw_hash: str | None
    content_hash: str | None
    message_count: int
    started_at: str | None
    last_event_at: str | None
    ended_at: str | None
    path: str | None
    raw_path: str | None
    summary_status: str | None
    created_at: str
    updated_at: str | None

    def to_dict(self, *, with_content: bool = False) -> dict[str, Any]:
        data = {n: getattr(self, n) for n in self.__dataclass_fields__ if n != "content"}
        if with_content:
            data["content"] = self.content
        return data


_COLUMNS = ", ".join(SessionRow.__dataclass_fields__)


def _row(row: Row) -> SessionRow:
    return SessionRow(**{name: row[name] for name in SessionRow.__dataclass_fields__})


def _scope_sql(
    agent_id: str | None, project: str | None, table: str = "", dialect: Dialect = SQLITE
) -> tuple[str, tuple[Any, ...]]:
    """The scope as a WHERE fragment: None means no constraint on that column."""
    t, q, text = f"{table}." if table else "", dialect.mark, dialect.text_mark
    return (
        f"({text} IS NULL OR {t}agent_id = {q}) AND ({text} IS NULL OR {t}project = {q})",
        (agent_id, agent_id, project, project),
    )

# The reads below run on both backends (rows by column name: on PostgreSQL through a dict_row
# cursor), each statement rendered in the caller's dialect.


def get(conn: Executes, key: str, *, dialect: Dialect = SQLITE) -> SessionRow | None:
    row = conn.execute(dialect.sql(
        f"SELECT {_COLUMNS} FROM session_transcripts WHERE session_key = ?"), (key,)
    ).fetchone()
    return _row(row) if row else None


def find(
    conn: Executes, session_id: str, *, agent_id: str | None, project: str | None,
    dialect: Dialect = SQLITE,
) -> list[SessionRow]:
    """Sessions with this harness id inside the scope, newest first."""
    where, args = _scope_sql(agent_id, project, dialect=dialect)
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM session_transcripts WHERE session_id = {dialect.mark}"
        f" AND {where} ORDER BY created_at DESC, session_key",
        (session_id, *args),
    ).fetchall()
    return [_row(r) for r in rows]


def insert(conn: Connection, row: SessionRow) -> None:
    marks = ",".join("?" * len(SessionRow.__dataclass_fields__))
    conn.execute(
        f"INSERT INTO session_transcripts ({_COLUMNS}) VALUES ({marks})",
        tuple(getattr(row, n) for n in SessionRow.__dataclass_fields__),
    )


def update(conn: Connection, key: str, **columns: Any) -> None:
    sets = ", ".join(f"{name} = ?" for name in columns)
    conn.execute(
        f"UPDATE session_transcripts SET {sets} WHERE session_key = ?", (*columns.values(), key)
    )


def list_page(
    conn: Executes, *, agent_id: str | None, project: str | None, harness: str | None,
    limit: int, offset: int, dialect: Dialect = SQLITE,
) -> tuple[list[SessionRow], int]:
    q = dialect.mark
    where, args = _scope_sql(agent_id, project, dialect=dialect)
    where += f" AND ({dialect.text_mark} IS NULL OR harness = {q})"
    args = (*args, harness, harness)
    total = conn.execute(
        f"SELECT COUNT(*) AS n FROM session_transcripts WHERE {where}", args).fetchone()["n"]
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM session_transcripts WHERE {where}"
        f" ORDER BY COALESCE(last_event_at, created_at) DESC, session_key LIMIT {q} OFFSET {q}",
        (*args, limit, offset),
    ).fetchall()
    return [_row(r) for r in rows], int(total)


def search(
    conn: Connection, query: str, *, agent_id: str | None, project: str | None, limit: int
) -> list[tuple[SessionRow, float, str]]:
    """Sessions whose cleaned text matches `query` (BM25, best first) with a short snippet.

    An unscoped caller's slice is the whole table: FTS5's own bm25(). A scoped caller's scores
    use its slice's statistics (store/slice_bm25.py): with FTS5's, another scope's sessions
    holding a query word would lower the word's weight here, and the score of one's own session
    would tell that some other session holds it."""
    expression = match_expression(query)
    if expression is None:
        return []
    if agent_id is None and project is None:
        return _matches(conn, expression, "bm25(session_transcripts_fts)", "1", (), limit)
    scores = _slice_scores(conn, query, agent_id, project)
    best = sorted(scores, key=lambda rowid: (-scores[rowid], rowid))[:limit]
    if not best:
        return []
    found = _matches(conn, expression, "0", "t.rowid IN (SELECT value FROM json_each(?))",
                     (json.dumps(best),), len(best), rowids=True)
    by_rowid = {rowid: (row, snip) for rowid, row, snip in found}
    return [(by_rowid[r][0], scores[r], by_rowid[r][1]) for r in best if r in by_rowid]


def _matches(
    conn: Connection, expression: str, score: str, where: str, args: tuple[Any, ...],
    limit: int, rowids: bool = False,
) -> list[Any]:
    rows = conn.execute(
        f"SELECT {', '.join('t.' + c for c in SessionRow.__dataclass_fields__)}, t.rowid AS rid,"
        f" {score} AS score,"
        " snippet(session_transcripts_fts, 0, '[', ']', ' ... ', 16) AS snip"
        " FROM session_transcripts_fts JOIN session_transcripts t"
        " ON t.rowid = session_transcripts_fts.rowid"
        f" WHERE session_transcripts_fts MATCH ? AND {where}"
        " ORDER BY score LIMIT ?",
        (expression, *args, limit),
    ).fetchall()
    if rowids:
        return [(int(r["rid"]), _row(r), r["snip"]) for r in rows]
    return [(_row(r), -float(r["score"]), r["snip"]) for r in rows]


def _slice_scores(
    conn: Connection, query: str, agent_id: str | None, project: str | None
) -> dict[int, float]:
    """rowid -> BM25 of the slice's sessions matching `query`, from the slice's statistics:
    its row count, each word's rows in it, occurrences by highlight(), lengths by docsize."""
    where, args = _scope_sql(agent_id, project, table="t")
    docs = conn.execute(
        f"SELECT COUNT(*) FROM session_transcripts t WHERE {where}", args
    ).fetchone()[0]
    freqs: dict[str, dict[int, float]] = {}
    for token in query_tokens(query):
        rows = conn.execute(
            "SELECT t.rowid, highlight(session_transcripts_fts, 0, ?, ?)"
            " FROM session_transcripts_fts JOIN session_transcripts t"
            " ON t.rowid = session_transcripts_fts.rowid"
            f" WHERE session_transcripts_fts MATCH ? AND {where}",
            (slice_bm25.OPEN, slice_bm25.CLOSE, '"' + token.replace('"', '""') + '"', *args),
        ).fetchall()
        freqs[token] = {int(r[0]): float(slice_bm25.occurrences(r[1])) for r in rows}
    ids = sorted({rowid for found in freqs.values() for rowid in found})
    sizes = slice_bm25.sizes(conn, "session_transcripts_fts_docsize", ids)
    lengths = {rowid: float(sizes.get(rowid, (0,))[0] or 1) for rowid in ids}
    return slice_bm25.bm25(freqs, lengths, int(docs))


def for_memories(
    conn: Connection, pairs: list[tuple[str, str, str | None]]
) -> dict[tuple[str, str], SessionRow]:
    """(agent, session id, memory project) -> the session those memories came from. A memory
    with a project only ever reaches a session of that project, so the excerpt shown never
    comes from outside the memory's own scope."""
    found: dict[tuple[str, str], SessionRow] = {}
    for agent_id, session_id, project in pairs:
        row = conn.execute(
            f"SELECT {_COLUMNS} FROM session_transcripts WHERE agent_id = ? AND session_id = ?"
            " AND (? IS NULL OR project = ?) ORDER BY created_at DESC LIMIT 1",
            (agent_id, session_id, project, project),
        ).fetchone()
        if row:
            found[(agent_id, session_id)] = _row(row)
    return found


def open_idle(conn: Connection, before: str, limit: int = 100) -> list[SessionRow]:
    """Sessions with no end whose last event is older than `before`."""
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM session_transcripts WHERE ended_at IS NULL"
        " AND last_event_at < ? ORDER BY last_event_at LIMIT ?",
        (before, limit),
    ).fetchall()
    return [_row(r) for r in rows]


# -- summary_jobs -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SummaryJob:
    id: str
    session_key: str
    session_id: str | None
    trigger: str
    harness: str | None
    project: str | None
    agent_id: str
    status: str
    attempts: int
    max_attempts: int
    leased_at: str | None
    error: str | None
    result: str | None
    created_at: str

    def to_dict(self) -> dict[str, Any]:
        data = {n: getattr(self, n) for n in self.__dataclass_fields__}
        data["result"] = json.loads(self.result) if self.result else None
        return data


@dataclass(frozen=True, slots=True)
class SummaryOutcome:
    """What a finished summary job writes: its `result`, the session's summary `status` (when
    `session_key` is given), the artifact's row and the summary memory (`memory()`, the memory
    service's write, joining the transaction); None writes nothing of that kind."""

    result: dict[str, Any]
    status: str | None = None
    session_key: str | None = None
    artifact: ArtifactRow | None = None
    memory: Callable[[], str] | None = None


_JOB_COLUMNS = ", ".join(SummaryJob.__dataclass_fields__)


def _job(row: Row) -> SummaryJob:
    return SummaryJob(**{name: row[name] for name in SummaryJob.__dataclass_fields__})


def enqueue_summary(
    conn: Connection, session: SessionRow, *, trigger: str, now: str, max_attempts: int = 3
) -> str | None:
    """A pending summary job for `session`; None when one is already pending or leased."""
    live = conn.execute(
        "SELECT 1 FROM summary_jobs WHERE session_key = ? AND status IN ('pending', 'leased')",
        (session.session_key,),
    ).fetchone()
    if live:
        return None
    job_id = uuid.uuid4().hex
    conn.execute(
        "INSERT INTO summary_jobs (id, session_key, session_id, trigger, harness, project,"
        " agent_id, status, max_attempts, captured_at, started_at, ended_at, created_at,"
        " updated_at) VALUES (?,?,?,?,?,?,?,'pending',?,?,?,?,?,?)",
        (job_id, session.session_key, session.session_id, trigger, session.harness,
         session.project, session.agent_id, max_attempts, now, session.started_at,
         session.ended_at, now, now),
    )
    return job_id


def summary_pending(conn: Executes) -> bool:
    """Whether a summary job waits to be leased (a read before the lease's transaction)."""
    return conn.execute(
        "SELECT 1 FROM summary_jobs WHERE status = 'pending' LIMIT 1").fetchone() is not None


def lease_summary(conn: Executes, now: str, dialect: Dialect = SQLITE) -> SummaryJob | None:
    """Claim the oldest pending job (one statement, inside the caller's write transaction;
    rows read by column name)."""
    row = conn.execute(dialect.sql(
        f"UPDATE summary_jobs SET status = 'leased', attempts = attempts + 1, leased_at = ?,"
        " updated_at = ? WHERE id = (SELECT id FROM summary_jobs WHERE status = 'pending'"
        f" ORDER BY created_at, id LIMIT 1{dialect.claim}) AND status = 'pending'"
        f" RETURNING {_JOB_COLUMNS}"),
        (now, now),
    ).fetchone()
    return _job(row) if row else None


def get_summary_job(
    conn: Executes, job_id: str, *, lock: bool = False, dialect: Dialect = SQLITE
) -> SummaryJob | None:
    """The job (rows read by column name); `lock` holds its row until the transaction ends."""
    row = conn.execute(
        dialect.sql(f"SELECT {_JOB_COLUMNS} FROM summary_jobs WHERE id = ?")
        + (dialect.row_lock if lock else ""), (job_id,)).fetchone()
    return _job(row) if row else None


def owns_summary(conn: Executes, job: SummaryJob, dialect: Dialect = SQLITE) -> bool:
    """Whether `job` is still under the lease that returned it, its row held until the
    transaction ends (no reaper or lease moves it meanwhile)."""
    current = get_summary_job(conn, job.id, lock=True, dialect=dialect)
    return (
        current is not None and current.status == "leased" and current.attempts == job.attempts
        and current.leased_at == job.leased_at
    )


def complete_summary(
    conn: Executes, job_id: str, result: dict[str, Any], now: str, dialect: Dialect = SQLITE
) -> None:
    conn.execute(dialect.sql(
        "UPDATE summary_jobs SET status = 'completed', result = ?, completed_at = ?,"
        " updated_at = ? WHERE id = ?"),
        (json.dumps(result), now, now, job_id),
    )


def fail_summary(
    conn: Executes, job: SummaryJob, error: str, now: str, dialect: Dialect = SQLITE
) -> str:
    status = "dead" if job.attempts >= job.max_attempts else "pending"
    conn.execute(dialect.sql(
        "UPDATE summary_jobs SET status = ?, error = ?, leased_at = NULL, updated_at = ?"
        " WHERE id = ?"),
        (status, error[:MAX_ERROR_CHARS], now, job.id),
    )
    return status


def reap_summary_leases(
    conn: Executes, now: str, timeout_ms: int, dialect: Dialect = SQLITE
) -> int:
    cutoff = format_ts(parse_ts(now) - timedelta(milliseconds=timeout_ms))
    cursor = conn.execute(dialect.sql(
        "UPDATE summary_jobs SET status = 'pending', leased_at = NULL, updated_at = ?"
        " WHERE status = 'leased' AND leased_at < ?"),
        (now, cutoff),
    )
    return cursor.rowcount


def summary_jobs(
    conn: Connection, *, agent_id: str | None, project: str | None, status: str | None, limit: int
) -> list[SummaryJob]:
    where, args = _scope_sql(agent_id, project)
    rows = conn.execute(
        f"SELECT {_JOB_COLUMNS} FROM summary_jobs WHERE {where} AND (? IS NULL OR status = ?)"
        " ORDER BY created_at DESC LIMIT ?",
        (*args, status, status, limit),
    ).fetchall()
    return [_job(r) for r in rows]


def summary_counts(conn: Connection) -> dict[str, int]:
    rows = conn.execute("SELECT status, COUNT(*) FROM summary_jobs GROUP BY status").fetchall()
    return {r[0]: int(r[1]) for r in rows}


def covered(conn: Executes, key: str, dialect: Dialect = SQLITE) -> int:
    """Messages of the session already summarised (by its completed summary jobs)."""
    row = conn.execute(dialect.sql(
        f"SELECT MAX({dialect.json_int('result', 'messages')}) AS n FROM summary_jobs"
        " WHERE session_key = ? AND status = 'completed'"),
        (key,),
    ).fetchone()
    return int(row["n"] or 0)


def set_summary_status(
    conn: Executes, key: str, status: str, now: str, dialect: Dialect = SQLITE
) -> None:
    conn.execute(dialect.sql(
        "UPDATE session_transcripts SET summary_status = ?, updated_at = ? WHERE session_key = ?"),
        (status, now, key),
    )


def with_memory(result: dict[str, Any], memory_id: str) -> dict[str, Any]:
    """A summary job's result with the summary memory's id after the artifact's path."""
    return {"artifact": result.get("artifact"), "memory_id": memory_id,
            **{k: v for k, v in result.items() if k != "artifact"}}


def finish_summary(
    conn: Executes, rows: Executes, job: SummaryJob, outcome: SummaryOutcome, now: str,
    dialect: Dialect = SQLITE,
) -> None:
    """The summary job's writes, in the caller's transaction: its row held first, the summary
    memory, the artifact's row, the session's status and the completion. `rows`: `conn` read
    by column name."""
    if not owns_summary(rows, job, dialect):
        raise RuntimeError(f"summary job {job.id} is no longer leased by this worker")
    result = outcome.result
    if outcome.memory is not None:
        result = with_memory(result, outcome.memory())
    if outcome.artifact is not None:
        art_sql.upsert(conn, outcome.artifact, dialect)
    if outcome.status is not None and outcome.session_key is not None:
        set_summary_status(conn, outcome.session_key, outcome.status, now, dialect)
    complete_summary(conn, job.id, result, now, dialect)


def unseen_terms(conn: Connection, terms: set[str]) -> int:
    """How many of `terms` no stored memory contains (the exact-word FTS vocabulary)."""
    if not terms:
        return 0
    wanted = sorted(terms)
    seen = 0
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        marks = ",".join("?" * len(chunk))
        seen += conn.execute(
            f"SELECT COUNT(*) FROM memories_fts_vocab WHERE term IN ({marks})", chunk
        ).fetchone()[0]
    return len(wanted) - int(seen)


def known_entities(
    conn: Executes, agent_id: str, names: dict[str, str], dialect: Dialect = SQLITE
) -> list[str]:
    """The entities of `agent_id` among `names` (canonical -> as written), as written."""
    if not names:
        return []
    among, keys = dialect.one_of("canonical_name", list(names)[:500])
    rows = conn.execute(
        f"SELECT canonical_name FROM entities WHERE agent_id = {dialect.mark} AND {among}"
        " ORDER BY mentions DESC, canonical_name",
        (agent_id, *keys),
    ).fetchall()
    return [names[r[0]] for r in rows]


def delete(conn: Executes, key: str, dialect: Dialect = SQLITE) -> None:
    conn.execute(dialect.sql("DELETE FROM session_transcripts WHERE session_key = ?"), (key,))


def memories_of(
    conn: Executes, agent_id: str, session_id: str, project: str | None, limit: int = 200,
    dialect: Dialect = SQLITE,
) -> list[str]:
    """Ids of live memories that came from the session (its id as session_id or source_id)."""
    q = dialect.mark
    rows = conn.execute(
        f"SELECT id FROM memories WHERE agent_id = {q} AND {dialect.no('is_deleted')}"
        f" AND (session_id = {q} OR source_id = {q}) AND ({dialect.text_mark} IS NULL"
        f" OR project = {q}) ORDER BY created_at, id LIMIT {q}",
        (agent_id, session_id, session_id, project, project, limit),
    ).fetchall()
    return [r["id"] for r in rows]


def dominant_community(conn: Connection, agent_id: str, canonical_names: list[str]) -> str | None:
    """The entity community holding most of the named entities, when it holds at least half."""
    if not canonical_names:
        return None
    keys = canonical_names[:500]
    marks = ",".join("?" * len(keys))
    rows = conn.execute(
        f"SELECT community_id, COUNT(*) AS n FROM entities WHERE agent_id = ?"
        f" AND canonical_name IN ({marks}) GROUP BY community_id ORDER BY n DESC, community_id",
        (agent_id, *keys),
    ).fetchall()
    total = sum(int(r["n"]) for r in rows)
    best = next((r for r in rows if r["community_id"] is not None), None)
    return str(best["community_id"]) if best and 2 * int(best["n"]) >= total else None
