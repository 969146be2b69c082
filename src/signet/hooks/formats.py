"""What each harness reads on a hook's stdout, and nothing else.

- Claude Code and Codex: for SessionStart and UserPromptSubmit, the JSON object
  `{"hookSpecificOutput": {"hookEventName": "SessionStart" | "UserPromptSubmit",
  "additionalContext": "<text>"}}`; the text goes into the model's context. PreCompact and
  SessionEnd take no context, so those hooks print nothing. With nothing to inject, nothing
  is printed (an empty stdout is "no opinion" to both).
- Cursor: its hooks cannot add context. beforeSubmitPrompt (our user-prompt-submit) reads
  `{"continue": true}` (the prompt goes on); stop (our pre-compaction) reads `{}` (no
  follow-up message); the memory reaches Cursor's agent through the MCP tools.
- opencode and generic: `{"context": "<text>", "memories": [ids]}` for every event, which the
  OpenCode plugin and scripts parse themselves.
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
