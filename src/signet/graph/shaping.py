"""Evidence shaping after fusion: the flat channels keep their share of the page. Traversal through
a hub can return many candidates, so `reserve_flat` keeps at least `flat_reserve_fraction` of the
`limit` slots for results a flat channel found; when flat results are too few, graph-only ones
take the rest.
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
