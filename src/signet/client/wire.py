"""The HTTP contract's JSON shapes as `TypedDict`s: what `signet.Client` returns.

The client hands back the daemon's JSON as it came (plain dicts, so `json.dumps` prints them
and nothing is lost when the daemon adds a key); these types only tell a type checker and a
reader which keys each answer carries. They mirror `Memory.to_dict()`, `RecallResponse.to_dict()`
and the route bodies in docs/api.md.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

__all__ = [
    "HistoryEventJSON", "HistoryJSON", "MemoryJSON", "PageJSON", "RecallHitJSON", "RecallJSON",
    "RememberJSON",
]


class MemoryJSON(TypedDict):
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
    tags: list[str]
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
    hints: str
    superseded_by: str | None


class RememberJSON(TypedDict):
    id: str
    deduped: bool
    embedded: bool
    memory: MemoryJSON


class RecallHitJSON(MemoryJSON):
    score: float
    evidence: dict[str, float | int | None]
    adjustments: list[str]
    transcript: NotRequired[dict[str, Any]]


class RecallJSON(TypedDict):
    results: list[RecallHitJSON]
    query: str
    method: str
    meta: dict[str, Any]


class PageJSON(TypedDict):
    items: list[MemoryJSON]
    total: int
    limit: int
    offset: int


class HistoryEventJSON(TypedDict):
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


class HistoryJSON(TypedDict):
    history: list[HistoryEventJSON]
