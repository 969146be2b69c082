"""Compact results for agents: what an agent reads to use a memory, not the whole row.

A full ten-result search is about 14 KB of JSON, paid for in the agent's context. The list tools
keep `id`, `content`, `type`, `tags`, `created_at`, `source` and, for search, `confidence`;
`verbose: true` returns the full shape. Session search results lose their `score`: the order ranks
them.
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
