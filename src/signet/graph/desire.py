"""Desire paths: the routes that led to useful memories are worn in, the ones that led to noise grow
over.

On feedback, the traversal path that last reached the memory (kept in memory by the traversal
channel) has its dependencies' `traversal_weight` and aspects' `weight` multiplied by REINFORCE
(positive) or DECAY (negative, corrections included), within [MIN_WEIGHT, MAX_WEIGHT] so no path
dominates or disappears. Without a remembered path only the aspects holding the memory's attributes
move.
"""

from __future__ import annotations

from collections.abc import Sequence

from signet.graph.traversal import Step
from signet.store.graph_store import GraphOps

__all__ = ["MAX_WEIGHT", "MIN_WEIGHT", "reinforce"]

REINFORCE = 1.15
DECAY = 0.85
MIN_WEIGHT = 0.2
MAX_WEIGHT = 3.0


def reinforce(
    graph: GraphOps, memory_id: str, feedback_type: str, path: Sequence[Step] | None, now: str
) -> dict[str, int]:
    """Move the weights on the path to `memory_id`; returns how many rows changed, by kind."""
    factor = REINFORCE if feedback_type == "positive" else DECAY
    if path:
        dependencies = [s.id for s in path if s.kind == "dependency"]
        aspects = [s.id for s in path if s.kind == "aspect"]
    else:
        dependencies, aspects = [], graph.aspects_sourced_by(memory_id)
    return {
        "dependencies": graph.scale_dependency_weights(
            dependencies, factor, MIN_WEIGHT, MAX_WEIGHT, now
        ),
        "aspects": graph.scale_aspect_weights(aspects, factor, MIN_WEIGHT, MAX_WEIGHT, now),
    }
