"""The knowledge graph's operations, held by the app as `app.graph`, over the graph store on either
backend.

`hooks` is the graph's part of the ranking spec (channels, the boost's RRF weight, the flat
reservation, the hub lookup), so the graph never touches a built Recaller. The rest serves the
adapters: entities, pins, communities, stats, the authoring path (`apply`) and `on_feedback`
(graph/desire.py), called inside the feedback write transaction.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from typing import Any

from signet.clock import Clock, SystemClock, stamp
from signet.config import PipelineConfig
from signet.errors import Frozen, InvalidInput, NotFound
from signet.graph import communities as community_detection
from signet.graph import desire
from signet.graph.apply import GraphPayload, apply_payload, parse_payload
from signet.graph.channels import GraphBoostChannel, TraversalChannel
from signet.graph.hubs import HubIndex
from signet.graph.shaping import reserve_flat
from signet.recall.spec import BOOST_WEIGHT, GraphHooks
from signet.store.graph import canonical
from signet.store.graph_store import GraphOps, GraphStore
from signet.types import MAX_OFFSET, Actor, MemoryFilters, RecallHit

__all__ = ["KnowledgeGraph"]

log = logging.getLogger(__name__)

MAX_ENTITY_MEMORIES = 50


@dataclass
class KnowledgeGraph:
    store: GraphStore
    config: PipelineConfig
    traversal: TraversalChannel
    boost: GraphBoostChannel
    hubs: HubIndex
    clock: Clock = field(default_factory=SystemClock)

    @classmethod
    def build(
        cls, store: GraphStore, config: PipelineConfig, embedder_model: str | None, clock: Clock,
    ) -> KnowledgeGraph:
        """The graph over `store` (the backend's graph statements)."""
        return cls(
            store, config,
            TraversalChannel(store, config.graph, config.traversal, embedder_model),
            GraphBoostChannel(store, config.graph, config.traversal),
            HubIndex(store), clock=clock,
        )

    def hooks(self) -> GraphHooks:
        """The graph's part of the ranking spec. The channels are there even with the graph
        off (each returns nothing then), so mode full ranks as hybrid; the hub lookup only
        when the graph is on."""
        return GraphHooks(
            channels=(self.traversal, self.boost),
            weights={self.boost.name: BOOST_WEIGHT},
            shape=self.shape,
            hub_memories=self.hubs if self.config.graph.enabled else None,
        )

    def shape(self, hits: list[RecallHit], limit: int) -> list[RecallHit]:
        return reserve_flat(hits, limit, self.config.traversal.flat_reserve_fraction)

    # -- feedback ------------------------------------------------------------------------------

    def on_feedback(self, graph: GraphOps, memory_id: str, feedback_type: str, now: str) -> None:
        """Desire paths: move the weights of the path that reached the memory (`graph`: the
        statements of the feedback's write transaction). Never raises: the feedback row is
        what the caller asked for."""
        if not self.config.graph.enabled:
            return
        try:
            desire.reinforce(graph, memory_id, feedback_type, self.traversal.paths.path_to(memory_id), now)
        except Exception as exc:  # the graph never fails the feedback itself
            log.warning("desire-path update failed for %s: %s", memory_id, exc)

    # -- reading -------------------------------------------------------------------------------

    def entities(
        self, *, agent_id: str = "default", search: str | None = None, limit: int = 50,
        offset: int = 0,
    ) -> dict[str, Any]:
        if not 1 <= limit <= 1000 or not 0 <= offset <= MAX_OFFSET:
            raise InvalidInput(f"limit must be 1-1000 and offset between 0 and {MAX_OFFSET}")
        with self.store.reading() as graph:
            items, total = graph.list_entities(
                agent_id=agent_id, search=search, limit=limit, offset=offset
            )
        return {"items": items, "total": total, "limit": limit, "offset": offset}

    def entity(self, entity_id: str) -> dict[str, Any]:
        with self.store.reading() as graph:
            found = graph.get_entity(entity_id)
            if found is None:
                raise NotFound(f"entity {entity_id} not found")
            return {
                **found,
                "aliases": graph.aliases(entity_id),
                "aspects": graph.aspects_with_attributes(entity_id),
                "dependencies": graph.dependencies(entity_id),
                "memories": graph.memories(entity_id, MAX_ENTITY_MEMORIES),
            }

    def find(self, ref: str, agent_id: str = "default") -> str:
        """An entity id from an id, a name or an alias (any case or punctuation)."""
        with self.store.reading() as graph:
            if graph.get_entity(ref) is not None:
                return ref
            key = canonical(ref)
            found = graph.resolve([key], agent_id).get(key)
            if found is None:  # last, a short id (names win: an entity may be called "cafe")
                found = graph.entity_by_prefix(ref)
            if graph.get_entity(found) is None:
                raise NotFound(f"no entity {ref!r}")
            return found

    def communities(self, agent_id: str = "default") -> list[dict[str, Any]]:
        with self.store.reading() as graph:
            return graph.communities(agent_id)

    def community_id(self, ref: str, agent_id: str | None = None) -> str:
        """A community id from an id or a name (its label, any case) that names one community;
        NotFound or InvalidInput (ambiguous) naming `ref` otherwise."""
        ref = ref.strip()
        if not ref:
            raise InvalidInput("community must be a community id or name")
        with self.store.reading() as graph:
            found = graph.community_ids(ref, agent_id)
        if not found:
            raise NotFound(f"no community {ref!r} (name one by its id or label)")
        if len(found) > 1:
            raise InvalidInput(
                f"community name {ref!r} is ambiguous ({len(found)} communities): pass its id"
            )
        return found[0]

    def stats(self, agent_id: str = "default") -> dict[str, Any]:
        with self.store.reading() as graph:
            return {
                **graph.stats(agent_id), "hub_threshold": self.hubs.threshold(graph, agent_id),
            }

    def community_filter(self, filters: MemoryFilters) -> MemoryFilters:
        """The community filter by id: a name is resolved, unknown or ambiguous ones are
        refused naming it."""
        if filters.community is None:
            return filters
        return replace(filters, community=self.community_id(filters.community, filters.agent_id))

    # -- writing -------------------------------------------------------------------------------

    def pin(
        self, entity_id: str, *, suppress: bool = False, weight: float | None = None,
        reason: str | None = None, actor: Actor = Actor(),
    ) -> dict[str, Any]:
        """Pin (always focal in traversal) or suppress (never focal, never walked) an entity."""
        self._check_mutable()
        if weight is not None and (isinstance(weight, bool) or not 0 < weight <= 10):
            raise InvalidInput("weight must be a number above 0 and at most 10")
        with self.store.writing() as graph:
            found = graph.get_entity(entity_id)
            if found is None:
                raise NotFound(f"entity {entity_id} not found")
            graph.set_pin(
                entity_id, agent_id=found["agent_id"],
                pin_type="suppress" if suppress else "pin", weight=weight, reason=reason,
                pinned_by=actor.name, now=stamp(self.clock),
            )
            return graph.get_entity(entity_id) or found

    def unpin(self, entity_id: str) -> dict[str, Any]:
        self._check_mutable()
        with self.store.writing() as graph:
            found = graph.get_entity(entity_id)
            if found is None:
                raise NotFound(f"entity {entity_id} not found")
            graph.clear_pin(entity_id, agent_id=found["agent_id"])
            return graph.get_entity(entity_id) or found

    def detect_communities(self, agent_id: str = "default") -> list[dict[str, Any]]:
        """Louvain over the dependency weights; replaces the stored communities."""
        self._check_mutable()
        with self.store.reading() as graph:
            edges = graph.dependency_weights(agent_id)
            names = graph.entity_names(sorted({n for e in edges for n in e[:2]}))
        found = community_detection.detect(edges, names)
        with self.store.writing() as graph:
            graph.replace_communities(agent_id, [c.to_row() for c in found], stamp(self.clock))
        return self.communities(agent_id)

    def apply(
        self, payload: Any, *, memory_id: str | None = None, actor: Actor = Actor(),
        graph: GraphOps | None = None,
    ) -> dict[str, Any]:
        """Author the graph through the one audited path (graph/apply.py): in `graph`, the
        statements of the caller's open write transaction (remember's, so the memory and its
        graph commit together), else in a transaction of its own. Returns what was written."""
        self._check_mutable()
        spec = parse_payload(payload)
        if graph is not None:
            return self._apply(graph, spec, memory_id, actor)
        with self.store.writing() as own:
            return self._apply(own, spec, memory_id, actor)

    def _apply(
        self, graph: GraphOps, spec: GraphPayload, memory_id: str | None, actor: Actor
    ) -> dict[str, Any]:
        if memory_id is not None and not graph.memory_exists(memory_id):
            raise NotFound(f"memory {memory_id} not found")
        applied = apply_payload(graph, spec, agent_id=actor.agent_id, actor=actor,
                                now=stamp(self.clock), memory_id=memory_id)
        return applied.summary()

    def _check_mutable(self) -> None:
        if self.config.mutations_frozen:
            raise Frozen()
