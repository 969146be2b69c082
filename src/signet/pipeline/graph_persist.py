"""Graph persistence: the entities and relations of one extraction, in its own transaction after the
facts, whose failure never reverts them. Entities are upserted by canonical name for the memory's
agent; a relation's mention count grows on every re-extraction; memories are linked to the
entities they yielded or name.
"""

from __future__ import annotations

from collections.abc import Sequence

from signet.pipeline.extraction import ExtractedEntity
from signet.store import graph as graph_sql
from signet.store.graph_store import GraphOps
from signet.types import Memory

__all__ = ["persist_graph"]


def persist_graph(
    graph: GraphOps,
    entities: Sequence[ExtractedEntity],
    *,
    source: Memory,
    written: Sequence[tuple[str, str]],
    now: str,
) -> dict[str, int]:
    """Write the triples through `graph` (the statements of one open write transaction, on
    either store backend: store/graph_store.py); `written` holds (memory id, content) of the facts written from
    `source`. Returns counts of entities touched, relations and new mention links."""
    ids: dict[str, str] = {}
    relations = links = 0
    for triple in entities:
        for name in (triple.source, triple.target):
            key = graph_sql.canonical(name)
            if key not in ids:
                ids[key] = graph.upsert_entity(name, agent_id=source.agent_id, now=now)
                links += graph.link_mention(
                    source.id, ids[key], mention_text=name,
                    confidence=triple.confidence, now=now,
                )
        graph.upsert_relation(
            ids[graph_sql.canonical(triple.source)], ids[graph_sql.canonical(triple.target)],
            triple.relationship, confidence=triple.confidence, now=now,
        )
        relations += 1
    for memory_id, content in written:
        text = content.lower()
        for key, entity_id in ids.items():
            if key in text:
                links += graph.link_mention(
                    memory_id, entity_id, mention_text=key, confidence=None, now=now
                )
    return {"entities": len(ids), "relations": relations, "links": links}
