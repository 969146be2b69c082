"""Context injection for the harness hooks: what an agent is given without asking.

`handle(app, event, payload)` is the one entry point, used by the daemon's `/api/hooks/*`
routes, the MCP tool `memory_context` and the injection benchmark, so every surface injects the
same thing under the same budget and gate:

- session-start (session_start.py): identity files, the MEMORY.md head, pinned and important
  memories, project first, under hooks.session_start_tokens;
- user-prompt-submit (prompt_submit.py): entity context and gated implicit recall under
  hooks.prompt_submit_tokens, and capture of "remember that ..." requests;
- session-end and pre-compaction (handoff.py): the transcript to the session layer.

A per-session ledger in the database (store/injections.py) keeps any memory from being given
twice in one session. Budgets are counted with the bundled tokenizer (tokens.py) and every cut
is marked (budget.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from signet.errors import InvalidInput
from signet.injection.handoff import hand_off
from signet.injection.prompt_submit import prompt_submit
from signet.injection.request import EVENTS, HARNESSES, HookRequest
from signet.injection.result import Injection
from signet.injection.session_start import session_start

if TYPE_CHECKING:
    from signet.app import SignetApp

__all__ = ["EVENTS", "HARNESSES", "HookRequest", "Injection", "handle"]


def handle(
    app: SignetApp, event: str, payload: Any, *, record: bool = True, confined: bool = True
) -> Injection:
    """Run hook `event` for `payload` (a HookRequest or its JSON object). `record` False
    previews: nothing is written (no ledger rows, no capture, no queued job). `confined` (the
    default) reads a transcript_path only inside the harness's transcript folders; only an
    admin caller's hook reads any path (sessions/transcript_folders.py)."""
    request = payload if isinstance(payload, HookRequest) else HookRequest.parse(payload)
    if event == "session-start":
        return session_start(app, request, record=record)
    if event == "user-prompt-submit":
        return prompt_submit(app, request, record=record)
    if event in ("pre-compaction", "session-end"):
        return hand_off(app, event, request, confined=confined) if record else Injection(event)
    raise InvalidInput(f"unknown hook event {event!r} (one of {', '.join(EVENTS)})")
