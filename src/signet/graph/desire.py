"""Desire paths: the routes that led to useful memories are worn in, the ones that
led to noise grow over.

When an agent rates a memory (app.feedback), the traversal path that last reached it (kept by
the traversal channel, in memory) is looked up: positive feedback multiplies the
`traversal_weight` of each dependency and the `weight` of each aspect on the path by
`REINFORCE`, negative feedback by `DECAY`. Weights stay within [`MIN_WEIGHT`, `MAX_WEIGHT`], so
no path dominates and none disappears. Without a remembered path (another process served the
recall, or it was long ago) only the aspects holding the memory's attributes move. A
correction counts as negative: the memory did not say what was needed.
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
