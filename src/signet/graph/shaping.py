"""Evidence shaping after fusion: the flat channels keep their share of the page.

Traversal can return many candidates through a hub entity; without a bound they could push
every keyword and vector match off the page. `reserve_flat` keeps at least
`flat_reserve_fraction` (40% by default) of the `limit` slots for results that a flat channel
(lexical, semantic, hint, and the whole-source ones) found: graph-only results (found by traversal or the graph boost
alone) fill at most the rest. When there are too few flat results, graph-only ones take the
remaining slots, so nothing is dropped for the sake of the rule.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from signet.types import RecallHit

__all__ = ["is_flat", "reserve_flat"]


def is_flat(hit: RecallHit) -> bool:
    e = hit.evidence
    return any(
        v is not None
        for v in (e.lexical, e.semantic, e.hint, e.source, e.source_semantic, e.context)
    )


def reserve_flat(hits: Sequence[RecallHit], limit: int, fraction: float) -> list[RecallHit]:
    """Reorder best-first `hits` so the first `limit` hold at most (1 - fraction) graph-only."""
    graph_slots = limit - math.ceil(fraction * limit)
    page: list[RecallHit] = []
    held: list[RecallHit] = []
    graph_only = 0
    for hit in hits:
        flat = is_flat(hit)
        if len(page) < limit and (flat or graph_only < graph_slots):
            graph_only += not flat
            page.append(hit)
        else:
            held.append(hit)
    # Too few flat results: the held graph-only ones fill the page, in their order.
    return page + held
