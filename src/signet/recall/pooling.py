"""Source crowding: ten windows of one session should not fill a top ten.

In the final list the n-th memory of a source already shown is damped by CROWDING^n; a memory
without a `source_id` is its own source.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from signet.recall.spec import CROWDING  # the weight, with every recall weight, in spec.py


def crowded(
    scored: Sequence[tuple[str, float]], source_of: Mapping[str, str], factor: float = CROWDING
) -> list[tuple[str, float]]:
    """Scores (best first) with the n-th later member of a shown source damped by factor^n."""
    shown: dict[str, int] = {}
    out = []
    for memory_id, score in scored:
        source = source_of.get(memory_id)
        if source is not None:
            count = shown.get(source, 0)
            shown[source] = count + 1
            score *= factor**count
        out.append((memory_id, score))
    return sorted(out, key=lambda item: (-item[1], item[0]))
