"""Hub dampening input: which memories speak only of hub entities.

An entity's degree is its links (mentions, relations, dependencies); hubs are the top 10% by
degree. A memory whose linked entities are all hubs says little specific, so recall dampens it
(recall/dampen.py); a memory with no entity, or a graph below `MIN_ENTITIES`, has no hub
memories. The graph is the agent's own (as recall's graph channels walk it): another agent's
entities neither count towards `MIN_ENTITIES` nor move the percentile. `HubIndex` caches each
agent's threshold for `ttl_s` seconds and reads through the graph store, so it serves either
backend.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from signet.store.graph_store import GraphOps, GraphStore

__all__ = ["HUB_PERCENTILE", "HubIndex", "degree_threshold", "hub_memories"]

HUB_PERCENTILE = 90.0
MIN_ENTITIES = 10


def degree_threshold(
    graph: GraphOps, agent_id: str, percentile: float = HUB_PERCENTILE
) -> float | None:
    """The P90 of the agent's entity degrees; None when its graph is too small to have hubs."""
    degrees = graph.all_degrees(agent_id)
    if len(degrees) < MIN_ENTITIES:
        return None
    return float(np.percentile(np.asarray(degrees, dtype=np.float64), percentile))


def hub_memories(graph: GraphOps, ids: Sequence[str], threshold: float | None) -> set[str]:
    """The memories among `ids` whose linked entities all have a degree above `threshold`
    (none when it is None)."""
    if threshold is None or not ids:
        return set()
    linked = graph.entities_by_memory(ids)
    degrees = graph.degrees_of({e for es in linked.values() for e in es})
    return {m for m, es in linked.items() if es and all(degrees.get(e, 0) > threshold for e in es)}


class HubIndex:
    """`hub_memories` with each agent's threshold cached; callable as the Recaller's
    `hub_memories` (with the connection recall reads on, or None: the store lends one, and
    the agent whose graph recall walks)."""

    def __init__(
        self, store: GraphStore, ttl_s: float = 30.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.store = store
        self.ttl_s = ttl_s
        self._clock = clock
        self._lock = threading.Lock()
        self._cached: dict[str, tuple[float, float | None]] = {}

    def threshold(self, graph: GraphOps, agent_id: str) -> float | None:
        with self._lock:
            now = self._clock()
            cached = self._cached.get(agent_id)
            if cached is None or now - cached[0] > self.ttl_s:
                # Drop expired agents' entries: a caller may name any agent id.
                self._cached = {a: c for a, c in self._cached.items() if now - c[0] <= self.ttl_s}
                cached = self._cached[agent_id] = (now, degree_threshold(graph, agent_id))
            return cached[1]

    def invalidate(self) -> None:
        with self._lock:
            self._cached.clear()

    def __call__(self, conn: Any, ids: Sequence[str], agent_id: str) -> set[str]:
        with self.store.reading(conn) as graph:
            return hub_memories(graph, ids, self.threshold(graph, agent_id))
