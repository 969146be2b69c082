"""user-prompt-submit: what the memory knows about this prompt, only when it knows something.

Three steps, the first two under one token budget (hooks.prompt_submit_tokens):

1. Entity context: the current attributes of known entities named in the prompt
   (entity_context.py).
2. Implicit recall of the prompt through the one Recaller (the configured default mode, no
   access touch: an injection is not the agent asking), behind the relevance gate: a memory is
   injected only when its relevance reaches hooks.min_relevance. Relevance is recall's
   calibrated `confidence` where recall provides one, else the cosine similarity of the
   memory's stored vector to the prompt's (keyword overlap alone is what makes a general
   question match unrelated memories, so words alone never pass). The threshold was chosen from the
   injection benchmark (docs/benchmarks.md): MemAware's requests against prompts about nothing
   stored. Memories this session already has are skipped (the ledger).
3. Capture: "remember that ..." requests become memories (capture.py).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import numpy as np

from signet.errors import ProviderError
from signet.injection.budget import ContextBlock
from signet.injection.capture import capture_requests
from signet.injection.entity_context import add_entity_context, named_entities
from signet.injection.ledger import fresh_only, remember_injected
from signet.injection.memory_lines import add_memories
from signet.injection.request import HookRequest
from signet.injection.result import Injection
from signet.store.graph_read import memory_vectors
from signet.types import RecallHit, RecallQuery

if TYPE_CHECKING:
    from signet.app import SignetApp

__all__ = ["gated_hits", "prompt_submit", "relevances"]

log = logging.getLogger(__name__)

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
    """Recall's hits for `prompt` that clear the relevance gate, best first."""
    cfg = app.config.hooks
    if cfg.prompt_max_memories == 0:
        return []
    text = prompt[: app.config.search.max_query_chars]
    query = RecallQuery(
        text, limit=min(cfg.prompt_max_memories * RECALL_DEPTH, app.config.search.max_limit),
        mode=app.config.search.default_mode, touch=False,
    )
    hits = list(app.recall(query, route="hook").hits)
    scores = relevances(app, text, hits)
    return [hit for hit in hits if scores.get(hit.memory.id, 0.0) >= cfg.min_relevance]


def relevances(app: SignetApp, text: str, hits: list[RecallHit]) -> dict[str, float]:
    """Each hit's relevance: recall's calibrated confidence when it carries one, else the
    cosine similarity of the memory's stored vector to the prompt's (recall's evidence scores
    are relative to each channel's best, so they cannot gate on their own). A memory without a
    vector has relevance 0."""
    out: dict[str, float] = {}
    for hit in hits:
        confidence = getattr(hit, "confidence", None)
        if isinstance(confidence, int | float):
            out[hit.memory.id] = float(confidence)
    missing = [h.memory.id for h in hits if h.memory.id not in out]
    if missing and app.embedder is not None:
        out.update(_cosines(app, text, missing))
    return out


def _cosines(app: SignetApp, text: str, memory_ids: list[str]) -> dict[str, float]:
    assert app.embedder is not None
    vector = app.recaller.query_cache.get(text)  # recall just embedded it
    if vector is None:
        try:
            vector = app.embedder.embed([text])[0]
        except ProviderError as exc:
            log.warning("prompt embedding failed, nothing passes the gate: %s", exc)
            return {}
    stored = memory_vectors(app.store.reader(), memory_ids, app.embedder.model)
    return {memory_id: float(np.dot(vector, v)) for memory_id, v in stored.items()}
