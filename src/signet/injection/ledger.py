"""The per-session injection ledger as the hooks use it: skip what a session already has, record
what it gets. It is kept per caller (`HookRequest.caller`) and session; a request without a
session id has none.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from signet.clock import stamp
from signet.injection.request import HookRequest
from signet.types import Memory

if TYPE_CHECKING:
    from signet.app import SignetApp

__all__ = ["fresh_only", "remember_injected", "start_over"]


def fresh_only(app: SignetApp, request: HookRequest, memories: Sequence[Memory]) -> list[Memory]:
    """`memories` without those this session was already given."""
    if not request.session_id or not memories:
        return list(memories)
    seen = app.injections.injected(request.caller, request.session_id, [m.id for m in memories])
    return [m for m in memories if m.id not in seen]


def remember_injected(
    app: SignetApp, request: HookRequest, memory_ids: Sequence[str], event: str
) -> None:
    if not request.session_id or not memory_ids or app.config.pipeline.mutations_frozen:
        return
    app.injections.record(
        request.caller, request.session_id, memory_ids, event, stamp(app.clock)
    )


def start_over(app: SignetApp, request: HookRequest) -> None:
    """The harness cleared or compacted the context: what the session was given is gone from
    it, so the ledger starts again."""
    if not request.session_id or app.config.pipeline.mutations_frozen:
        return
    app.injections.forget_session(request.caller, request.session_id)
