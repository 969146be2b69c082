"""Session summaries rank below the facts they mention.

A short summary ("Asked about Go.") beats the memory holding the answer on BM25 length normalisation
and on its dense vector. A summary says something was discussed, the fact says what; so a summary
moves just below the last non-summary memory on the page that holds every query term it matches. A
summary matching a term no fact holds keeps its place.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from signet.recall.confidence import stems
from signet.types import RecallHit

SUMMARY = "summary"


def below_facts(hits: Sequence[RecallHit], terms: frozenset[str]) -> list[RecallHit]:
    """`hits` (best first) with each summary moved below the last fact covering its matched
    query terms (`terms`: the query's stems); scores kept descending."""
    out = list(hits)
    if not terms or not any(h.memory.type == SUMMARY for h in out):
        return out
    held = {h.memory.id: _held(h, terms) for h in out}
    for summary in [h for h in out if h.memory.type == SUMMARY]:
        matched = held[summary.memory.id]
        at = out.index(summary)
        cover = None
        for j in range(at + 1, len(out)):
            other = out[j]
            if other.memory.type != SUMMARY and held[other.memory.id] and matched <= held[other.memory.id]:
                cover = j
        if cover is None:
            continue
        out.pop(at)
        above = out[cover - 1].score
        below = out[cover].score if cover < len(out) else 0.0
        moved = replace(summary, score=(above + below) / 2 if below < above else above,
                        adjustments=(*summary.adjustments, "summary"))
        out.insert(cover, moved)
    return out


def _held(hit: RecallHit, terms: frozenset[str]) -> frozenset[str]:
    return stems(" ".join((hit.memory.content, *hit.memory.tags))) & terms
