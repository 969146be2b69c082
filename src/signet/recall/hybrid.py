"""The one recall implementation, for every surface and both store backends.

Channels are read through `RecallReads` (store/recall_reads.py), searched apart and kept as
evidence on each result; what a backend cannot read, or an embedder that fails, is named in
`degraded` while the other channels answer. How they rank is one frozen `RankingSpec`
(recall/spec.py). Recall writes nothing: a `touch` goes to store/accesses.py.
"""
from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import numpy as np

from signet.clock import Clock, SystemClock
from signet.config import SearchConfig
from signet.errors import InvalidInput, NotOnBackend, ProviderError
from signet.providers.embedder import Embedder
from signet.providers.guard import ProviderGuard
from signet.providers.query_embeddings import QueryEmbeddings
from signet.recall import context, dates, fuse, pooling, scoring, summaries
from signet.recall import sources as source_recall
from signet.recall.confidence import QueryTerms, model, stems
from signet.recall.dampen import dampen
from signet.recall.fuse import alpha_blend, rrf
from signet.recall.spec import (
    SEMANTIC_WEIGHT,
    Channel,
    ChannelInput,
    HubLookup,
    RankingSpec,
    TranscriptLookup,
)
from signet.store import fts
from signet.store.accesses import AccessRecorder
from signet.store.recall_reads import RecallReader, RecallReads, narrows
from signet.types import Memory, RecallHit, RecallQuery, RecallResponse, parse_ts

MODES = ("hybrid", "keyword", "vector", "full")
# Accesses at which the rehearsal boost reaches its bound (search.rehearsal_boost).
REHEARSAL_FULL = 20
# The dense channel embeds at most the query's last this many words. The bundled MiniLM reads
# 256 word pieces and cuts the rest from the *end*; an agent's prompt (the conversation so far,
# the question last) runs past that (365 pieces for the median LoCoMo long query), so the
# question itself was never embedded, only the oldest turns. English chat text takes 1.33 word
# pieces per word (1.42 at the 95th percentile), so 160 words fit the window.
QUERY_EMBED_WORDS = 160


# The query's vector (None when not asked or not made), and whether embedding it failed.
Embedded = tuple[np.ndarray | None, bool]


@dataclass(frozen=True, slots=True)
class Found:
    """What the channels found: `rankings` as fused (context lifts applied), `raw` as the
    channels scored them (the evidence), each memory's context lift, the query vector."""

    rankings: dict[str, list[tuple[str, float]]]
    raw: dict[str, list[tuple[str, float]]]
    lifts: dict[str, float]
    vector: np.ndarray | None


__all__ = [
    "MODES", "SEMANTIC_WEIGHT", "Channel", "ChannelInput", "HubLookup", "Recaller",
    "TranscriptLookup",
]


@dataclass(frozen=True)
class Recaller:
    """Built once (app.py); frozen: the ranking is `spec`'s, the hooks are given
    at build. `reads` is the backend's (store/recall_reads.py): SQLite or PostgreSQL, the same
    ranking over either."""

    reads: RecallReads
    config: SearchConfig
    # How recall ranks: channels, weights, fusion, shaping, dampening, graph hooks.
    spec: RankingSpec
    embedder: Embedder | None = None
    # The lineage's transcripts for `expand` (sessions/service.py `Sessions.excerpts`).
    transcripts: TranscriptLookup | None = None
    # Query vectors, cached by normalised text and micro-batched across concurrent recalls
    # (providers/query_embeddings.py); built from `embedder` when not given.
    query_embeddings: QueryEmbeddings | None = None
    # The query embedding's deadline and circuit breaker (providers/guard.py): a hung embedder
    # costs a recall at most the budget, then none while the breaker is open.
    guard: ProviderGuard | None = None
    # The time decay is measured to (signet/clock.py).
    clock: Clock = field(default_factory=SystemClock)
    # Accesses (`touch`) go to the deferred recorder (store/accesses.py), written in batches
    # off the read path on either backend; None: a `touch` records nothing.
    accesses: AccessRecorder | None = None

    def __post_init__(self) -> None:
        # Frozen: the query cache recall owns is set once, here (object.__setattr__).
        if self.query_embeddings is None and self.embedder is not None:
            queries = QueryEmbeddings(self.embedder, cache_size=self.config.query_cache_size)
            object.__setattr__(self, "query_embeddings", queries)

    def respec(self, **changes: Any) -> Recaller:
        """A new Recaller ranking by this spec with `changes` (a RankingSpec field each), on
        the same store, query cache and access recorder; this one is left as it was."""
        return replace(self, spec=replace(self.spec, **changes))

    @property
    def channels(self) -> tuple[Channel, ...]:
        return self.spec.channels

    @property
    def hub_memories(self) -> HubLookup | None:
        return self.spec.hub_memories

    def recall(self, query: RecallQuery) -> RecallResponse:
        query = validated(query, self.config)
        timings: dict[str, float] = {}
        degraded: list[str] = []
        started = time.perf_counter()
        # The query is embedded before a reader is taken: no connection of a pooled backend is
        # held while the model (or a hung provider, up to the guard's budget) runs.
        embedded = self._query_vector(query, timings)
        with self.reads.reader() as reader:
            found = self._channels(reader, query, timings, degraded, embedded)
            hits = self._rank(reader, query, found, timings)
        if query.expand and self.transcripts and hits:
            # After the reader is given back: the lineage reads through a connection of its own.
            hits = self._expand(hits, timings)
        if query.expand and self.transcripts is None and "transcripts" in self.reads.missing:
            degraded.append("transcripts")
        if query.touch and hits and self.accesses is not None:
            # Recorded, not written: recall never waits for the writer (store/accesses.py).
            self.accesses.record([h.memory.id for h in hits])
        timings["total"] = (time.perf_counter() - started) * 1000
        method = query.mode if not degraded else f"{query.mode}-degraded"
        return RecallResponse(tuple(hits), query.query, method, timings, tuple(degraded))

    # -- channels ---------------------------------------------------------------------------

    def _channels(
        self, reader: RecallReader, query: RecallQuery, timings: dict[str, float],
        degraded: list[str], embedded: Embedded,
    ) -> Found:
        pool = max(self.config.candidate_pool, query.limit)
        rankings: dict[str, list[tuple[str, float]]] = {}
        if not query.query:
            return Found(rankings, rankings, {}, None)
        if query.mode != "vector":
            mark = time.perf_counter()
            rankings["lexical"] = reader.lexical(query.query, query.filters, pool)
            if reader.has_hints(query.filters):
                try:
                    rankings["hint"] = reader.hints(query.query, query.filters, pool)
                except NotOnBackend:
                    degraded.append("hint")
            rankings["dated"] = _dated(reader, query, pool)
            timings["lexical"] = (time.perf_counter() - mark) * 1000
        vector = None
        if query.mode != "keyword":
            vector = self._semantic(reader, query, pool, rankings, timings, degraded, embedded)
        # The graph is one per agent, built from all its projects: a caller scoped to a project
        # ranks without it, or other projects' entities would shape its answers.
        agent_wide = not (query.filters.isolated and query.filters.project is not None)
        if query.mode in ("full", "hybrid") and agent_wide:
            for channel in self.channels:
                mark = time.perf_counter()
                try:
                    rankings[channel.name] = channel.search(
                        ChannelInput(reader.conn, query, vector, pool)
                    )
                except Exception:  # an extra channel never breaks core recall
                    degraded.append(channel.name)
                timings[channel.name] = (time.perf_counter() - mark) * 1000
        if query.mode == "full" and not self.channels and "graph" in self.reads.missing:
            degraded.append("graph")  # the graph channels are not on this backend yet
        rankings = {name: ranking for name, ranking in rankings.items() if ranking}
        if self.spec.source_channel and reader.sources_ranked(query.filters):
            mark = time.perf_counter()
            rankings = self._sourced(reader, query, rankings, pool)
            timings["sources"] = (time.perf_counter() - mark) * 1000
        mark = time.perf_counter()
        lifted, lifts = self._with_context(reader, query, rankings)
        timings["context"] = (time.perf_counter() - mark) * 1000
        cut = {name: ranking[: max(pool, 1)] for name, ranking in lifted.items()}
        return Found(cut, rankings, lifts, vector)

    def _sourced(
        self,
        reader: RecallReader,
        query: RecallQuery,
        rankings: dict[str, list[tuple[str, float]]],
        pool: int,
    ) -> dict[str, list[tuple[str, float]]]:
        """Add the source channel; give each source one representative across channels."""
        hits = []
        if query.mode != "vector":
            hits = reader.sources(query.query, query.filters, pool)
        ids = {m for ranking in rankings.values() for m, _ in ranking}
        key_of = reader.source_keys(list(ids))
        # A document competes by its best passage: its chunks keep their own ranks, and the
        # document is not ranked as a whole (a long one holds every query word somewhere).
        documents = reader.documents(
            sorted({key[2] for key in key_of.values()} | {h.source_id for h in hits})
        )
        if documents:
            key_of = {m: key for m, key in key_of.items() if key[2] not in documents}
            hits = [h for h in hits if h.source_id not in documents]
        if not hits and not key_of:
            return rankings
        weights = dict(self.spec.channel_weights)
        # Representatives from the flat channels only: a graph channel choosing which member
        # carries a source's evidence would move the flat ranking (mode full == hybrid there).
        graph_names = self.spec.channel_names
        flat = {n: r for n, r in rankings.items() if n not in graph_names}
        rep = source_recall.representatives(flat, key_of, weights, self.spec.rrf_k)
        out = dict(rankings)
        if "semantic" in out:
            # Whole-source closeness: a source is as close as its closest member.
            sourced = [(m, s) for m, s in out["semantic"] if m in key_of]
            out["source_semantic"] = source_recall.max_pooled(sourced, key_of, rep)
        if hits:
            out["source"] = source_recall.source_ranking(reader, hits, rep, query.filters)
        for name in ("lexical", "semantic"):
            if name in out:
                # A member's evidence counts once, in its whole source's channels.
                out[name] = [(m, s) for m, s in out[name] if m not in key_of]
        return {name: ranking for name, ranking in out.items() if ranking}

    def _with_context(
        self, reader: RecallReader, query: RecallQuery,
        rankings: dict[str, list[tuple[str, float]]],
    ) -> tuple[dict[str, list[tuple[str, float]]], dict[str, float]]:
        """Lift each context channel's memories by their conversation neighbours' scores; also
        the lift each memory received (its `context` evidence, apart from the channel's own)."""
        weight = self.spec.context_weight
        if weight <= 0:
            return rankings, {}
        chosen = [name for name in self.spec.context_channels if name in rankings]
        sources = {m for name in chosen for m, _ in rankings[name][: context.CONTEXT_SOURCES]}
        links = reader.neighbours(list(sources), same_project=query.filters.isolated)
        if links and narrows(query.filters):
            linked = {n for ns in links.values() for n in ns}
            allowed = reader.allowed_ids(sorted(linked), query.filters)
            links = {m: [n for n in ns if n in allowed] for m, ns in links.items()}
        out = dict(rankings)
        lifts: dict[str, float] = {}
        for name in chosen:
            top = rankings[name][: context.CONTEXT_SOURCES]
            local = {m: links[m] for m, _ in top if m in links}
            out[name] = context.with_context(rankings[name], local, weight)
            for memory_id, lift in context.lifts(top, local, weight).items():
                lifts[memory_id] = max(lifts.get(memory_id, 0.0), lift)
        return out, lifts

    def _semantic(
        self,
        reader: RecallReader,
        query: RecallQuery,
        pool: int,
        rankings: dict[str, list[tuple[str, float]]],
        timings: dict[str, float],
        degraded: list[str],
        embedded: Embedded,
    ) -> np.ndarray | None:
        if self.embedder is None or not self.reads.searches_vectors:
            if query.mode == "vector":
                degraded.append("semantic")
            return None
        vector, failed = embedded
        if failed or vector is None:
            degraded.append("semantic")
            return None
        mark = time.perf_counter()
        rankings["semantic"] = reader.nearest(
            vector, query.filters, pool, self.config.min_cosine
        )
        timings["semantic"] = (time.perf_counter() - mark) * 1000
        return vector

    def _query_vector(self, query: RecallQuery, timings: dict[str, float]) -> Embedded:
        """(the query's vector, whether embedding it failed); (None, False) when the query
        asks no dense channel."""
        if (not query.query or query.mode == "keyword" or self.embedder is None
                or not self.reads.searches_vectors):
            return None, False
        mark = time.perf_counter()
        try:
            vector = self._embed_query(_tail(query.query, QUERY_EMBED_WORDS))
        except ProviderError:
            return None, True
        timings["embed"] = (time.perf_counter() - mark) * 1000
        return vector, False

    def _embed_query(self, text: str) -> np.ndarray:
        queries = self.query_embeddings
        assert queries is not None  # set with the embedder
        if self.guard is None:
            return queries.embed(text)
        return self.guard.wait(lambda: queries.submit(text))

    # -- ranking ----------------------------------------------------------------------------

    def _rank(
        self, reader: RecallReader, query: RecallQuery, found: Found, timings: dict[str, float]
    ) -> list[RecallHit]:
        """Fuse the flat channels and rank their memories; then place what only a graph channel
        found (`_merged`). The graph never moves a flat result, so mode full ranks every flat
        result where hybrid does."""
        graph_names = self.spec.channel_names
        flat = {n: r for n, r in found.rankings.items() if n not in graph_names}
        mark = time.perf_counter()
        terms = self._terms(reader, query)
        share = self.spec.fixed_share
        if share is None:
            share = fuse.dense_share(
                found.raw, len(query.query.split()), self.spec.lexical_lead,
                self.spec.lead_query_words, self.spec.dense_lead,
            )
        fused = self._fuse(flat, share)
        graph = self._fuse({n: r for n, r in found.rankings.items() if n in graph_names})
        graph_only = {m: s for m, s in graph.items() if m not in fused}
        timings["fuse"] = (time.perf_counter() - mark) * 1000
        if not fused and not graph_only:
            return []
        mark = time.perf_counter()
        depth = max(query.limit * 2, 50)
        shortlist = sorted(fused, key=lambda m: -fused[m])[:depth]
        extra = sorted(graph_only, key=lambda m: -graph_only[m])[: max(depth - len(shortlist), 0)]
        memories = reader.memories(shortlist + extra)
        hits = self._crowded(self._scored(reader, query, terms, found, fused, memories, set()))
        if extra:
            # Hub dampening concerns only what a graph channel alone brought in.
            hubs = self._hubs(reader, query, extra)
            more = self._scored(reader, query, terms, found, graph_only, memories, hubs)
            hits = _merged(hits, self._crowded(more), self.spec.graph_floor)
        hits = summaries.below_facts(hits, frozenset(terms.weights))
        timings["dampen"] = (time.perf_counter() - mark) * 1000
        floor = query.min_confidence
        if floor is not None and floor > 0:
            hits = [h for h in hits if h.confidence >= floor]
        if self.spec.shape is not None:
            hits = self.spec.shape(hits, query.limit)
        return hits[: query.limit]

    def _fuse(
        self, rankings: dict[str, list[tuple[str, float]]], dense_share: float = 1.0
    ) -> dict[str, float]:
        """RRF with the spec's weights, the dense channels' scaled by `dense_share` (the
        query's evidence, recall/fuse.py); or the alpha blend."""
        spec = self.spec
        if spec.fusion == "alpha":
            return alpha_blend(rankings, spec.alpha)
        weights = fuse.adapted(spec.channel_weights, dense_share)
        return rrf(rankings, spec.rrf_k, weights or None)

    def _terms(self, reader: RecallReader, query: RecallQuery) -> QueryTerms:
        return QueryTerms.of(reader.term_idf(fts.query_tokens(query.query, None), query.filters))

    def _crowded(self, hits: list[RecallHit]) -> list[RecallHit]:
        """Sorted best first, later memories of an already-listed source damped."""
        hits.sort(key=lambda h: (-h.score, h.memory.id))
        if self.spec.crowding >= 1:
            return hits
        source_of = {h.memory.id: h.memory.source_id for h in hits if h.memory.source_id}
        by_id = {h.memory.id: h for h in hits}
        order = pooling.crowded(
            [(h.memory.id, h.score) for h in hits], source_of, self.spec.crowding
        )
        return [_with_score(by_id[m], score) for m, score in order]

    def _hubs(self, reader: RecallReader, query: RecallQuery, ids: Sequence[str]) -> set[str]:
        if not ids or self.spec.hub_memories is None or not self.spec.dampening.hub:
            return set()
        try:
            return self.spec.hub_memories(reader.conn, ids, query.graph_agent)
        except Exception:  # the graph never degrades core search
            return set()

    def _scored(
        self,
        reader: RecallReader,
        query: RecallQuery,
        terms: QueryTerms,
        found: Found,
        fused: dict[str, float],
        memories: dict[str, Memory],
        hubs: set[str],
    ) -> list[RecallHit]:
        evidence_of = scoring.Evidencer(found.raw, found.lifts)
        query_terms = set(fts.query_tokens(query.query))
        live = [m for m in fused if m in memories and not memories[m].is_deleted]
        cosines = self._cosines(reader, found, live, evidence_of)
        rate = model(with_cosine=found.vector is not None)
        min_score = self.config.min_score if query.min_score is None else query.min_score
        now = self.clock.now()
        staged: list[scoring.Staged] = []
        for memory_id in live:
            memory = memories[memory_id]
            coverage = terms.coverage(stems(" ".join((memory.content, *memory.tags))))
            cosine = cosines.get(memory_id)
            evidence = evidence_of(memory_id, cosine=cosine, coverage=coverage)
            result = dampen(
                fused[memory_id],
                memory,
                query_terms=query_terms,
                content=memory.content + " " + memory.hints,
                cosine=evidence.semantic,
                # `hubs` holds only what a graph channel brought in: a memory found by its own
                # words or meaning is not generic because the entities it mentions are popular.
                is_hub_only=memory_id in hubs,
                config=self.spec.dampening,
            )
            boost, adjustments = self._rehearsal(memory, now)
            confidence = rate(cosine, coverage)
            staged.append(scoring.Staged(
                memory, evidence, result.score, result.boost * boost,
                (*result.adjustments, *adjustments), confidence,
            ))
        return [
            RecallHit(st.memory, score, st.evidence, st.adjustments, confidence=st.confidence)
            for st, score in scoring.bounded(staged)
            if score >= min_score
        ]

    def _cosines(
        self, reader: RecallReader, found: Found, ids: Sequence[str],
        evidence_of: scoring.Evidencer,
    ) -> dict[str, float]:
        """Each candidate's cosine to the query: its own, its source's closest member's, or
        (when no channel ranked it) read from its stored vector."""
        if found.vector is None:
            return {}
        out = evidence_of.cosines(ids)
        missing = [m for m in ids if m not in out]
        if missing and self.embedder is not None:
            stored = reader.vectors(missing, self.embedder.model)
            for memory_id, vector in stored.items():
                if vector.shape == found.vector.shape:
                    out[memory_id] = max(float(np.dot(vector, found.vector)), 0.0)
        return out

    def _rehearsal(self, memory: Memory, now: datetime) -> tuple[float, tuple[str, ...]]:
        """Bounded boost for memories the agent used (feedback, a get, a `touch`; never a search
        result as such) and importance decay for memories not refreshed by access, reported in
        `adjustments`."""
        adjustments: list[str] = []
        boost = 1.0
        if memory.access_count > 0 and self.config.rehearsal_boost > 0:
            share = min(math.log1p(memory.access_count) / math.log1p(REHEARSAL_FULL), 1.0)
            boost += self.config.rehearsal_boost * share
            adjustments.append("rehearsal")
        if memory.pinned or self.config.decay_rate <= 0:
            return boost, tuple(adjustments)
        last = memory.last_accessed or memory.created_at
        days = max((now - parse_ts(last)).total_seconds() / 86400.0, 0.0)
        importance = memory.importance * (1.0 - self.config.decay_rate) ** days
        # Importance moves the score within a band so decay reorders, never erases, results.
        band = 0.85 + 0.3 * min(max(importance, 0.0), 1.0)
        if abs(band - 1.0) > 0.01:
            adjustments.append("importance")
        return boost * band, tuple(adjustments)

    def _expand(self, hits: list[RecallHit], timings: dict[str, float]) -> list[RecallHit]:
        mark = time.perf_counter()
        assert self.transcripts is not None
        texts = self.transcripts([h.memory for h in hits])
        timings["expand"] = (time.perf_counter() - mark) * 1000
        return [replace(h, transcript=texts.get(h.memory.id)) for h in hits]


def _dated(reader: RecallReader, query: RecallQuery, limit: int) -> list[tuple[str, float]]:
    """The lexical search again, within each day or month the query names (recall/dates.py)."""
    found: dict[str, float] = {}
    for span in dates.spans(query.query):
        since = max(filter(None, (query.filters.since, span.since)))
        until = min(filter(None, (query.filters.until, span.until)))
        if since > until:
            continue
        window = replace(query.filters, since=since, until=until)
        for memory_id, score in reader.lexical(query.query, window, limit):
            found[memory_id] = max(found.get(memory_id, score), score)
    return sorted(found.items(), key=lambda item: (-item[1], item[0]))[:limit]


def _merged(
    flat: list[RecallHit], graph: list[RecallHit], floor: float | None
) -> list[RecallHit]:
    """Flat results in their order, then graph-only ones: after all of them when `floor` is None,
    else after the last flat result whose confidence reaches `floor`; their scores set between
    their neighbours' so the page stays sorted."""
    if not graph:
        return flat
    if floor is None:
        cut = len(flat)
    else:
        cut = max((i + 1 for i, h in enumerate(flat) if h.confidence >= floor), default=0)
    above = flat[cut - 1].score if cut > 0 else None
    below = flat[cut].score if cut < len(flat) else None
    high = above if above is not None else max(h.score for h in graph) * 2
    low = below if below is not None else (above or high) * 0.5 * 0.5
    step = (high - low) / (len(graph) + 1)
    placed = [replace(h, score=high - step * (i + 1)) for i, h in enumerate(graph)]
    return [*flat[:cut], *placed, *flat[cut:]]


def _with_score(hit: RecallHit, score: float) -> RecallHit:
    if score == hit.score:
        return hit
    return replace(hit, score=score, adjustments=(*hit.adjustments, "crowding"))


def _tail(text: str, words: int) -> str:
    """The last `words` words of `text` (all of it when shorter): a query's newest words."""
    parts = text.split()
    return text if len(parts) <= words else " ".join(parts[-words:])


def validated(query: RecallQuery, config: SearchConfig) -> RecallQuery:
    """The query checked against the recall limits, a long one cut to its newest words (both
    backends' recall ask it)."""
    if query.mode not in MODES:
        raise InvalidInput(f"unknown recall mode {query.mode!r} (one of {', '.join(MODES)})")
    if query.limit < 1 or query.limit > config.max_limit:
        raise InvalidInput(f"limit must be between 1 and {config.max_limit}")
    if query.min_confidence is not None and not 0 <= query.min_confidence <= 1:
        raise InvalidInput("min_confidence must be between 0 and 1")
    text = query.query.strip()
    try:
        text.encode("utf-8")  # the tokenizer and the store take only valid Unicode
    except UnicodeEncodeError:
        raise InvalidInput("query is not valid Unicode text (holds a lone surrogate)") from None
    if len(text) > config.max_query_chars:
        # A long query is cut, not refused: agents paste whole prompts and conversations
        # as queries, and their end (the newest words, the question) is what is asked.
        text = text[-config.max_query_chars :].strip()
    return replace(query, query=text)
