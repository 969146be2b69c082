"""User-prompt-submit: what the memory knows about this prompt, only when it knows something.

Under hooks.prompt_submit_tokens: entity context (entity_context.py), then an implicit recall in the
default mode without an access touch, each hit judged on its own (judge.py). A prompt about nothing
stored gets nothing, never filler; nor does one that names only things no candidate mentions
(names.py). The choice is made before the ledger, so a repeated prompt
injects nothing new rather than the next-best leftovers, and a superseded memory never goes in. Then
"remember that ..." requests are captured (capture.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from signet.injection.budget import ContextBlock
from signet.injection.capture import Captures, capture_requests
from signet.injection.entity_context import add_entity_context, named_entities
from signet.injection.judge import CANDIDATES, has_vectors, judge, select
from signet.injection.ledger import fresh_only, remember_injected
from signet.injection.memory_lines import add_memories
from signet.injection.names import names_unknown
from signet.injection.request import HookRequest
from signet.injection.result import Injection
from signet.types import RecallHit, RecallQuery

if TYPE_CHECKING:
    from signet.app import SignetApp

__all__ = ["candidates", "judged_hits", "prompt_submit", "unknown_names"]


def prompt_submit(app: SignetApp, request: HookRequest, *, record: bool = True) -> Injection:
    prompt = (request.prompt or "").strip()
    captures = capture_requests(app, request) if record else Captures()
    captured = captures.ids
    extra: dict[str, Any] = {"captured": captured}
    if captures.refused:
        # The hook keeps its spooled copy when this is present (hooks/runner.py).
        extra["capture_refused"] = [str(e) for e in captures.refused]
    if not prompt:
        return Injection("user-prompt-submit", extra=extra)
    cfg = app.config.hooks
    block = ContextBlock(cfg.prompt_submit_tokens)
    block.add("# Signet memory (relevant to this prompt)", whole=True)
    header_lines = len(block.lines)
    entities = add_entity_context(app, block, named_entities(app, prompt))
    hits = judged_hits(app, prompt)
    hits = [h for h in hits if h.memory.id not in captured]
    fresh = fresh_only(app, request, [h.memory for h in hits])
    ids = add_memories(block, fresh, cap=cfg.memory_tokens, limit=cfg.prompt_max_memories)
    if record:
        remember_injected(app, request, [*ids, *captured], "user-prompt-submit")
    if len(block.lines) == header_lines:
        return Injection("user-prompt-submit", extra=extra)
    return Injection(
        "user-prompt-submit", block.text(), tuple(ids), block.used, block.truncated,
        extra={**extra, "entities": entities},
    )


def judged_hits(app: SignetApp, prompt: str) -> list[RecallHit]:
    """Recall's current hits for `prompt` that go in (judge.select), in recall's order (judged
    among all the candidates: a replaced memory still counts for the margins)."""
    cfg = app.config.hooks
    hits = candidates(app, prompt)
    if has_vectors(hits):
        floor, memory_floor = cfg.min_relevance, cfg.min_memory_relevance
    else:
        floor = memory_floor = cfg.min_keyword_confidence
    current = [j for j in judge(hits) if j.hit.memory.superseded_by is None]
    chosen = [j.hit for j in select(current, floor, memory_floor, cfg.prompt_max_memories)]
    if chosen and unknown_names(app, prompt, hits):
        return []  # the prompt names only things no candidate mentions (names.py)
    return chosen


def unknown_names(app: SignetApp, prompt: str, hits: list[RecallHit]) -> bool:
    """names.py's check on the text recall was asked (a pasted log of megabytes would cost
    the hook its budget)."""
    text = prompt[: app.config.search.max_query_chars]
    return names_unknown(text, (h.memory.content for h in hits))


def candidates(app: SignetApp, prompt: str) -> list[RecallHit]:
    """Recall's hits for `prompt`, best first: what the hook may choose from."""
    cfg = app.config.hooks
    if cfg.prompt_max_memories == 0:
        return []
    query = RecallQuery(
        prompt[: app.config.search.max_query_chars],
        limit=min(CANDIDATES, app.config.search.max_limit),
        mode=app.config.search.default_mode, touch=False,
    )
    return list(app.recall(query, route="hook").hits)
