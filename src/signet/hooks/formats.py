"""What each harness reads on a hook's stdout, and nothing else.

Claude Code and Codex read `hookSpecificOutput.additionalContext` for SessionStart and
UserPromptSubmit, and nothing otherwise (an empty stdout is "no opinion"). Cursor's hooks cannot add
context: beforeSubmitPrompt reads `{"continue": true}`, stop reads `{}`, and memory reaches its
agent through MCP. opencode and generic get `{"context", "memories"}` for every event.
"""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["HOOK_EVENT_NAMES", "render"]

HOOK_EVENT_NAMES = {
    "session-start": "SessionStart",
    "user-prompt-submit": "UserPromptSubmit",
    "pre-compaction": "PreCompact",
    "session-end": "SessionEnd",
}
CONTEXT_EVENTS = ("session-start", "user-prompt-submit")


def render(harness: str, event: str, result: dict[str, Any]) -> str:
    """stdout for `harness` from the daemon's answer to `event` ("" = print nothing)."""
    context = result.get("context") or ""
    if not isinstance(context, str):
        context = ""
    if harness in ("claude-code", "codex"):
        if event not in CONTEXT_EVENTS or not context:
            return ""
        output = {"hookEventName": HOOK_EVENT_NAMES[event], "additionalContext": context}
        return json.dumps({"hookSpecificOutput": output}, ensure_ascii=False)
    if harness == "cursor":
        return json.dumps({"continue": True}) if event == "user-prompt-submit" else "{}"
    memories = result.get("memories") if isinstance(result.get("memories"), list) else []
    return json.dumps({"context": context, "memories": memories}, ensure_ascii=False)
