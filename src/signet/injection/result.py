"""What a hook returns: the context block and the memories it holds (`Injection`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Injection"]


@dataclass(frozen=True, slots=True)
class Injection:
    """`context` is the text for the agent ("" = inject nothing); `memories` the ids in it."""

    event: str
    context: str = ""
    memories: tuple[str, ...] = ()
    tokens: int = 0
    truncated: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "event": self.event, "context": self.context, "memories": list(self.memories),
            "tokens": self.tokens, "truncated": self.truncated, **self.extra,
        }
