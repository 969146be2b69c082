"""Context injection for the harness hooks: what an agent is given without asking.

`handle(app, event, payload)` is the one entry point (the daemon's `/api/hooks/*` routes, MCP
`memory_context`, the injection benchmark), so every surface injects the same thing under the same
budget and gate: session-start (session_start.py), user-prompt-submit (prompt_submit.py), and
session-end and pre-compaction (handoff.py). A per-session ledger (store/injections.py) keeps a
memory from being given twice in one session; budgets are counted with the bundled tokenizer
(tokens.py).
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
    """Run hook `event` for `payload` (a HookRequest or its JSON object). `record` False previews
    and writes nothing; `confined` reads a transcript_path only inside the harness's transcript
    folders (only an admin caller may read any path)."""
    request = payload if isinstance(payload, HookRequest) else HookRequest.parse(payload)
    if event == "session-start":
        return session_start(app, request, record=record)
    if event == "user-prompt-submit":
        return prompt_submit(app, request, record=record)
    if event in ("pre-compaction", "session-end"):
        return hand_off(app, event, request, confined=confined) if record else Injection(event)
    raise InvalidInput(f"unknown hook event {event!r} (one of {', '.join(EVENTS)})")
