"""The knowledge graph's operations, held by the app as `app.graph`.

`KnowledgeGraph.build` makes the graph's channels; `hooks` is the graph's part of the ranking
spec (recall/spec.py) the root builds the one Recaller from: the traversal and legacy-boost
channels, the small RRF weight of the boost, the flat-channel reservation (graph/shaping.py)
and the hub lookup for dampening (graph/hubs.py). The graph never touches a built Recaller. The rest serves the adapters: entity lists
and detail, pins, communities, stats, and `on_feedback` (desire paths, graph/desire.py), which
the app calls inside the feedback write transaction.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from signet.clock import Clock, SystemClock, stamp
from signet.config import PipelineConfig
from signet.errors import Frozen, InvalidInput, NotFound
from signet.graph import communities as community_detection
from signet.graph import desire
from signet.graph.channels import GraphBoostChannel, TraversalChannel
from signet.graph.hubs import HubIndex
from signet.graph.shaping import reserve_flat
from signet.recall.spec import BOOST_WEIGHT, GraphHooks
from signet.store import graph_views as views
from signet.store import knowledge as know_sql
from signet.store.connection import Connection
from signet.store.db import Store
from signet.store.graph import canonical
from signet.store.prefixes import resolve_prefix
from signet.types import Actor, RecallHit

__all__ = ["KnowledgeGraph"]

log = logging.getLogger(__name__)

MAX_ENTITY_MEMORIES = 50


@dataclass
class KnowledgeGraph:
    store: Store
    config: PipelineConfig
    traversal: TraversalChannel
    boost: GraphBoostChannel
    hubs: HubIndex = field(default_factory=HubIndex)
    clock: Clock = field(default_factory=SystemClock)

    @classmethod
    def build(
        cls, store: Store, config: PipelineConfig, embedder_model: str | None, clock: Clock
    ) -> KnowledgeGraph:
        return cls(
            store, config,
            TraversalChannel(config.graph, config.traversal, embedder_model),
            GraphBoostChannel(config.graph, config.traversal),
            clock=clock,
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

    def on_feedback(self, conn: Connection, memory_id: str, feedback_type: str, now: str) -> None:
        """Desire paths: move the weights of the path that reached the memory. Never raises:
        the feedback row is what the caller asked for."""
        if not self.config.graph.enabled:
            return
        try:
            desire.reinforce(conn, memory_id, feedback_type, self.traversal.paths.path_to(memory_id), now)
        except Exception as exc:  # noqa: BLE001 - the graph never fails the feedback itself
            log.warning("desire-path update failed for %s: %s", memory_id, exc)

    # -- reading -------------------------------------------------------------------------------

    def entities(
        self, *, agent_id: str = "default", search: str | None = None, limit: int = 50,
        offset: int = 0,
    ) -> dict[str, Any]:
        if not 1 <= limit <= 1000 or offset < 0:
            raise InvalidInput("limit must be 1-1000 and offset not negative")
        items, total = views.list_entities(
            self.store.reader(), agent_id=agent_id, search=search, limit=limit, offset=offset
        )
        return {"items": items, "total": total, "limit": limit, "offset": offset}

    def entity(self, entity_id: str) -> dict[str, Any]:
        conn = self.store.reader()
        found = views.get_entity(conn, entity_id)
        if found is None:
            raise NotFound(f"entity {entity_id} not found")
        return {
            **found,
            "aliases": views.aliases(conn, entity_id),
            "aspects": views.aspects_with_attributes(conn, entity_id),
            "dependencies": views.dependencies(conn, entity_id),
            "memories": views.memories(conn, entity_id, MAX_ENTITY_MEMORIES),
        }

    def find(self, ref: str, agent_id: str = "default") -> str:
        """An entity id from an id, a name or an alias (any case or punctuation)."""
        conn = self.store.reader()
        if views.get_entity(conn, ref) is not None:
            return ref
        key = canonical(ref)
        found = know_sql.resolve(conn, [key], agent_id).get(key)
        if found is None:  # last, a short id (names win: an entity may be called "cafe")
            found = resolve_prefix(conn, "entities", ref, noun="entity")
        if views.get_entity(conn, found) is None:
            raise NotFound(f"no entity {ref!r}")
        return found

    def communities(self, agent_id: str = "default") -> list[dict[str, Any]]:
        return views.communities(self.store.reader(), agent_id)

    def community_id(self, ref: str, agent_id: str | None = None) -> str:
        """A community id from an id or a name (its label, any case) that names one community;
        NotFound or InvalidInput (ambiguous) naming `ref` otherwise."""
        ref = ref.strip()
        if not ref:
            raise InvalidInput("community must be a community id or name")
        found = views.community_ids(self.store.reader(), ref, agent_id)
        if not found:
            raise NotFound(f"no community {ref!r} (name one by its id or label)")
        if len(found) > 1:
            raise InvalidInput(
                f"community name {ref!r} is ambiguous ({len(found)} communities): pass its id"
            )
        return found[0]

    def stats(self, agent_id: str = "default") -> dict[str, Any]:
        conn = self.store.reader()
        return {**views.stats(conn, agent_id), "hub_threshold": self.hubs.threshold(conn)}

    # -- writing -------------------------------------------------------------------------------

    def pin(
        self, entity_id: str, *, suppress: bool = False, weight: float | None = None,
        reason: str | None = None, actor: Actor = Actor(),
    ) -> dict[str, Any]:
        """Pin (always focal in traversal) or suppress (never focal, never walked) an entity."""
        self._check_mutable()
        if weight is not None and (isinstance(weight, bool) or not 0 < weight <= 10):
            raise InvalidInput("weight must be a number above 0 and at most 10")
        with self.store.write_tx() as conn:
            found = views.get_entity(conn, entity_id)
            if found is None:
                raise NotFound(f"entity {entity_id} not found")
            know_sql.set_pin(
                conn, entity_id, agent_id=found["agent_id"],
                pin_type="suppress" if suppress else "pin", weight=weight, reason=reason,
                pinned_by=actor.name, now=stamp(self.clock),
            )
            return views.get_entity(conn, entity_id) or found

    def unpin(self, entity_id: str) -> dict[str, Any]:
        self._check_mutable()
        with self.store.write_tx() as conn:
            found = views.get_entity(conn, entity_id)
            if found is None:
                raise NotFound(f"entity {entity_id} not found")
            know_sql.clear_pin(conn, entity_id, agent_id=found["agent_id"])
            return views.get_entity(conn, entity_id) or found

    def detect_communities(self, agent_id: str = "default") -> list[dict[str, Any]]:
        """Louvain over the dependency weights; replaces the stored communities."""
        self._check_mutable()
        conn = self.store.reader()
        edges = views.dependency_weights(conn, agent_id)
        names = views.entity_names(conn, sorted({n for e in edges for n in e[:2]}))
        found = community_detection.detect(edges, names)
        with self.store.write_tx() as wconn:
            views.replace_communities(wconn, agent_id, [c.to_row() for c in found], stamp(self.clock))
        return self.communities(agent_id)

    def _check_mutable(self) -> None:
        if self.config.mutations_frozen:
            raise Frozen()
