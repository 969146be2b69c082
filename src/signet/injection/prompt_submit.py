"""user-prompt-submit: what the memory knows about this prompt, only when it knows something.

Three steps, the first two under one token budget (hooks.prompt_submit_tokens):

1. Entity context: the current attributes of known entities named in the prompt
   (entity_context.py).
2. Implicit recall of the prompt through the one Recaller (the configured default mode, no
   access touch: an injection is not the agent asking), behind the relevance gate, which asks
   one question of the prompt as a whole: is it about something stored? (`relevant`). The
   evidence is how close in meaning the prompt's nearest memories are: the mean cosine of its
   SIMILAR_NEIGHBOURS closest recalled memories must reach hooks.min_similarity (one close
   memory can be luck; several close ones are a subject the store holds). Without vectors
   (keyword mode, the embedder down) it falls back to the best hit's calibrated confidence
   (recall/confidence.py) against hooks.min_relevance. Once the prompt passes, recall's own
   ranking decides what goes in: its first hits, as many as the budget and
   hooks.prompt_max_memories allow, with no per-hit floor. Both benchmarks showed why
   (docs/benchmarks.md, "What the prompt hook injects"): the per-hit confidence says whether a
   hit holds the prompt's words, and MemAware's requests are paraphrases that share none, and
   LoCoMo's answers are often found through the question turn before them; gating on it kept
   most true answers out, and so did a per-hit confidence floor after the gate. Recall's fused
   score cannot gate either: it ranks, and the best hit of a prompt about nothing stored scores
   like the best of a related one. Memories this session already has are skipped (the ledger).
3. Capture: "remember that ..." requests become memories (capture.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from signet.injection.budget import ContextBlock
from signet.injection.capture import capture_requests
from signet.injection.entity_context import add_entity_context, named_entities
from signet.injection.ledger import fresh_only, remember_injected
from signet.injection.memory_lines import add_memories
from signet.injection.request import HookRequest
from signet.injection.result import Injection
from signet.types import RecallHit, RecallQuery

if TYPE_CHECKING:
    from signet.app import SignetApp

__all__ = ["SIMILAR_NEIGHBOURS", "candidates", "gated_hits", "prompt_submit", "relevant"]

RECALL_DEPTH = 3  # recall asks this many times the memories it may inject
SIMILAR_NEIGHBOURS = 3  # the gate reads the mean cosine of the prompt's this many nearest hits


def prompt_submit(app: SignetApp, request: HookRequest, *, record: bool = True) -> Injection:
    prompt = (request.prompt or "").strip()
    captured = capture_requests(app, request) if record else []
    if not prompt:
        return Injection("user-prompt-submit", extra={"captured": captured})
    cfg = app.config.hooks
    block = ContextBlock(cfg.prompt_submit_tokens)
    block.add("# Signet memory (relevant to this prompt)", whole=True)
    header_lines = len(block.lines)
    entities = add_entity_context(app, block, named_entities(app, prompt))
    hits = gated_hits(app, prompt)
    hits = [h for h in hits if h.memory.id not in captured]
    fresh = fresh_only(app, request, [h.memory for h in hits])
    ids = add_memories(block, fresh, cap=cfg.memory_tokens, limit=cfg.prompt_max_memories)
    if record:
        remember_injected(app, request, [*ids, *captured], "user-prompt-submit")
    if len(block.lines) == header_lines:
        return Injection("user-prompt-submit", extra={"captured": captured})
    return Injection(
        "user-prompt-submit", block.text(), tuple(ids), block.used, block.truncated,
        extra={"captured": captured, "entities": entities},
    )


def gated_hits(app: SignetApp, prompt: str) -> list[RecallHit]:
    """Recall's hits for `prompt`, best first, when the prompt clears the gate; else none."""
    cfg = app.config.hooks
    hits = candidates(app, prompt)
    return hits if relevant(hits, cfg.min_similarity, cfg.min_relevance) else []


def candidates(app: SignetApp, prompt: str) -> list[RecallHit]:
    """Recall's hits for `prompt`, best first: what the hook may choose from."""
    cfg = app.config.hooks
    if cfg.prompt_max_memories == 0:
        return []
    query = RecallQuery(
        prompt[: app.config.search.max_query_chars],
        limit=min(cfg.prompt_max_memories * RECALL_DEPTH, app.config.search.max_limit),
        mode=app.config.search.default_mode, touch=False,
    )
    return list(app.recall(query, route="hook").hits)


def relevant(hits: list[RecallHit], min_similarity: float, min_relevance: float) -> bool:
    """Whether the prompt these hits answer is about something stored.

    With vectors: the mean cosine of its SIMILAR_NEIGHBOURS nearest hits (fewer when the store
    holds fewer; a hit without a vector counts 0) reaches `min_similarity`. Without (no hit
    carries a cosine): the best calibrated confidence reaches `min_relevance`."""
    if not hits:
        return False
    cosines = [h.evidence.cosine for h in hits]
    if all(c is None for c in cosines):
        return max(h.confidence for h in hits) >= min_relevance
    nearest = sorted((c or 0.0 for c in cosines), reverse=True)[:SIMILAR_NEIGHBOURS]
    return sum(nearest) / len(nearest) >= min_similarity
