"""A seeded synthetic knowledge graph for the scale benchmark, so `full` recall has something to
walk: `n_entities` made-up names, each memory mentioning one to three drawn by Zipf(1.0) (the
first are hubs), with attributes and dependencies so every walk has hops. Memories are written
512 per transaction, as the commit dominates.
"""

from __future__ import annotations

import itertools
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from signet.graph.apply import apply_payload, parse_payload
from signet.store.graph_store import GraphStore
from signet.types import Actor, utc_now

__all__ = ["SyntheticGraph", "plan_graph", "write_graph"]

_HEADS = ("Xan", "Yor", "Dyx", "Pyr", "Xel", "Myx", "Oxa", "Ryn", "Syl", "Tyx", "Vyr", "Zyx")
_MIDS = ("ka", "lo", "mi", "do", "ta", "ve", "ri", "no", "pe", "sa", "ti", "mu", "be", "fe")
_TAILS = ("Labs", "Motors", "Cafe", "Clinic", "Bank", "Studio", "Park", "School", "Market",
          "Team", "Group", "Street", "Garage", "Store", "Club", "Gym")
_ASPECTS = ("work", "hobbies", "vehicles", "shopping", "health", "travel", "family", "projects",
            "finance", "food")
_KEYS = ("uses", "prefers", "owns", "visits", "pays with", "works on", "likes", "needs")
ATTRIBUTE_SHARE = 0.6
GLOBAL_DEPENDENCIES = 2
BATCH = 512
EDGES_PER_PAYLOAD = 500
ACTOR = Actor(name="bench", type="operator")


@dataclass(frozen=True, slots=True)
class SyntheticGraph:
    names: tuple[str, ...]
    mentions: tuple[tuple[int, ...], ...]  # per memory, entity indexes (first = main)
    cum_weights: tuple[float, ...]  # Zipf over entity ranks, for drawing more names

    def suffix(self, memory: int) -> str:
        """The text appended to a memory: the names it mentions."""
        return " with " + " and ".join(self.names[e] for e in self.mentions[memory])

    def draw(self, rng: random.Random) -> str:
        return self.names[rng.choices(range(len(self.names)), cum_weights=self.cum_weights)[0]]


def entity_name(index: int, rng: random.Random) -> str:
    """A unique name: the head and mid syllables spell `index`; the tail is chosen."""
    head, rest = _HEADS[index % len(_HEADS)], index // len(_HEADS)
    mids = ""
    while True:
        mids += _MIDS[rest % len(_MIDS)]
        rest //= len(_MIDS)
        if rest == 0:
            break
    return f"{head}{mids} {rng.choice(_TAILS)}"


def plan_graph(n_memories: int, n_entities: int, seed: int = 13) -> SyntheticGraph:
    """Entity names and each memory's mentions (no writing)."""
    rng = random.Random(seed)
    names = tuple(entity_name(i, rng) for i in range(n_entities))
    cum = tuple(itertools.accumulate(1.0 / (rank + 1) for rank in range(n_entities)))
    population = range(n_entities)
    mentions = []
    for _ in range(n_memories):
        chosen = rng.choices(population, cum_weights=cum, k=rng.randint(1, 3))
        mentions.append(tuple(dict.fromkeys(chosen)))
    return SyntheticGraph(names, tuple(mentions), cum)


def _aspects_of(entity: int) -> tuple[str, ...]:
    count = 1 + entity % 3
    return tuple(_ASPECTS[(entity * 7 + k * 3) % len(_ASPECTS)] for k in range(count))


def memory_payload(graph: SyntheticGraph, memory: int, rng: random.Random) -> dict[str, Any]:
    entities = graph.mentions[memory]
    names = [graph.names[e] for e in entities]
    payload: dict[str, Any] = {"entities": names}
    if rng.random() < ATTRIBUTE_SHARE:
        main = entities[0]
        payload["attributes"] = [{
            "entity": names[0], "aspect": rng.choice(_aspects_of(main)),
            "key": rng.choice(_KEYS), "value": f"detail {memory}",
        }]
    if len(names) >= 2:
        payload["dependencies"] = [{
            "source": names[0], "target": names[1], "type": "related_to",
            "strength": round(rng.uniform(0.3, 1.0), 2),
        }]
    return payload


def structure_payloads(graph: SyntheticGraph, rng: random.Random) -> list[dict[str, Any]]:
    """Dependencies from every entity to Zipf-chosen others, and every entity's aspects."""
    edges = []
    for name in graph.names:
        for _ in range(GLOBAL_DEPENDENCIES):
            other = graph.draw(rng)
            if other != name:
                edges.append({"source": name, "target": other, "type": "depends_on",
                              "strength": round(rng.uniform(0.3, 1.0), 2)})
    aspects = [{"entity": name, "aspect": aspect}
               for entity, name in enumerate(graph.names) for aspect in _aspects_of(entity)]
    step = EDGES_PER_PAYLOAD
    return ([{"dependencies": edges[i : i + step]} for i in range(0, len(edges), step)]
            + [{"aspects": aspects[i : i + step]} for i in range(0, len(aspects), step)])


def write_graph(
    store: GraphStore, graph: SyntheticGraph, memory_ids: Sequence[str], seed: int = 17
) -> dict[str, Any]:
    """Author the graph through the audited path, on the app's graph store (either backend);
    counts and the seconds it took."""
    rng = random.Random(seed)
    started = time.perf_counter()
    payloads: list[tuple[str | None, dict[str, Any]]] = [
        (None, p) for p in structure_payloads(graph, rng)
    ]
    payloads += [(mid, memory_payload(graph, i, rng)) for i, mid in enumerate(memory_ids)]
    for start in range(0, len(payloads), BATCH):
        now = utc_now()
        with store.writing() as ops:
            for memory_id, payload in payloads[start : start + BATCH]:
                apply_payload(ops, parse_payload(payload), agent_id="default", actor=ACTOR,
                              now=now, memory_id=memory_id)
    with store.reading() as ops:
        counts = ops.stats("default")
    keys = ("entities", "aspects", "attributes", "dependencies", "mentions")
    return {**{k: counts[k] for k in keys},
            "build_seconds": round(time.perf_counter() - started, 1)}
