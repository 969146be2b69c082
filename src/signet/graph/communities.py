"""Entity communities: Louvain (networkx, fixed seed for reproducibility) over the dependency graph,
edges weighted by strength x traversal weight. Modularity below 0.3 is `fragmented`, from 0.3
`moderate`, from 0.5 `strong`. Results replace the agent's `entity_communities` rows; the label
is the member with the heaviest links.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from signet.store.memories import new_id

__all__ = ["Community", "detect", "quality_of"]

SEED = 42
MODERATE, STRONG = 0.3, 0.5


@dataclass(frozen=True, slots=True)
class Community:
    id: str
    label: str
    members: tuple[str, ...]
    modularity: float
    quality: str

    def to_row(self) -> dict[str, object]:
        return {"id": self.id, "label": self.label, "members": list(self.members),
                "modularity": self.modularity, "quality": self.quality}


def quality_of(score: float) -> str:
    if score >= STRONG:
        return "strong"
    return "moderate" if score >= MODERATE else "fragmented"


def detect(
    edges: Sequence[tuple[str, str, float]], names: dict[str, str], *, seed: int = SEED
) -> list[Community]:
    """Louvain communities of the weighted edges, largest first."""
    # Imported here: networkx takes a third of a second to import, which every CLI command
    # opening the store in-process would pay for a feature only the graph uses.
    import networkx as nx
    from networkx.algorithms.community import louvain_communities, modularity

    graph = nx.Graph()
    for source, target, weight in edges:
        if source == target or weight <= 0:
            continue
        previous = graph.get_edge_data(source, target, {"weight": 0.0})["weight"]
        graph.add_edge(source, target, weight=previous + weight)
    if graph.number_of_edges() == 0:
        return []
    parts = louvain_communities(graph, weight="weight", seed=seed)
    score = float(modularity(graph, parts, weight="weight"))
    quality = quality_of(score)
    found = []
    for part in parts:
        members = tuple(sorted(part))
        label_id = max(members, key=lambda n: (graph.degree(n, weight="weight"), n))
        found.append(Community(new_id(), names.get(label_id, label_id), members, score, quality))
    return sorted(found, key=lambda c: (-len(c.members), c.label))
