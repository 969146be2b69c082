"""Session-end and pre-compaction: the transcript goes to the session layer.

The transcript (the harness's `transcript_path`, or the text an HTTP caller sends) is imported
through the same idempotent `import_transcript` as `POST /api/sessions/{session_id}/transcript`.
Pre-compaction leaves the session open; session-end also closes it, which queues its summary.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from signet.errors import InvalidInput
from signet.injection.request import HookRequest
from signet.injection.result import Injection
from signet.types import Actor

if TYPE_CHECKING:
    from signet.app import SignetApp

__all__ = ["hand_off"]


def hand_off(app: SignetApp, event: str, request: HookRequest, *, confined: bool = True) -> Injection:
    """Import the hook's transcript; `confined` reads a transcript_path only inside the
    harness's transcript folders (a caller without the admin permission)."""
    if not request.transcript_path and not request.transcript:
        return Injection(event, extra={"session": None})
    if not request.session_id:
        raise InvalidInput("session_id is required to hand a transcript over")
    source = (
        {"path": request.transcript_path} if request.transcript_path
        else {"content": request.transcript}
    )
    result = app.import_transcript(
        actor=Actor(name=f"hook:{request.harness}", type="agent", session_id=request.session_id),
        harness=request.harness, session_id=request.session_id, project=request.project_name,
        ended=event == "session-end", confined=confined, **source,
    )
    return Injection(event, extra={"session": result})
