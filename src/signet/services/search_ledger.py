"""The recall QA ledger (`memory.pipelineV2.telemetry.memorySearchQaEnabled`): one row per recall
with the query, filters, results and time, so an operator can find the questions that found
nothing. Written after the recall in its own short transaction; a failed write never fails the
recall. A row is labelled with the asking token's scope; a scoped caller reads only the rows
of callers inside its slice.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

from signet.clock import Clock, stamp
from signet.config import Config
from signet.errors import InvalidInput, NotFound
from signet.services.memory_input import check_ts
from signet.store import search_telemetry as qa_sql
from signet.store.fts import query_tokens
from signet.store.search_telemetry import LedgerStore
from signet.types import MAX_OFFSET, Actor, MemoryScope, RecallQuery, RecallResponse

__all__ = ["SearchLedger", "ledger_entry"]

log = logging.getLogger(__name__)


@dataclass
class SearchLedger:
    """The ledger over a LedgerStore (store/search_telemetry.py): the same service on SQLite
    and PostgreSQL."""

    config: Config
    rows: LedgerStore
    clock: Clock

    @property
    def enabled(self) -> bool:
        return self.config.pipeline.telemetry.memory_search_qa_enabled

    def ensure(self) -> None:
        """The ledger's table, created when the ledger is on (at open)."""
        if self.enabled:
            self.rows.ensure()

    def record(
        self, query: RecallQuery, response: RecallResponse, actor: Actor, route: str,
        started: float, scope: MemoryScope | None = None,
    ) -> None:
        """One row for a recall that started at `started` (time.perf_counter), when enabled;
        `scope` is the caller's (None: unscoped)."""
        if not self.enabled:
            return
        entry = ledger_entry(query, response, actor, route, started, scope)
        try:
            self.rows.record(entry, stamp(self.clock))
        except Exception:  # the ledger is a diagnostic, never a reason to fail
            log.exception("recall QA ledger write failed")

    def page(
        self, *, agent_id: str | None = None, project: str | None = None,
        since: str | None = None, no_hits: bool | None = None, limit: int = 100, offset: int = 0,
    ) -> dict[str, Any]:
        """The ledger, newest first; `agent_id` and `project` (a caller's scope) restrict it in
        SQL, None means every agent or project."""
        if not self.enabled:
            raise NotFound(
                "the recall QA ledger is off (memory.pipelineV2.telemetry.memorySearchQaEnabled)",
                code="search_qa_disabled",
            )
        if not 1 <= limit <= 10_000 or not 0 <= offset <= MAX_OFFSET:
            raise InvalidInput(f"limit must be between 1 and 10000 and offset between 0 and {MAX_OFFSET}")
        if since is not None:
            check_ts(since, "since")
        rows, total = self.rows.list_rows(
            agent_id=agent_id, project=project, since=since, no_hits=no_hits, limit=limit,
            offset=offset,
        )
        items = [{**row, "agent_id": row["agent_id"] or None} for row in rows]
        return {"items": items, "total": total, "limit": limit, "offset": offset}


def ledger_entry(
    query: RecallQuery, response: RecallResponse, actor: Actor, route: str, started: float,
    scope: MemoryScope | None = None,
) -> dict[str, Any]:
    """One ledger row: the query, its filters, what came back and how fast."""
    filters = {k: v for k, v in _vars_of(query.filters).items() if v not in (None, (), False)}
    # The row is labelled with the asker's scope, which holds its query and its results, so a
    # scoped reader gets only rows of callers inside its own slice. An unscoped recall ranges
    # over every agent and project, whoever asked: it carries neither. The column is NOT NULL,
    # and no token is scoped to a blank agent, so "" stands for "no one agent" (read back as
    # None).
    agent, project = (scope.agent_id, scope.project) if scope is not None else (None, None)
    hits = response.hits
    channels: dict[str, int] = {}
    for hit in hits:
        for name, value in _vars_of(hit.evidence).items():
            if value is not None:
                channels[name] = channels.get(name, 0) + 1
    return {
        "route": route, "agent_id": agent or "", "session_key": actor.session_id,
        "project": project, "query": query.query,
        "keyword_query": " ".join(query_tokens(query.query)) or None,
        "filters_json": filters, "method": response.method, "result_count": len(hits),
        "top_score": round(hits[0].score, 6) if hits else None, "no_hits": not hits,
        "duration_ms": round((time.perf_counter() - started) * 1000, 3),
        "timings_json": response.timings_ms,
        "results_json": [
            {"id": h.memory.id, "score": round(h.score, 6), "type": h.memory.type,
             "content": h.memory.content[: qa_sql.SNAPSHOT_CHARS]}
            for h in hits
        ],
        "sources_json": channels,
    }


def _vars_of(value: Any) -> dict[str, Any]:
    """A slotted dataclass's fields as a dict (tuples kept as lists for JSON)."""
    return {
        name: list(v) if isinstance(v := getattr(value, name), tuple) else v
        for name in value.__dataclass_fields__
    }
