"""Evidence in [0, 1] per channel, and boosts that cannot overturn relevance.

Evidence (docs/api.md): lexical, hint and source are BM25 relative to the channel's best match;
semantic and source_semantic cosines clipped at 0; traversal the graph's score; context the lending
neighbour's relative score. Boosts (rehearsal, importance, resolution) say nothing about the query,
so `bounded` keeps a result below one whose confidence logit is at least CLEAR_LOGIT higher and that
ranked above it. Demotions are not held back.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from signet.types import Evidence, Memory

RELATIVE = ("lexical", "hint", "source")
COSINE = ("semantic", "source_semantic", "traversal")
# "Clearly better": odds of being relevant at least e times higher (a logit margin of 1).
CLEAR_LOGIT = 1.0

Ranking = Sequence[tuple[str, float]]


class Evidencer:
    """Evidence per memory from the channels' own rankings and the context lifts."""

    def __init__(self, raw: Mapping[str, Ranking], lifts: Mapping[str, float]) -> None:
        self.lookups = {
            name: {m: (rank, s) for rank, (m, s) in enumerate(r, 1)} for name, r in raw.items()
        }
        self.best = {
            name: max((s for _, s in r), default=0.0) for name, r in raw.items() if name in RELATIVE
        }
        self.lifts = lifts
        # The evidence channels present, each with its lookup and the best score it is divided
        # by (None: a cosine, taken as it is): a candidate looks up only these (50 a query).
        self._present = [
            (name, self.lookups[name], self.best.get(name) if name in RELATIVE else None)
            for name in (*RELATIVE, *COSINE) if name in self.lookups
        ]
        self._lexical = self.lookups.get("lexical", {})
        self._semantic = self.lookups.get("semantic", {})

    def __call__(
        self, memory_id: str, *, cosine: float | None = None, coverage: float | None = None
    ) -> Evidence:
        """The memory's evidence; `cosine` and `coverage` (what the confidence read) are given
        by the caller, so one Evidence is built (dataclasses.replace costs as much again)."""
        values: dict[str, float] = {}
        for name, lookup, best in self._present:
            found = lookup.get(memory_id)
            if found is not None:
                score = found[1]
                if best is not None:
                    score = score / best if best > 0 else 0.0
                values[name] = round(min(max(score, 0.0), 1.0), 6)
        lift = self.lifts.get(memory_id)
        lexical = self._lexical.get(memory_id)
        semantic = self._semantic.get(memory_id)
        return Evidence(
            **values,
            context=None if lift is None else round(min(max(lift, 0.0), 1.0), 6),
            cosine=None if cosine is None else round(min(cosine, 1.0), 6),
            coverage=None if coverage is None else round(coverage, 6),
            lexical_rank=None if lexical is None else lexical[0],
            semantic_rank=None if semantic is None else semantic[0],
        )

    def cosines(self, ids: Iterable[str]) -> dict[str, float]:
        """The cosine a channel measured for each memory (own, else its source's closest)."""
        out: dict[str, float] = {}
        for memory_id in ids:
            for name in ("semantic", "source_semantic"):
                found = self.lookups.get(name, {}).get(memory_id)
                if found is not None:
                    out[memory_id] = max(out.get(memory_id, 0.0), found[1], 0.0)
        return out


@dataclass(frozen=True, slots=True)
class Staged:
    """A result before its boosts are applied: `base` is the fused score after demotions."""

    memory: Memory
    evidence: Evidence
    base: float
    boost: float
    adjustments: tuple[str, ...]
    confidence: float


def _logit(p: float) -> float:
    p = min(max(p, 1e-9), 1 - 1e-9)
    return math.log(p / (1 - p))


def bounded(staged: Sequence[Staged]) -> list[tuple[Staged, float]]:
    """(result, final score): base x boost, except that a boosted result never passes one that
    ranked above it without boosts and is clearly better (confidence odds >= e times higher)."""
    order = sorted(staged, key=lambda st: (-st.base, st.memory.id))
    placed: list[tuple[Staged, float, float]] = []  # (result, final score, logit)
    lowest = math.inf
    out: list[tuple[Staged, float]] = []
    for st in order:
        score = st.base * st.boost
        logit = _logit(st.confidence)
        if score >= lowest:
            # It would pass someone above it: it stays below every clearly better one.
            cap = min(
                (above for _st, above, above_logit in placed if above_logit - logit >= CLEAR_LOGIT),
                default=math.inf,
            )
            if score >= cap:
                score = math.nextafter(cap, 0.0)
        placed.append((st, score, logit))
        lowest = min(lowest, score)
        out.append((st, score))
    return out
