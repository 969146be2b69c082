"""The one audited path by which an agent or the pipeline authors the knowledge graph.
`parse_payload` checks the shape before anything is written; `apply_payload` writes in the
caller's transaction through `GraphOps`: an entity found by canonical name, then alias, else
created; relations count mentions with a running-mean confidence; attributes keep their source
memory; one history row records who wrote what.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from signet.errors import InvalidInput
from signet.store import graph as graph_sql
from signet.store.graph_store import GraphOps
from signet.types import Actor

__all__ = ["GRAPH_HISTORY_ID", "GraphPayload", "apply_payload", "parse_payload"]

GRAPH_HISTORY_ID = "graph"
MAX_ITEMS = 500
MAX_NAME = 200
MAX_VALUE = 2000
AUTHORED_CONFIDENCE = 0.9


@dataclass(frozen=True, slots=True)
class EntitySpec:
    name: str
    entity_type: str | None = None
    description: str | None = None
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class AspectSpec:
    entity: str
    aspect: str
    description: str | None = None
    confidence: float = AUTHORED_CONFIDENCE


@dataclass(frozen=True, slots=True)
class AttributeSpec:
    entity: str
    aspect: str
    key: str
    value: str
    kind: str = "attribute"
    confidence: float = AUTHORED_CONFIDENCE


@dataclass(frozen=True, slots=True)
class EdgeSpec:
    """A dependency (structural, with strength) or a relation (typed, with confidence)."""

    source: str
    target: str
    type: str
    weight: float


@dataclass(frozen=True, slots=True)
class GraphPayload:
    entities: tuple[EntitySpec, ...] = ()
    aspects: tuple[AspectSpec, ...] = ()
    attributes: tuple[AttributeSpec, ...] = ()
    dependencies: tuple[EdgeSpec, ...] = ()
    relations: tuple[EdgeSpec, ...] = ()

    def is_empty(self) -> bool:
        return not (self.entities or self.aspects or self.attributes or self.dependencies
                    or self.relations)


@dataclass
class Applied:
    """What one payload wrote, by canonical entity name -> id."""

    entities: dict[str, str] = field(default_factory=dict)
    aliases: int = 0
    aspects: int = 0
    attributes: int = 0
    dependencies: int = 0
    relations: int = 0
    links: int = 0

    def summary(self) -> dict[str, Any]:
        return {
            "entities": sorted(self.entities), "aliases": self.aliases, "aspects": self.aspects,
            "attributes": self.attributes, "dependencies": self.dependencies,
            "relations": self.relations, "links": self.links,
        }


# -- parsing ----------------------------------------------------------------------------------

_KEYS = {"entities", "aspects", "attributes", "dependencies", "relations"}


def parse_payload(data: Any) -> GraphPayload:
    """Check a JSON payload and turn it into specs; raises InvalidInput naming the problem."""
    if isinstance(data, GraphPayload):
        return data
    if not isinstance(data, Mapping):
        raise InvalidInput("graph must be an object")
    unknown = set(data) - _KEYS
    if unknown:
        raise InvalidInput(f"graph: unknown key(s) {', '.join(sorted(unknown))}")
    return GraphPayload(
        entities=tuple(_entity(x) for x in _items(data, "entities")),
        aspects=tuple(_aspect(x) for x in _items(data, "aspects")),
        attributes=tuple(_attribute(x) for x in _items(data, "attributes")),
        dependencies=tuple(_edge(x, "strength", 0.5) for x in _items(data, "dependencies")),
        relations=tuple(_edge(x, "confidence", AUTHORED_CONFIDENCE) for x in _items(data, "relations")),
    )


def _items(data: Mapping[str, Any], key: str) -> list[Any]:
    items = data.get(key) or []
    if not isinstance(items, list):
        raise InvalidInput(f"graph.{key} must be a list")
    if len(items) > MAX_ITEMS:
        raise InvalidInput(f"graph.{key}: at most {MAX_ITEMS} items")
    return items


def _entity(item: Any) -> EntitySpec:
    if isinstance(item, str):
        return EntitySpec(_name(item, "entities[].name"))
    obj = _object(item, "entities[]")
    aliases = obj.get("aliases") or []
    if not isinstance(aliases, list):
        raise InvalidInput("graph.entities[].aliases must be a list of strings")
    return EntitySpec(
        _name(obj.get("name"), "entities[].name"),
        _optional(obj.get("type", obj.get("entity_type")), "entities[].type"),
        _optional(obj.get("description"), "entities[].description", MAX_VALUE),
        tuple(_name(a, "entities[].aliases[]") for a in aliases),
    )


def _aspect(item: Any) -> AspectSpec:
    obj = _object(item, "aspects[]")
    return AspectSpec(
        _name(obj.get("entity"), "aspects[].entity"),
        _label(obj.get("aspect", obj.get("name")), "aspects[].aspect"),
        _optional(obj.get("description"), "aspects[].description", MAX_VALUE),
        _unit(obj.get("confidence", AUTHORED_CONFIDENCE), "aspects[].confidence"),
    )


def _attribute(item: Any) -> AttributeSpec:
    obj = _object(item, "attributes[]")
    kind = obj.get("kind", "attribute")
    if kind not in ("attribute", "constraint"):
        raise InvalidInput("graph.attributes[].kind must be attribute or constraint")
    return AttributeSpec(
        _name(obj.get("entity"), "attributes[].entity"),
        _label(obj.get("aspect"), "attributes[].aspect"),
        _label(obj.get("key"), "attributes[].key"),
        _text(obj.get("value"), "attributes[].value", MAX_VALUE),
        kind,
        _unit(obj.get("confidence", AUTHORED_CONFIDENCE), "attributes[].confidence"),
    )


def _edge(item: Any, weight_key: str, default: float) -> EdgeSpec:
    obj = _object(item, "edge")
    return EdgeSpec(
        _name(obj.get("source"), "source"),
        _name(obj.get("target"), "target"),
        _label(obj.get("type", "related_to"), "type"),
        _unit(obj.get(weight_key, default), weight_key),
    )


def _object(item: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(item, Mapping):
        raise InvalidInput(f"graph.{where} must be an object")
    return item


def _text(value: Any, where: str, limit: int) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"graph.{where} must be a non-empty string")
    if len(value) > limit:
        raise InvalidInput(f"graph.{where} is longer than {limit} characters")
    return " ".join(value.split())


def _name(value: Any, where: str) -> str:
    text = _text(value, where, MAX_NAME)
    # A letter or digit as sent (what the API's schema says: [^\W_]), and one left once
    # canonicalised (a possessive alone, "'s", leaves none).
    if not any(ch.isalnum() for ch in text) or not graph_sql.canonical(text):
        raise InvalidInput(f"graph.{where} {text!r} has no letters or digits")
    return text


def _label(value: Any, where: str) -> str:
    """Aspect names, keys and edge types compare lowercased."""
    return _text(value, where, MAX_NAME).lower()


def _optional(value: Any, where: str, limit: int = MAX_NAME) -> str | None:
    return None if value is None else _text(value, where, limit)


def _unit(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise InvalidInput(f"graph.{where} must be a number between 0 and 1")
    return float(value)


# -- applying ---------------------------------------------------------------------------------


def apply_payload(
    graph: GraphOps,
    payload: GraphPayload,
    *,
    agent_id: str,
    actor: Actor,
    now: str,
    memory_id: str | None = None,
) -> Applied:
    """Write the payload (inside the caller's write transaction) and record it in history."""
    applied = Applied()
    for spec in payload.entities:
        entity_id = _entity_id(graph, spec.name, agent_id, now, applied)
        graph.set_entity_details(
            entity_id, entity_type=spec.entity_type, description=spec.description, now=now
        )
        for alias in spec.aliases:
            applied.aliases += graph.add_alias(entity_id, alias, agent_id=agent_id, now=now)
    aspect_ids: dict[tuple[str, str], str] = {}
    for aspect in payload.aspects:
        _aspect_id(graph, aspect.entity, aspect.aspect, aspect, agent_id, now, applied, aspect_ids)
    for attr in payload.attributes:
        aspect_id = _aspect_id(graph, attr.entity, attr.aspect, None, agent_id, now, applied, aspect_ids)
        graph.upsert_attribute(
            aspect_id, applied.entities[graph_sql.canonical(attr.entity)], attr.key,
            attr.value, kind=attr.kind, confidence=attr.confidence,
            source_memory_id=memory_id, agent_id=agent_id, now=now,
        )
        applied.attributes += 1
    for edge in payload.dependencies:
        source, target = _ends(graph, edge, agent_id, now, applied)
        graph.upsert_dependency(
            source, target, edge.type, strength=edge.weight, agent_id=agent_id, now=now
        )
        applied.dependencies += 1
    for edge in payload.relations:
        source, target = _ends(graph, edge, agent_id, now, applied)
        graph.upsert_relation_mean(
            source, target, edge.type, confidence=edge.weight, strength=None, now=now
        )
        applied.relations += 1
    if memory_id is not None:
        for key, entity_id in applied.entities.items():
            applied.links += graph.link_mention(
                memory_id, entity_id, mention_text=key, confidence=1.0, now=now
            )
    graph.record_history(
        memory_id or GRAPH_HISTORY_ID, "none", actor, now, reason="graph payload applied",
        metadata={"graph": applied.summary()},
    )
    return applied


def _entity_id(graph: GraphOps, name: str, agent_id: str, now: str, applied: Applied) -> str:
    key = graph_sql.canonical(name)
    if key in applied.entities:
        return applied.entities[key]
    found = graph.resolve([key], agent_id).get(key)
    entity_id = found or graph.upsert_entity(name, agent_id=agent_id, now=now)
    applied.entities[key] = entity_id
    return entity_id


def _aspect_id(
    graph: GraphOps, entity: str, name: str, spec: AspectSpec | None, agent_id: str, now: str,
    applied: Applied, seen: dict[tuple[str, str], str],
) -> str:
    entity_id = _entity_id(graph, entity, agent_id, now, applied)
    if (entity_id, name) in seen and spec is None:
        return seen[(entity_id, name)]
    aspect_id = graph.upsert_aspect(
        entity_id, name, agent_id=agent_id,
        description=spec.description if spec else None,
        confidence=spec.confidence if spec else AUTHORED_CONFIDENCE, now=now,
    )
    if (entity_id, name) not in seen:
        applied.aspects += 1
    seen[(entity_id, name)] = aspect_id
    return aspect_id


def _ends(
    graph: GraphOps, edge: EdgeSpec, agent_id: str, now: str, applied: Applied
) -> tuple[str, str]:
    return (_entity_id(graph, edge.source, agent_id, now, applied),
            _entity_id(graph, edge.target, agent_id, now, applied))
