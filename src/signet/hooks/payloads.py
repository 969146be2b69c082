"""A harness's hook payload -> the daemon's hook request (signet/injection/request.py). Claude Code,
Codex and generic callers send the same snake_case fields; OpenCode may send `sessionID` and
`directory`; Cursor names the session `conversation_id` and the cwd the first of
`workspace_roots`. Unread fields are dropped; wrong types are left for the daemon to refuse.
A lone surrogate (JSON may escape one, `\\ud800`; no UTF-8 holds it) and a NUL (which the
daemon refuses in any text) become U+FFFD, so the request can be spooled and stored.
"""

from __future__ import annotations

import re  # already loaded by json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["FIELDS", "to_request"]

FIELDS = ("session_id", "cwd", "project", "prompt", "transcript_path", "transcript", "source", "reason")
ALIASES = {"sessionID": "session_id", "sessionId": "session_id", "directory": "cwd",
           "transcriptPath": "transcript_path", "trigger": "reason",
           "conversation_id": "session_id"}


def to_request(harness: str, payload: Any) -> dict[str, Any]:
    """The request body for the daemon; ValueError when the payload is not a JSON object."""
    if not isinstance(payload, dict):
        raise ValueError("the hook payload is not a JSON object")
    body: dict[str, Any] = {"harness": harness}
    for name, value in payload.items():
        key = ALIASES.get(name, name)
        if key in FIELDS and value is not None and key not in body:
            body[key] = _encodable(value)
    roots = payload.get("workspace_roots")
    if "cwd" not in body and isinstance(roots, list) and roots and isinstance(roots[0], str):
        body["cwd"] = _encodable(roots[0])
    return body


def _encodable(value: Any) -> Any:
    """`value` with every lone surrogate and NUL in its strings replaced by U+FFFD (strings
    without one, the usual case, are returned as they are)."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            value = re.sub("[\ud800-\udfff]", "\ufffd", value)
        return value.replace("\x00", "\ufffd") if "\x00" in value else value
    if isinstance(value, list):
        return [_encodable(item) for item in value]
    if isinstance(value, dict):
        return {_encodable(k): _encodable(v) for k, v in value.items()}
    return value
