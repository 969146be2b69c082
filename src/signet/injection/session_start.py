"""Session-start: what an agent should know before the first prompt, under a token budget.

In order: the identity files (starter text skipped, except AGENTS.md's, which says to use memory),
the head of MEMORY.md, then memories not in the ledger. An identity file takes at most a quarter of
the budget and MEMORY.md a fifth, so memories always get a seat. `clear` and `compact` reset the
ledger; a `resume` start gets nothing, its transcript holding the first batch.
"""

from __future__ import annotations

from datetime import datetime
from importlib import resources
from typing import TYPE_CHECKING

from signet.errors import NotFound
from signet.injection.budget import ContextBlock
from signet.injection.ledger import fresh_only, remember_injected, start_over
from signet.injection.memory_lines import add_memories
from signet.injection.request import HookRequest
from signet.injection.result import Injection
from signet.injection.warm import warm_up
from signet.types import Memory, parse_ts

if TYPE_CHECKING:
    from signet.app import SignetApp

__all__ = ["session_start"]

IDENTITY_ORDER = ("AGENTS.md", "SOUL.md", "IDENTITY.md", "USER.md")
IDENTITY_SHARE = 0.25
MEMORY_MD_SHARE = 0.2
CANDIDATES = 200
# Claude Code's SessionStart sources after which the agent's context no longer holds what
# this session was given before.
CONTEXT_RESET_SOURCES = frozenset({"clear", "compact"})
# A resumed session's context is its transcript, which holds the batch it started with.
RESUMED = "resume"


def session_start(app: SignetApp, request: HookRequest, *, record: bool = True) -> Injection:
    """`record`: write the injected ids to the session's ledger (False: a preview)."""
    warm_up(app)
    if request.source == RESUMED:
        return Injection("session-start", extra={"project": request.project_name, "resumed": True})
    if record and request.source in CONTEXT_RESET_SOURCES:
        start_over(app, request)
    budget = app.config.hooks.session_start_tokens
    block = ContextBlock(budget)
    block.add("# Signet memory", whole=True)
    header_lines = len(block.lines)
    _identity(app, block, budget)
    _memory_md(app, block, budget)
    ids = _memories(app, block, request)
    if record:
        remember_injected(app, request, ids, "session-start")
    if len(block.lines) == header_lines:
        return Injection("session-start", extra={"project": request.project_name})
    return Injection(
        "session-start", block.text(), tuple(ids), block.used, block.truncated,
        extra={"project": request.project_name},
    )


def _identity(app: SignetApp, block: ContextBlock, budget: int) -> None:
    for name in IDENTITY_ORDER:
        content = _file(app, name)
        if content is None or (name != "AGENTS.md" and content == _template(name)):
            continue
        block.add(f"## {name}\n{content.strip()}", cap=int(budget * IDENTITY_SHARE))


def _memory_md(app: SignetApp, block: ContextBlock, budget: int) -> None:
    content = _file(app, "MEMORY.md")
    if content is None or content == _template("MEMORY.md") or not content.strip():
        return
    block.add(f"## MEMORY.md (head)\n{content.strip()}", cap=int(budget * MEMORY_MD_SHARE))


def _memories(app: SignetApp, block: ContextBlock, request: HookRequest) -> list[str]:
    project = request.project_name
    candidates = app.injections.startup_candidates(
        agent_id="default", project=project, limit=CANDIDATES
    )
    candidates = fresh_only(app, request, candidates)
    if not candidates or block.left < 20:
        return []
    now = app.clock.now()
    decay = app.config.search.decay_rate
    ranked = sorted(candidates, key=lambda m: _rank(m, project, now, decay), reverse=True)
    title = f"## Memories ({project} first)" if project else "## Memories"
    if not block.add(title, whole=True):
        return []
    ids = add_memories(block, ranked, cap=app.config.hooks.memory_tokens)
    if not ids:
        block.lines.pop()
    return ids


def _rank(memory: Memory, project: str | None, now: datetime, decay: float) -> tuple[int, int, float]:
    """(pinned, in the project, importance x decay): pinned first, then the project's."""
    if memory.pinned:
        return (1, int(memory.project == project), 1.0)
    last = memory.last_accessed or memory.created_at
    days = max((now - parse_ts(last)).total_seconds() / 86400.0, 0.0)
    score = memory.importance * (1.0 - decay) ** days
    return (0, int(project is not None and memory.project == project), score)


def _file(app: SignetApp, name: str) -> str | None:
    try:
        return str(app.identity_file(name)["content"])
    except NotFound:
        return None


def _template(name: str) -> str:
    return resources.files("signet.resources").joinpath(f"workspace-{name}").read_text("utf-8")
