"""Traversal-primary recall: memories reached through the knowledge graph's structure rather than
shared words. Focal entities are the query's n-grams among the agent's names and aliases (pinned
always, suppressed never); the walk goes best first through aspects, attributes' source memories,
linked memories (not a hub's) and, below `max_hops`, the strongest dependencies, within
`max_paths` and `timeout_ms`. A candidate scores 0.7 x cosine + 0.3 x path strength; hop-only
ones stay below the weakest anchored one.
"""

from __future__ import annotations

import heapq
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from signet.config import TraversalConfig
from signet.store import graph_read
from signet.store.graph import canonical
from signet.store.graph_store import GraphOps

__all__ = ["Candidate", "Step", "Walk", "focal_entities", "query_keys", "walk"]

COSINE_WEIGHT = 0.7
STRUCTURE_WEIGHT = 0.3
HOP_DECAY = 0.6
REACHED_MENTION_FACTOR = 0.8
MAX_NGRAM = 4
MAX_KEYS = 400
WALKED_CAP = 0.999
Clock = Callable[[], float]


@dataclass(frozen=True, slots=True)
class Step:
    """One edge of a path: a dependency or an aspect, by id."""

    kind: str  # "dependency" | "aspect"
    id: str


@dataclass(frozen=True, slots=True)
class Candidate:
    memory_id: str
    structural: float
    anchored: bool
    hops: int
    path: tuple[Step, ...]


@dataclass
class Walk:
    focal: tuple[str, ...]
    candidates: dict[str, Candidate] = field(default_factory=dict)
    visited: int = 0
    paths: int = 0
    partial: bool = False


def query_keys(text: str) -> list[str]:
    """Every 1..4-word n-gram of the canonicalised query: the keys entity names are stored under."""
    words = canonical(text).split()
    keys: dict[str, None] = {}
    for size in range(min(MAX_NGRAM, len(words)), 0, -1):
        for start in range(len(words) - size + 1):
            keys.setdefault(" ".join(words[start : start + size]))
    return list(keys)[:MAX_KEYS]


# An entity that a large share of all memories mention (the user, the other speaker of a long
# chat, the one project everything is about) tells a query as little about which memories it
# wants as a stop word does, and walking it returns a large part of the store: it is not focal
# (unless pinned), the way the lexical channel drops its most common terms (store/fts.py).
COMMON_ENTITY_FRACTION = 0.05
MIN_MEMORIES_FOR_COMMON = 200


def focal_entities(
    graph: GraphOps, text: str, agent_id: str, pins: dict[str, graph_read.Pin]
) -> list[str]:
    """Entities the query names (by name or alias) that are not common to a large share of the
    store, plus pinned ones, minus suppressed ones."""
    found = graph.resolve(query_keys(text), agent_id)
    common = graph.common_entities(
        list(found.values()), COMMON_ENTITY_FRACTION, MIN_MEMORIES_FOR_COMMON
    )
    focal = dict.fromkeys(e for e in found.values() if e not in common)
    focal.update(dict.fromkeys(e for e, pin in pins.items() if pin.pin_type == "pin"))
    return [e for e in focal if pins.get(e, _NO_PIN).pin_type != "suppress"]


_NO_PIN = graph_read.Pin("none", None)


def walk(
    graph: GraphOps,
    focal: Sequence[str],
    cfg: TraversalConfig,
    *,
    pins: dict[str, graph_read.Pin] | None = None,
    clock: Clock = time.perf_counter,
) -> Walk:
    """Collect candidate memories from the focal entities outwards (see the module doc)."""
    pins = pins or {}
    deadline = clock() + cfg.timeout_ms / 1000.0
    result = Walk(tuple(focal))
    # (hops, -strength, order, entity, strength, path): nearest first, strongest first.
    queue: list[tuple[int, float, int, str, float, tuple[Step, ...]]] = []
    for order, entity in enumerate(focal):
        start = _pin_weight(pins, entity)
        heapq.heappush(queue, (0, -start, order, entity, start, ()))
    seen: set[str] = set()
    order = len(focal)
    while queue and result.paths < cfg.max_paths:
        if clock() > deadline:
            result.partial = True
            break
        hops, _, _, entity, strength, path = heapq.heappop(queue)
        if entity in seen:
            continue
        seen.add(entity)
        result.visited += 1
        _collect(graph, result, entity, hops, strength, path, cfg)
        if hops >= cfg.max_hops:
            continue
        for edge in graph.dependency_edges(
            entity, min_strength=cfg.min_dependency_strength, limit=cfg.max_branching
        ):
            if edge.other in seen or pins.get(edge.other, _NO_PIN).pin_type == "suppress":
                continue
            reached = strength * edge.strength * edge.traversal_weight * HOP_DECAY
            reached *= _pin_weight(pins, edge.other)
            order += 1
            step = Step("dependency", edge.id)
            heapq.heappush(queue, (hops + 1, -reached, order, edge.other, reached, (*path, step)))
    return result


def _pin_weight(pins: dict[str, graph_read.Pin], entity: str) -> float:
    pin = pins.get(entity)
    return pin.weight if pin is not None and pin.weight is not None else 1.0


def _collect(
    graph: GraphOps, result: Walk, entity: str, hops: int, strength: float,
    path: tuple[Step, ...], cfg: TraversalConfig,
) -> None:
    anchored = hops == 0
    mention_factor = 1.0 if anchored else REACHED_MENTION_FACTOR
    limit = cfg.max_attributes_per_aspect if hops else cfg.max_paths
    # A hub's links say nothing specific, and which `limit` of its thousands we would read is
    # arbitrary: its memories count only through its aspects and attributes.
    if graph.mention_count(entity) <= limit:
        for memory_id, confidence in graph.mention_memories(entity, limit):
            structural = strength * confidence * mention_factor
            if not _add(result, memory_id, structural, anchored, hops, path, cfg):
                return
    for aspect in graph.aspects(entity, cfg.max_aspects_per_entity):
        through = (*path, Step("aspect", aspect.id))
        for memory_id, confidence in graph.attribute_memories(
            aspect.id, cfg.max_attributes_per_aspect
        ):
            structural = strength * aspect.weight * confidence
            if not _add(result, memory_id, structural, anchored, hops, through, cfg):
                return


def _add(
    result: Walk, memory_id: str, structural: float, anchored: bool, hops: int,
    path: tuple[Step, ...], cfg: TraversalConfig,
) -> bool:
    """Record one path's candidate; False once `max_paths` paths were collected."""
    if result.paths >= cfg.max_paths:
        return False
    result.paths += 1
    structural = min(max(structural, 0.0), 1.0)
    old = result.candidates.get(memory_id)
    if old is None or (anchored, structural) > (old.anchored, old.structural):
        result.candidates[memory_id] = Candidate(
            memory_id, structural, anchored or (old is not None and old.anchored), hops, path
        )
    return True


def scored(
    walked: Walk, vectors: dict[str, np.ndarray], query_vector: np.ndarray | None
) -> list[tuple[str, float]]:
    """Rank the candidates: 0.7 cosine + 0.3 structure; hop-only ones below every anchored one."""
    scores: dict[str, float] = {}
    for memory_id, cand in walked.candidates.items():
        vector = vectors.get(memory_id)
        cosine = 0.0
        if query_vector is not None and vector is not None and vector.shape == query_vector.shape:
            cosine = max(float(np.dot(query_vector, vector)), 0.0)
        scores[memory_id] = COSINE_WEIGHT * cosine + STRUCTURE_WEIGHT * cand.structural
    anchored = [s for m, s in scores.items() if walked.candidates[m].anchored]
    if anchored:
        cap = min(anchored) * WALKED_CAP
        for memory_id, cand in walked.candidates.items():
            if not cand.anchored:
                scores[memory_id] = min(scores[memory_id], cap)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


class PathMemory:
    """The most recent traversal path that reached each memory (bounded), for feedback."""

    def __init__(self, size: int = 4096) -> None:
        self._paths: OrderedDict[str, tuple[Step, ...]] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def remember(self, candidates: Sequence[Candidate]) -> None:
        with self._lock:
            for cand in candidates:
                self._paths[cand.memory_id] = cand.path
                self._paths.move_to_end(cand.memory_id)
            while len(self._paths) > self._size:
                self._paths.popitem(last=False)

    def path_to(self, memory_id: str) -> tuple[Step, ...] | None:
        with self._lock:
            return self._paths.get(memory_id)
