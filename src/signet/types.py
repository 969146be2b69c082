"""Plain values that cross layers: memories, filters, actors, recall results.

Frozen dataclasses inside the system; pydantic appears only at the JSON edges (daemon, MCP).
Timestamps are ISO-8601 UTC strings with milliseconds (`2026-11-29T12:00:00.000Z`), which sort
lexically in SQLite and survive JSON unchanged.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

# The largest integer SQLite and PostgreSQL (bigint) hold: the furthest offset a page may ask
# (past it the store would overflow binding it, not answer no rows).
MAX_OFFSET = 2**63 - 1

MEMORY_TYPES: tuple[str, ...] = (
    "fact",
    "preference",
    "decision",
    "procedural",
    "semantic",
    "constraint",
    "episodic",
    "document_chunk",
    "summary",
    "note",
)
# The vocabularies adapters name in their schemas (the store's CHECK constraints hold the same).
JOB_TYPES: tuple[str, ...] = ("extract", "hints", "embed", "document_ingest", "summary", "graph")
JOB_STATUSES: tuple[str, ...] = ("pending", "leased", "completed", "failed", "dead")
FEEDBACK_TYPES: tuple[str, ...] = ("positive", "negative", "correction")
ActorType = Literal["operator", "agent", "daemon"]


def utc_now() -> str:
    return format_ts(datetime.now(UTC))


def format_ts(moment: datetime) -> str:
    moment = moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def parse_ts(text: str) -> datetime:
    """Parse an ISO date or date-time; naive values are taken as UTC."""
    value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return value if value.tzinfo else value.replace(tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Actor:
    """Who asks for a change; recorded on every history row."""

    name: str = "operator"
    type: ActorType = "operator"
    session_id: str | None = None
    request_id: str | None = None
    agent_id: str = "default"
    token_id: str | None = None  # the verified token behind an HTTP or MCP call


@dataclass(frozen=True, slots=True)
class Memory:
    id: str
    content: str
    type: str
    category: str | None
    content_hash: str | None
    normalized_content: str | None
    confidence: float
    importance: float
    source_id: str | None
    source_type: str | None
    tags: tuple[str, ...]
    who: str | None
    why: str | None
    project: str | None
    agent_id: str
    session_id: str | None
    created_at: str
    updated_at: str
    event_at: str | None
    is_deleted: bool
    deleted_at: str | None
    extraction_status: str
    embedding_model: str | None
    extraction_model: str | None
    update_count: int
    version: int
    last_accessed: str | None
    access_count: int
    pinned: bool
    hints: str = ""
    # The later memory that replaced this one on the same subject (None: current).
    superseded_by: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {name: _jsonable(getattr(self, name)) for name in self.__dataclass_fields__}


def _jsonable(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


@dataclass(frozen=True, slots=True)
class NewMemory:
    """What remember() writes; the store fills ids, hashes and timestamps."""

    content: str
    type: str = "fact"
    category: str | None = None
    confidence: float = 1.0
    importance: float = 0.5
    source_id: str | None = None
    source_type: str | None = None
    tags: tuple[str, ...] = ()
    who: str | None = None
    why: str | None = None
    project: str | None = None
    pinned: bool = False
    event_at: str | None = None
    agent_id: str = "default"
    session_id: str | None = None


# What `modify` may change (the PATCH body, a batch item's changes), and which of those a
# change may clear to null. The one list: the HTTP bodies and the checks follow it
# (tests/test_memory_fields.py).
MODIFIABLE_FIELDS: tuple[str, ...] = (
    "content", "type", "tags", "importance", "pinned", "category", "who", "why", "project",
)
NULLABLE_FIELDS: tuple[str, ...] = ("category", "who", "why", "project")


@dataclass(frozen=True, slots=True)
class MemoryFilters:
    """Filters shared by list and recall. `None` means "no constraint"."""

    type: str | None = None
    tags: tuple[str, ...] = ()
    who: str | None = None
    project: str | None = None
    since: str | None = None
    until: str | None = None
    pinned: bool | None = None
    importance_min: float | None = None
    agent_id: str | None = None
    source_id: str | None = None
    include_deleted: bool = False
    # A community id (entity_communities.id): memories mentioning one of its entities.
    community: str | None = None
    # Set for a scoped caller: recall ranks with the statistics of the filtered slice alone, so
    # nothing outside it moves a score (store/slice_bm25.py). Not a filter itself.
    isolated: bool = False


@dataclass(frozen=True, slots=True)
class MemoryScope:
    """The slice of memory a scoped token may see and touch; `None` fields do not constrain.
    The app checks it in SQL before reading a memory's content (docs/security.md)."""

    agent_id: str | None = None
    project: str | None = None


@dataclass(frozen=True, slots=True)
class HistoryEvent:
    id: str
    memory_id: str
    event: str
    old_content: str | None
    new_content: str | None
    changed_by: str
    reason: str | None
    metadata: dict[str, Any] | None
    actor_type: str | None
    session_id: str | None
    request_id: str | None
    created_at: str
    token_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


@dataclass(frozen=True, slots=True)
class RememberResult:
    id: str
    deduped: bool
    memory: Memory
    embedded: bool = False


@dataclass(frozen=True, slots=True)
class Page:
    items: tuple[Memory, ...]
    total: int
    limit: int
    offset: int


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class Evidence:
    """Per-channel scores of one recall result; a channel that did not find it is None."""

    lexical: float | None = None
    semantic: float | None = None
    hint: float | None = None
    traversal: float | None = None
    # Whole-source evidence (recall/sources.py): BM25 over the source's whole text, and the
    # cosine of the source's closest member; carried by the source's representative memory.
    source: float | None = None
    source_semantic: float | None = None
    # The conversation context lent by a neighbour (recall/context.py), never the memory's own.
    context: float | None = None
    # What the confidence reads (recall/confidence.py): the query's cosine to this memory (or
    # its source's closest member) whether or not a channel ranked it, and the share of the
    # query's informative terms the memory holds.
    cosine: float | None = None
    coverage: float | None = None
    lexical_rank: int | None = None
    semantic_rank: int | None = None


@dataclass(frozen=True, slots=True)
class RecallHit:
    memory: Memory
    score: float
    evidence: Evidence
    adjustments: tuple[str, ...] = ()
    transcript: str | None = None
    # How likely the result is what the query asks for, in [0, 1] (recall/confidence.py).
    confidence: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        data = self.memory.to_dict()
        data["score"] = round(self.score, 6)
        data["confidence"] = round(self.confidence, 4)
        data["evidence"] = {
            k: getattr(self.evidence, k) for k in self.evidence.__dataclass_fields__
        }
        data["adjustments"] = list(self.adjustments)
        if self.transcript is not None:
            data["transcript"] = self.transcript
        return data


@dataclass(frozen=True, slots=True)
class RecallQuery:
    query: str
    limit: int = 10
    filters: MemoryFilters = field(default_factory=MemoryFilters)
    mode: Literal["hybrid", "keyword", "vector", "full"] = "hybrid"
    min_score: float | None = None
    expand: bool = False
    # Being returned by a search is not an access: only a caller that used the results (an
    # injection the agent consumed) asks recall to record one.
    touch: bool = False
    # Drop results whose confidence is below this (None: keep all; recall/confidence.py).
    min_confidence: float | None = None

    @property
    def graph_agent(self) -> str:
        """The agent whose knowledge graph recall walks (and whose hubs it dampens)."""
        return self.filters.agent_id or "default"


@dataclass(frozen=True, slots=True)
class RecallResponse:
    hits: tuple[RecallHit, ...]
    query: str
    method: str
    timings_ms: dict[str, float]
    degraded: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "results": [hit.to_dict() for hit in self.hits],
            "query": self.query,
            "method": self.method,
            "meta": {
                "count": len(self.hits),
                "timings": {k: round(v, 3) for k, v in self.timings_ms.items()},
                "degraded": list(self.degraded),
            },
        }
