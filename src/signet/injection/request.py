"""What a hook asks, in one shape whatever the harness: `HookRequest`.

Field names are Claude Code's, so its payload posted as-is to `/api/hooks/*` is understood; unknown
fields are ignored, wrong types refused.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import PurePath
from typing import Any

from signet.errors import InvalidInput

__all__ = ["EVENTS", "HARNESSES", "HookRequest"]

EVENTS: tuple[str, ...] = ("session-start", "user-prompt-submit", "pre-compaction", "session-end")
HARNESSES: tuple[str, ...] = ("claude-code", "codex", "opencode", "cursor", "generic")
MAX_FIELD_CHARS = 4096
MAX_PROMPT_CHARS = 200_000
MAX_TRANSCRIPT_CHARS = 5_000_000


@dataclass(frozen=True, slots=True)
class HookRequest:
    harness: str = "generic"
    session_id: str | None = None
    cwd: str | None = None
    project: str | None = None
    prompt: str | None = None
    transcript_path: str | None = None
    transcript: str | None = None
    source: str | None = None
    reason: str | None = None
    # Whose ledger the session's injections go in: the daemon sets the calling token's id
    # (`for_caller`); never read from a payload, so one token cannot speak for another.
    caller: str = ""

    @classmethod
    def parse(cls, data: Any) -> HookRequest:
        """From a JSON object; InvalidInput naming the field for a wrong type or size."""
        if not isinstance(data, dict):
            raise InvalidInput("a hook payload must be a JSON object")
        harness = _text(data, "harness") or "generic"
        if harness not in HARNESSES:
            raise InvalidInput(f"unknown harness {harness!r} (one of {', '.join(HARNESSES)})")
        return cls(
            harness=harness,
            session_id=_text(data, "session_id"),
            cwd=_text(data, "cwd"),
            project=_text(data, "project"),
            prompt=_text(data, "prompt", MAX_PROMPT_CHARS),
            transcript_path=_text(data, "transcript_path"),
            transcript=_text(data, "transcript", MAX_TRANSCRIPT_CHARS),
            source=_text(data, "source"),
            reason=_text(data, "reason") or _text(data, "trigger"),
        )

    def for_caller(self, caller: str) -> HookRequest:
        """This request, its ledger kept under `caller`."""
        return replace(self, caller=caller)

    @property
    def project_name(self) -> str | None:
        """The project the session works on: as named, else the cwd's last folder."""
        if self.project:
            return self.project
        if self.cwd:
            name = PurePath(self.cwd).name
            return name or None
        return None


def _text(data: dict[str, Any], name: str, limit: int = MAX_FIELD_CHARS) -> str | None:
    value = data.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be a string")
    if len(value) > limit:
        raise InvalidInput(f"{name} is {len(value)} characters; at most {limit}")
    return value.strip() or None
