"""user-prompt-submit: what the memory knows about this prompt, only when it knows something.

Three steps, the first two under one token budget (hooks.prompt_submit_tokens):

1. Entity context: the current attributes of known entities named in the prompt
   (entity_context.py).
2. Implicit recall of the prompt through the one Recaller (the configured default mode, no
   access touch: an injection is not the agent asking), behind the relevance gate: a memory is
   injected only when the prompt is about something stored: the best hit's calibrated
   confidence (recall/confidence.py: the query's informative words the memory holds and its
   cosine to the prompt, mapped to the probability of being a true answer) reaches
   hooks.min_relevance; then the hits above the agent floor go in, in recall's order. Recall's
   fused score cannot gate: it ranks, and the best hit of a prompt about nothing stored scores
   like the best of a related one. The threshold was chosen from the injection benchmark (docs/benchmarks.md): MemAware's
   requests against prompts about nothing stored. Memories this session already has are skipped (the ledger).
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
from signet.recall.confidence import agent_min_confidence
from signet.types import RecallHit, RecallQuery

if TYPE_CHECKING:
    from signet.app import SignetApp

__all__ = ["gated_hits", "prompt_submit"]

RECALL_DEPTH = 3  # recall asks this many times the memories it may inject


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
    """Recall's hits for `prompt` when the prompt clears the gate, best first; else none.

    The gate is per prompt: is anything stored relevant? Its best hit's calibrated confidence
    must reach hooks.min_relevance. Which memories then go in is recall's ranking above the
    agent floor (recall/confidence.py AGENT_MIN_CONFIDENCE). Gating each hit at the prompt
    threshold instead kept most true answers out (they sit below the best hit's confidence)."""
    cfg = app.config.hooks
    if cfg.prompt_max_memories == 0:
        return []
    floor = min(agent_min_confidence(), cfg.min_relevance)
    query = RecallQuery(
        prompt[: app.config.search.max_query_chars],
        limit=min(cfg.prompt_max_memories * RECALL_DEPTH, app.config.search.max_limit),
        mode=app.config.search.default_mode, touch=False, min_confidence=floor,
    )
    hits = [h for h in app.recall(query, route="hook").hits if h.confidence >= floor]
    if not hits or max(h.confidence for h in hits) < cfg.min_relevance:
        return []
    return hits
