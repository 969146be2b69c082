"""A per-candidate view of one query's ranking: what a learned combiner would read.

The candidates are the union of the default fusion's page and a dense-heavy one. Each gets numbers
from its evidence, times the query's own (a linear score cannot use what all candidates share).
`MODEL` leaves channel-specific numbers out, so a fit does not learn one store's channels. Recall
does not rank by it: held out it lost (docs/benchmarks.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from signet.recall.spec import SEMANTIC_WEIGHT
from signet.types import RecallHit

# Each page is this deep; the union is what the combiner reorders.
CANDIDATES = 50
# The dense-heavy page's share of the dense channels' fixed weight: their weight then equals
# the lexical channel's.
WIDE_SHARE = 1 / SEMANTIC_WEIGHT

FEATURES = (
    "default_rr", "wide_rr", "lexical", "lexical_rr", "source", "hint", "cosine", "cosine_gap",
    "semantic_rr", "source_semantic", "traversal", "context", "coverage", "both", "log_len",
    "long_x_cosine", "long_x_lexical", "long_x_default", "lead_x_lexical", "lead_x_cosine",
    "dense_lead_x_cosine",
)


def _rr(rank: int | None) -> float:
    return 1.0 / rank if rank else 0.0


def _lead(values: Sequence[float]) -> float:
    """(best - second) / best of these scores (1 for a lone one, 0 for none)."""
    top = sorted(values, reverse=True)[:2]
    if not top or top[0] <= 0:
        return 0.0
    return 1.0 if len(top) < 2 else (top[0] - top[1]) / top[0]


def candidates(
    query: str, default: Sequence[RecallHit], wide: Sequence[RecallHit]
) -> list[tuple[RecallHit, dict[str, float]]]:
    """Each candidate of the two pages (the default's first, then the dense-heavy page's
    others), with its `FEATURES`."""
    by_id: dict[str, RecallHit] = {}
    for hit in (*default, *wide):
        by_id.setdefault(hit.memory.id, hit)
    default_rank = {h.memory.id: i for i, h in enumerate(default, 1)}
    wide_rank = {h.memory.id: i for i, h in enumerate(wide, 1)}
    hits = list(by_id.values())
    long = min(math.log1p(len(query.split())) / math.log1p(80), 2.0)
    lexical = [max(h.evidence.lexical or 0.0, h.evidence.source or 0.0) for h in hits]
    cosines = [h.evidence.cosine or 0.0 for h in hits]
    lexical_lead, dense_lead = _lead(lexical), _lead(cosines)
    best_cosine = max(cosines, default=0.0)
    out = []
    for hit, lex, cosine in zip(hits, lexical, cosines, strict=True):
        ev = hit.evidence
        default_rr = _rr(default_rank.get(hit.memory.id))
        own = {
            "default_rr": default_rr,
            "wide_rr": _rr(wide_rank.get(hit.memory.id)),
            "lexical": ev.lexical or 0.0,
            "lexical_rr": _rr(ev.lexical_rank),
            "source": ev.source or 0.0,
            "hint": ev.hint or 0.0,
            "cosine": cosine,
            "cosine_gap": cosine - best_cosine,
            "semantic_rr": _rr(ev.semantic_rank),
            "source_semantic": ev.source_semantic or 0.0,
            "traversal": ev.traversal or 0.0,
            "context": ev.context or 0.0,
            "coverage": ev.coverage or 0.0,
            "both": float(lex > 0 and (ev.semantic is not None or ev.source_semantic is not None)),
            "log_len": math.log1p(len(hit.memory.content.split())) / 5.0,
            "long_x_cosine": long * cosine,
            "long_x_lexical": long * lex,
            "long_x_default": long * default_rr,
            "lead_x_lexical": lexical_lead * lex,
            "lead_x_cosine": lexical_lead * cosine,
            "dense_lead_x_cosine": dense_lead * cosine,
        }
        # Rounded as the benchmarks save them, so a fit scored offline ranks as recall does.
        out.append((hit, {name: round(value, 6) for name, value in own.items()}))
    return out


MODEL = (
    "default_rr", "wide_rr", "lexical_side", "lexical_side_rr", "cosine", "cosine_gap",
    "cosine_rr", "traversal", "context", "coverage", "both", "log_len", "long_x_cosine",
    "long_x_lexical", "long_x_default", "lead_x_lexical", "lead_x_cosine",
    "dense_lead_x_cosine",
)


def _ranks(values: Sequence[float]) -> list[float]:
    """1 / rank of each positive value among them (ties: the earlier first), 0 for none."""
    order = sorted((i for i, v in enumerate(values) if v > 0), key=lambda i: (-values[i], i))
    out = [0.0] * len(values)
    for rank, i in enumerate(order, 1):
        out[i] = 1.0 / rank
    return out


def model_inputs(rows: Sequence[Mapping[str, float]]) -> list[list[float]]:
    """One query's candidates (`candidates`' features) as the combiner reads them (`MODEL`)."""
    lexical = [max(r["lexical"], r["source"], r["hint"]) for r in rows]
    derived = [
        {**r, "lexical_side": lex, "lexical_side_rr": lex_rr, "cosine_rr": cos_rr}
        for r, lex, lex_rr, cos_rr in zip(
            rows, lexical, _ranks(lexical), _ranks([r["cosine"] for r in rows]), strict=True)
    ]
    return [[round(d[name], 6) for name in MODEL] for d in derived]


def linear(inputs: Sequence[float], weights: Sequence[float]) -> float:
    """The combiner's score of one candidate: `weights` (one per `MODEL`) times its inputs;
    only the order within one query matters."""
    return sum(w * x for w, x in zip(weights, inputs, strict=True))
