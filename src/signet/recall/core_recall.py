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
Mode `full` adds the spec's graph channels (graph/channels.py traversal and boost, reading the
PostgreSQL graph store) as hybrid recall does (hybrid.py `_rank`): the flat channels are fused
and ranked on their own, what only a graph channel found is placed after them (`_merged`), hub
dampening (graph/hubs.py) demotes those of them linked only to hub entities, and the graph's
page shaping applies. Not applied here (they read tables not yet on the seam): hint and
whole-source channels, conversation context, dated windows, rehearsal and importance
adjustments, gravity dampening and source crowding. The term weights
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
from signet.recall.hybrid import QUERY_EMBED_WORDS, _merged, validated
from signet.recall.spec import ChannelInput, RankingSpec, TranscriptLookup
from signet.store.accesses import AccessRecorder
from signet.store.backend import CoreStore
from signet.store.fts import query_tokens
from signet.types import Memory, RecallHit, RecallQuery, RecallResponse


@dataclass(frozen=True)
class CoreRecaller:
    core: CoreStore
    config: SearchConfig
    spec: RankingSpec
    embedder: Embedder | None = None
    guard: ProviderGuard | None = None
    query_embeddings: QueryEmbeddings | None = field(default=None)
    # The lineage's transcripts for `expand` (sessions/service.py `Sessions.excerpts`).
    transcripts: TranscriptLookup | None = None
    # A `touch` recall's hits are recorded here and written by its flush (store/accesses.py):
    # recall itself never writes.
    accesses: AccessRecorder | None = None

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
        hits = self._ranked(query, rankings, vector, timings)
        if query.expand and self.transcripts is not None and hits:
            mark = time.perf_counter()
            texts = self.transcripts([h.memory for h in hits])
            timings["expand"] = (time.perf_counter() - mark) * 1000
            hits = [replace(h, transcript=texts.get(h.memory.id)) for h in hits]
        if query.touch and hits and self.accesses is not None:
            self.accesses.record([h.memory.id for h in hits])
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
        # As hybrid.py: the graph is one per agent; a caller scoped to a project ranks without it.
        agent_wide = not (query.filters.isolated and query.filters.project is not None)
        if query.mode in ("full", "hybrid") and agent_wide:
            for channel in self.spec.channels:
                mark = time.perf_counter()
                try:  # no connection of ours: the graph store lends one (store/graph_store.py)
                    rankings[channel.name] = channel.search(ChannelInput(None, query, vector, pool))
                except Exception:  # noqa: BLE001 - an extra channel never breaks core recall
                    degraded.append(channel.name)
                timings[channel.name] = (time.perf_counter() - mark) * 1000
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
        graph_names = self.spec.channel_names
        fused = self._fuse({n: r for n, r in rankings.items() if n not in graph_names})
        graph = self._fuse({n: r for n, r in rankings.items() if n in graph_names})
        graph_only = {m: s for m, s in graph.items() if m not in fused}
        if not fused and not graph_only:
            return []
        depth = max(query.limit * 2, 50)
        shortlist = sorted(fused, key=lambda m: (-fused[m], m))[:depth]
        extra = sorted(graph_only, key=lambda m: (-graph_only[m], m))[
            : max(depth - len(shortlist), 0)]
        memories = self.core.get_memories(shortlist + extra)
        rate = _Rater(self, query, rankings, vector)
        hits = rate.hits(shortlist, fused, memories, set())
        if extra:
            more = rate.hits(extra, graph_only, memories, self._hubs(extra))
            hits = _merged(hits, more, self.spec.graph_floor)
        if self.spec.shape is not None:
            hits = self.spec.shape(hits, query.limit)
        timings["fuse"] = (time.perf_counter() - mark) * 1000
        return hits[: query.limit]

    def _hubs(self, ids: list[str]) -> set[str]:
        """What a graph channel alone brought in and links only hub entities (graph/hubs.py)."""
        if self.spec.hub_memories is None or not self.spec.dampening.hub:
            return set()
        try:
            return self.spec.hub_memories(None, ids)
        except Exception:  # noqa: BLE001 - the graph never degrades core search
            return set()

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


class _Rater:
    """One recall's scoring: each memory's evidence, confidence and the score floors."""

    def __init__(
        self, recaller: CoreRecaller, query: RecallQuery,
        rankings: dict[str, list[tuple[str, float]]], vector: np.ndarray | None,
    ) -> None:
        self.recaller = recaller
        self.vector = vector
        self.evidence_of = scoring.Evidencer(rankings, {})
        self.terms = QueryTerms.of({t: 1.0 for t in query_tokens(query.query, None)})
        self.rate = model(with_cosine=vector is not None)
        config = recaller.config
        self.min_score = config.min_score if query.min_score is None else query.min_score
        self.floor = query.min_confidence or 0.0
        self.hub_factor = recaller.spec.dampening.hub_factor

    def hits(
        self, ids: list[str], scores: dict[str, float], memories: dict[str, Memory],
        hubs: set[str],
    ) -> list[RecallHit]:
        found: list[RecallHit] = []
        for memory_id in ids:
            memory = memories.get(memory_id)
            if memory is None or memory.is_deleted or scores[memory_id] < self.min_score:
                continue
            hit = self.recaller._hit(memory, scores[memory_id], self.evidence_of, self.terms,
                                     self.rate, self.vector)
            if memory_id in hubs:
                hit = replace(hit, score=hit.score * self.hub_factor, adjustments=("hub",))
            if hit.confidence >= self.floor:
                found.append(hit)
        found.sort(key=lambda h: (-h.score, h.memory.id))
        return found


def _tail(text: str, words: int) -> str:
    parts = text.split()
    return text if len(parts) <= words else " ".join(parts[-words:])
