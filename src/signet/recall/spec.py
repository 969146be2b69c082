"""The ranking spec: everything that decides how recall ranks, in one frozen value.

The Recaller is built once at the composition root from a `RankingSpec`: the extra channels, each
channel's RRF weight, the fusion, the context lift, crowding, whole-source evidence, the graph-only
floor, page shaping and the hub lookup. The graph contributes `GraphHooks` (`KnowledgeGraph.hooks`)
so it never reaches into a built Recaller. Every recall weight lives here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal, Protocol

import numpy as np

from signet.config import DampeningConfig, SearchConfig
from signet.store.connection import Connection
from signet.types import Memory, RecallHit, RecallQuery

# RRF weight of the dense channel. MiniLM's ranking trails BM25 on LoCoMo (58.7 vs 79.2 Hit@10
# with context); at equal weight it pulled hybrid below BM25 alone (73.8), at 0.3 hybrid beat
# both (79.9 LoCoMo cat1-4; MemAware easy/medium/hard 60.4/46.7/11.0 vs BM25 59.4/41.9/9.2).
SEMANTIC_WEIGHT = 0.3
# RRF weight of the legacy graph boost (graph/channels.py `GraphBoostChannel`): small, so it
# nudges memories the flat channels found rather than adding its own.
BOOST_WEIGHT = 0.3
# Conversation context (recall/context.py): a neighbour's relative score lifts a memory by this.
CONTEXT_WEIGHT = 0.5
# Source crowding (recall/pooling.py): the n-th memory of an already-listed source is damped by
# CROWDING^n.
CROWDING = 0.7
# Query-adaptive fusion (recall/fuse.py `dense_share`): when the lexical channel's best match
# leads its second by this share of its score or more, the dense channels are left out of the
# fusion; below it their weight falls linearly with the lead. Chosen by leave-one-out on the dev
# benchmarks (docs/benchmarks.md, `signet bench loo`).
LEXICAL_LEAD = 0.2
# The dense channels' own lead (best cosine over second, recall/fuse.py): at this lead they keep
# their whole weight whatever the lexical lead, at twice it twice their weight (0: unused).
DENSE_LEAD = 0.0
# Queries of more words than this are prompts, not questions: the best lexical match of a
# prompt that quotes the conversation is the quoted turn, whatever its lead says.
LEAD_QUERY_WORDS = 80


@dataclass(frozen=True, slots=True)
class ChannelInput:
    # The connection recall reads on, or None where it holds none (the graph channels then
    # read through their store: store/graph_store.py `reading`).
    conn: Connection | None
    query: RecallQuery
    query_vector: np.ndarray | None
    limit: int


class Channel(Protocol):
    """An extra evidence channel (graph traversal): ranked (memory id, score), best first."""

    name: str

    def search(self, request: ChannelInput) -> list[tuple[str, float]]: ...


# (connection, memory ids, the agent whose graph recall walks) -> the hub-only memories.
HubLookup = Callable[[Connection | None, Sequence[str], str], set[str]]
# Memory id -> transcript excerpt (sessions/service.py `Sessions.excerpts`, on either backend).
TranscriptLookup = Callable[[Sequence[Memory]], dict[str, str]]
Shaper = Callable[[list[RecallHit], int], list[RecallHit]]


def _frozen(weights: Mapping[str, float]) -> Mapping[str, float]:
    return MappingProxyType(dict(weights))


@dataclass(frozen=True, slots=True)
class GraphHooks:
    """What the graph adds to ranking: its channels, their RRF weights, the page shaping (the
    flat-channel reservation) and the hub lookup (None when the graph is off)."""

    channels: tuple[Channel, ...] = ()
    weights: Mapping[str, float] = field(default_factory=lambda: _frozen({}))
    shape: Shaper | None = None
    hub_memories: HubLookup | None = None


@dataclass(frozen=True, slots=True)
class RankingSpec:
    channels: tuple[Channel, ...] = ()
    channel_weights: Mapping[str, float] = field(
        default_factory=lambda: _frozen({"semantic": SEMANTIC_WEIGHT})
    )
    fusion: Literal["rrf", "alpha"] = "rrf"
    rrf_k: int = 60
    alpha: float = 0.7
    dampening: DampeningConfig = field(default_factory=DampeningConfig)
    shape: Shaper | None = None
    hub_memories: HubLookup | None = None
    # Conversation context (recall/context.py) and source crowding (recall/pooling.py).
    context_weight: float = CONTEXT_WEIGHT
    context_channels: tuple[str, ...] = ("lexical", "semantic")
    crowding: float = CROWDING
    # Whole-source evidence (recall/sources.py): BM25 over whole sources and the source's
    # closest member, as two channels in place of the members' own lexical and semantic ones.
    source_channel: bool = True
    # Graph-only results rank below every flat result at least this confident, or below
    # every flat result when None (the default, provably no harm: hybrid.py `_merged`).
    graph_floor: float | None = None
    # Query-adaptive fusion: the lexical lead at which the dense channels are left out (0: the
    # fixed weights, always), for queries of at most `lead_query_words` words.
    lexical_lead: float = LEXICAL_LEAD
    dense_lead: float = DENSE_LEAD
    lead_query_words: int = LEAD_QUERY_WORDS
    # The dense channels' share fixed for every query, whatever its evidence (None: from the
    # evidence). The benchmarks ask a dense-heavy fusion so to gather the channels' candidates.
    fixed_share: float | None = None

    def __post_init__(self) -> None:
        # A caller's dict is copied and made read-only: the spec cannot change under recall.
        object.__setattr__(self, "channel_weights", _frozen(self.channel_weights))
        object.__setattr__(self, "channels", tuple(self.channels))

    @classmethod
    def of(cls, search: SearchConfig, graph: GraphHooks | None = None) -> RankingSpec:
        """The spec for a configuration, with the graph's hooks when given."""
        hooks = graph or GraphHooks()
        return cls(
            channels=hooks.channels,
            channel_weights={"semantic": SEMANTIC_WEIGHT, **hooks.weights},
            fusion=search.fusion, rrf_k=search.rrf_k, alpha=search.alpha,
            dampening=search.dampening, shape=hooks.shape, hub_memories=hooks.hub_memories,
        )

    @property
    def channel_names(self) -> frozenset[str]:
        return frozenset(c.name for c in self.channels)
