"""Recall over the store seam (store/backend.py `CoreStore`): what a PostgreSQL store answers.

The SQLite Recaller (recall/hybrid.py) reads a dozen tables the seam does not carry yet (hints,
sources, the conversation neighbours, the graph). This one ranks with what the seam has, and
with the same ranking spec (recall/spec.py), so weights are never forked:

- lexical: `CoreStore.lexical_search` (PostgreSQL: tsvector + GIN, BM25-like; store/postgres/
  lexical.py), over the candidate pool;
- semantic: the query embedded through the same query-vector cache and guard as hybrid recall
  (providers/query_embeddings.py), then `CoreStore.vector_search` (pgvector HNSW shortlist,
  rescored exactly), cosines under `search.min_cosine` dropped;
- fusion: the spec's (RRF with its channel weights, the dense channel at SEMANTIC_WEIGHT, or
  the alpha blend), then `min_score`, the calibrated confidence (recall/confidence.py) and
  `min_confidence`, best first.

Scope and filters go into both searches' SQL (`MemoryFilters`, made `isolated` for a scoped
caller by the app), so nothing outside the caller's slice is ever read, not even counted.
Mode `full` asks for the graph channels as well: the graph is not on this backend, so the answer
says so in `degraded` ("graph") rather than passing hybrid off as full. Not applied here (they
read tables not yet on the seam): hint and whole-source channels, conversation context, dated
windows, rehearsal and importance adjustments, dampening and source crowding. The term weights
of the confidence's coverage are uniform (no per-term document frequencies on the seam), and its
cosine is the dense channel's (a memory only the lexical channel found has none).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import numpy as np

from signet.config import SearchConfig
from signet.errors import ProviderError
from signet.providers.embedder import Embedder
from signet.providers.guard import ProviderGuard
from signet.providers.query_embeddings import QueryEmbeddings
from signet.recall import scoring
from signet.recall.confidence import Model, QueryTerms, model, stems
from signet.recall.fuse import alpha_blend, rrf
from signet.recall.hybrid import QUERY_EMBED_WORDS, validated
from signet.recall.spec import RankingSpec
from signet.store.backend import CoreStore
from signet.store.fts import query_tokens
from signet.types import Memory, RecallHit, RecallQuery, RecallResponse

GRAPH = "graph"


@dataclass(frozen=True)
class CoreRecaller:
    core: CoreStore
    config: SearchConfig
    spec: RankingSpec
    embedder: Embedder | None = None
    guard: ProviderGuard | None = None
    query_embeddings: QueryEmbeddings | None = field(default=None)

    def __post_init__(self) -> None:
        if self.query_embeddings is None and self.embedder is not None:
            queries = QueryEmbeddings(self.embedder, cache_size=self.config.query_cache_size)
            object.__setattr__(self, "query_embeddings", queries)

    def recall(self, query: RecallQuery) -> RecallResponse:
        query = validated(query, self.config)
        timings: dict[str, float] = {}
        degraded: list[str] = []
        started = time.perf_counter()
        rankings, vector = self._channels(query, timings, degraded)
        if query.mode == "full":
            degraded.append(GRAPH)  # the graph channels are not on this backend (module doc)
        hits = self._ranked(query, rankings, vector, timings)
        timings["total"] = (time.perf_counter() - started) * 1000
        method = query.mode if not degraded else f"{query.mode}-degraded"
        return RecallResponse(tuple(hits), query.query, method, timings, tuple(degraded))

    def _channels(
        self, query: RecallQuery, timings: dict[str, float], degraded: list[str]
    ) -> tuple[dict[str, list[tuple[str, float]]], np.ndarray | None]:
        pool = max(self.config.candidate_pool, query.limit)
        rankings: dict[str, list[tuple[str, float]]] = {}
        if not query.query:
            return rankings, None
        if query.mode != "vector":
            mark = time.perf_counter()
            rankings["lexical"] = self.core.lexical_search(query.query, query.filters, pool)
            timings["lexical"] = (time.perf_counter() - mark) * 1000
        vector = None
        if query.mode != "keyword":
            vector = self._semantic(query, pool, rankings, timings, degraded)
        return {n: r for n, r in rankings.items() if r}, vector

    def _semantic(
        self, query: RecallQuery, pool: int, rankings: dict[str, list[tuple[str, float]]],
        timings: dict[str, float], degraded: list[str],
    ) -> np.ndarray | None:
        if self.embedder is None or self.query_embeddings is None:
            if query.mode == "vector":
                degraded.append("semantic")
            return None
        mark = time.perf_counter()
        try:
            vector = self._embed_query(_tail(query.query, QUERY_EMBED_WORDS))
        except ProviderError:
            degraded.append("semantic")
            return None
        timings["embed"] = (time.perf_counter() - mark) * 1000
        mark = time.perf_counter()
        found = self.core.vector_search(
            vector, model=self.embedder.model, filters=query.filters, limit=pool
        )
        rankings["semantic"] = [(m, s) for m, s in found if s >= self.config.min_cosine]
        timings["semantic"] = (time.perf_counter() - mark) * 1000
        return vector

    def _embed_query(self, text: str) -> np.ndarray:
        queries = self.query_embeddings
        assert queries is not None
        if self.guard is None:
            return queries.embed(text)
        return self.guard.wait(lambda: queries.submit(text))

    # -- ranking ----------------------------------------------------------------------------

    def _ranked(
        self, query: RecallQuery, rankings: dict[str, list[tuple[str, float]]],
        vector: np.ndarray | None, timings: dict[str, float],
    ) -> list[RecallHit]:
        mark = time.perf_counter()
        fused = self._fuse(rankings)
        if not fused:
            return []
        depth = max(query.limit * 2, 50)
        shortlist = sorted(fused, key=lambda m: (-fused[m], m))[:depth]
        memories = self.core.get_memories(shortlist)
        evidence_of = scoring.Evidencer(rankings, {})
        terms = QueryTerms.of({t: 1.0 for t in query_tokens(query.query, None)})
        rate = model(with_cosine=vector is not None)
        min_score = self.config.min_score if query.min_score is None else query.min_score
        floor = query.min_confidence or 0.0
        hits: list[RecallHit] = []
        for memory_id in shortlist:
            memory = memories.get(memory_id)
            if memory is None or memory.is_deleted or fused[memory_id] < min_score:
                continue
            hit = self._hit(memory, fused[memory_id], evidence_of, terms, rate, vector)
            if hit.confidence >= floor:
                hits.append(hit)
        hits.sort(key=lambda h: (-h.score, h.memory.id))
        timings["fuse"] = (time.perf_counter() - mark) * 1000
        return hits[: query.limit]

    @staticmethod
    def _hit(
        memory: Memory, score: float, evidence_of: scoring.Evidencer, terms: QueryTerms,
        rate: Model, vector: np.ndarray | None,
    ) -> RecallHit:
        evidence = evidence_of(memory.id)
        coverage = terms.coverage(stems(" ".join((memory.content, *memory.tags))))
        cosine = evidence.semantic if vector is not None else None
        confidence = rate(cosine, coverage)
        evidence = replace(evidence, coverage=round(coverage, 6),
                           cosine=None if cosine is None else round(min(cosine, 1.0), 6))
        return RecallHit(memory, score, evidence, (), confidence=confidence)

    def _fuse(self, rankings: dict[str, list[tuple[str, float]]]) -> dict[str, float]:
        """The spec's fusion, as hybrid recall fuses its flat channels (Recaller._fuse)."""
        if self.spec.fusion == "alpha":
            return alpha_blend(rankings, self.spec.alpha)
        return rrf(rankings, self.spec.rrf_k, dict(self.spec.channel_weights) or None)

    def close(self) -> None:
        if self.query_embeddings is not None:
            self.query_embeddings.close()


def _tail(text: str, words: int) -> str:
    parts = text.split()
    return text if len(parts) <= words else " ".join(parts[-words:])
