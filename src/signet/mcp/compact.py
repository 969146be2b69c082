"""Compact results for agents: what an agent reads to use a memory, not the whole row.

A 10-result search in the full HTTP shape is about 14 KB of JSON for a few hundred characters
of memory text: 33 fields per result (hashes, counters, extraction state, per-channel
evidence), all of it paid for in the agent's context window. By default the MCP tools that
return lists of memories keep, per memory, `id`, `content`, `type`, `tags`, `created_at`,
`source` (the memory's source type: manual, session, pipeline, ...) and, for search results,
`confidence` (how likely it answers the query; recall's fused score only ranks, and the order
already says that); `verbose: true` returns the full shape instead. Session search results
lose their `score` for the same reason: the order ranks them, and the number means nothing to
an agent.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "MEMORY_FIELDS", "SEARCH_FIELDS", "compact_memory", "compact_page", "compact_search",
    "compact_sessions",
]

JSON = dict[str, Any]

MEMORY_FIELDS = ("id", "content", "type", "tags", "created_at", "source")
SEARCH_FIELDS = ("id", "content", "confidence", "type", "tags", "created_at", "source")


def compact_memory(memory: JSON, fields: tuple[str, ...] = MEMORY_FIELDS) -> JSON:
    """The named fields of one memory (or search result); `source` from its source type."""
    full = {**memory, "source": memory.get("source_type")}
    out = {name: full.get(name) for name in fields if name in full}
    if "transcript" in memory:  # asked for with expand: part of what the agent wanted
        out["transcript"] = memory["transcript"]
    return out


def compact_search(response: JSON) -> JSON:
    """A recall answer with compact results, its query and method, and the result count."""
    results = [compact_memory(hit, SEARCH_FIELDS) for hit in response.get("results", [])]
    return {"results": results, "query": response.get("query"),
            "method": response.get("method"), "count": len(results)}


def compact_page(page: JSON) -> JSON:
    """A list page with compact items."""
    return {**page, "items": [compact_memory(m) for m in page.get("items", [])]}


def compact_sessions(found: JSON) -> JSON:
    """A session search answer without the ranking score (the order already says it)."""
    items = [{k: v for k, v in item.items() if k != "score"} for item in found.get("items", [])]
    return {**found, "items": items}
