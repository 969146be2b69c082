"""The graph's recall channels, for mode "full" only ("hybrid" leaves the graph out, so benchmarks
compare the two in one run). `TraversalChannel` walks from entities the query names
(graph/traversal.py); otherwise `GraphBoostChannel` nudges with a small weight the memories of
entities whose names start with query words. An empty graph ranks "full" exactly as "hybrid"; a
graph error is logged and gives nothing.
"""

from __future__ import annotations

import bisect
import itertools
import logging
import threading
import time
from dataclasses import dataclass, field

from signet.config import GraphConfig, TraversalConfig
from signet.graph import traversal
from signet.recall.spec import BOOST_WEIGHT, ChannelInput
from signet.store.graph import canonical
from signet.store.graph_store import GraphOps, GraphStore
from signet.types import MemoryFilters, RecallQuery

__all__ = ["BOOST_WEIGHT", "GraphBoostChannel", "TraversalChannel"]

log = logging.getLogger(__name__)

GRAPH_MODES = ("full",)
NO_FILTERS = MemoryFilters()
BOOST_ENTITIES, BOOST_NEIGHBOURS, BOOST_MEMORIES = 20, 50, 200
BOOST_CANDIDATES = 500  # entities one query word may match before ordering by mentions
_STOP = frozenset(
    "the and for with that this what where when which who how why you your yours are was were"
    " have has had can could should would will does did not but our ours their they them its"
    " from into about any some all there here".split()
)


def allowed_ids(graph: GraphOps, ids: list[str], query: RecallQuery) -> set[str]:
    """The candidates the query's filters allow (live ones when it has none)."""
    if query.filters == NO_FILTERS:
        return graph.live_ids(ids)
    return graph.allowed_ids(ids, query.filters)


def traversal_on(graph: GraphConfig, cfg: TraversalConfig) -> bool:
    return graph.enabled and cfg.enabled and cfg.primary


@dataclass
class TraversalChannel:
    store: GraphStore
    graph: GraphConfig
    config: TraversalConfig
    embedder_model: str | None = None
    paths: traversal.PathMemory = field(default_factory=traversal.PathMemory)
    clock: traversal.Clock = time.perf_counter
    name: str = "traversal"

    def search(self, request: ChannelInput) -> list[tuple[str, float]]:
        query = request.query
        if query.mode not in GRAPH_MODES or not traversal_on(self.graph, self.config):
            return []
        try:
            with self.store.reading(request.conn) as graph:
                return self._search(graph, query, request)
        except Exception as exc:  # the graph never degrades core search
            log.warning("graph traversal failed, recall continues without it: %s", exc)
            return []

    def _search(
        self, graph: GraphOps, query: RecallQuery, request: ChannelInput
    ) -> list[tuple[str, float]]:
        pins = graph.pins(query.graph_agent)
        focal = traversal.focal_entities(graph, query.query, query.graph_agent, pins)
        if not focal:
            return []
        walked = traversal.walk(graph, focal, self.config, pins=pins, clock=self.clock)
        allowed = allowed_ids(graph, list(walked.candidates), query)
        walked.candidates = {m: c for m, c in walked.candidates.items() if m in allowed}
        vectors = {}
        if request.query_vector is not None and self.embedder_model is not None:
            vectors = graph.memory_vectors(list(walked.candidates), self.embedder_model)
        ranked = traversal.scored(walked, vectors, request.query_vector)
        self.paths.remember(list(walked.candidates.values()))
        return ranked[: request.limit]


@dataclass
class GraphBoostChannel:
    store: GraphStore
    graph: GraphConfig
    config: TraversalConfig
    name: str = "graph_boost"
    words: EntityWords = field(default_factory=lambda: EntityWords())

    def search(self, request: ChannelInput) -> list[tuple[str, float]]:
        query = request.query
        if query.mode not in GRAPH_MODES or not self.graph.enabled:
            return []
        try:
            with self.store.reading(request.conn) as graph:
                return self._search(graph, query)
        except Exception as exc:  # the graph never degrades core search
            log.warning("graph boost failed, recall continues without it: %s", exc)
            return []

    def _search(self, graph: GraphOps, query: RecallQuery) -> list[tuple[str, float]]:
        agent = query.graph_agent
        if traversal_on(self.graph, self.config):
            pins = graph.pins(agent)
            if traversal.focal_entities(graph, query.query, agent, pins):
                return []  # traversal answers this query
        ids = boost_ids(graph, query.query, agent, self.words)
        allowed = allowed_ids(graph, ids, query)
        return [(m, 1.0) for m in ids if m in allowed]


class EntityWords:
    """The words of the agent's entity names, sorted, for prefix lookups by query word.

    A `canonical_name LIKE %word%` match scans every entity per query (about
    10 ms at 10k entities). This index answers "a word of the name starts with the query word"
    with a bisection instead; it is rebuilt when entities are added or removed.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._built: dict[str, tuple[tuple[int, int], list[tuple[str, str]]]] = {}

    def matching(self, graph: GraphOps, words: list[str], agent_id: str) -> list[str]:
        index = self._index(graph, agent_id)
        found: dict[str, None] = {}
        for word in words:
            start = bisect.bisect_left(index, (word, ""))
            for name_word, entity_id in itertools.islice(index, start, start + BOOST_CANDIDATES):
                if not name_word.startswith(word):
                    break
                found.setdefault(entity_id)
        return list(found)

    def _index(self, graph: GraphOps, agent_id: str) -> list[tuple[str, str]]:
        marker = graph.entity_marker(agent_id)
        with self._lock:
            built = self._built.get(agent_id)
            if built is not None and built[0] == marker:
                return built[1]
        index = sorted(
            (word, entity_id)
            for entity_id, name in graph.canonical_names(agent_id)
            for word in set(name.split())
        )
        with self._lock:
            self._built[agent_id] = (marker, index)
        return index


def boost_ids(
    graph: GraphOps, text: str, agent_id: str, words_index: EntityWords | None = None
) -> list[str]:
    """Entities named by a query word, one hop, their memories."""
    words = [w for w in dict.fromkeys(canonical(text).split()) if len(w) >= 3 and w not in _STOP]
    if words_index is None:
        entities = graph.entities_like(words, agent_id, BOOST_ENTITIES)
    else:
        matched = words_index.matching(graph, words, agent_id)
        entities = graph.by_mentions(matched, BOOST_ENTITIES)
    if not entities:
        return []
    hop = graph.relation_neighbours(entities, BOOST_NEIGHBOURS)
    expanded = list(dict.fromkeys([*entities, *hop]))
    # As in traversal: an entity most memories mention (often the user, one hop from every
    # other entity) would boost a large, arbitrary part of the store.
    common = graph.common_entities(
        expanded, traversal.COMMON_ENTITY_FRACTION, traversal.MIN_MEMORIES_FOR_COMMON
    )
    expanded = [e for e in expanded if e not in common]
    return graph.memories_of_entities(expanded, BOOST_MEMORIES)
