"""A context block filled under a token budget, with every truncation marked.

Sections go in order of precedence, each optionally capped. A part that does not fit is cut at a
token boundary and ends with TRUNCATED, so the agent knows to fetch the rest (memory_get). The
newlines joining parts are counted too.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from signet.injection import tokens

__all__ = ["TRUNCATED", "ContextBlock"]

TRUNCATED = " [... truncated]"
_MARK_TOKENS = 8  # room kept for the mark; counted exactly once the text is known


@dataclass
class ContextBlock:
    """Lines of text under `budget` tokens; `used` counts what is already in."""

    budget: int
    lines: list[str] = field(default_factory=list)
    used: int = 0
    truncated: bool = False

    @property
    def left(self) -> int:
        return max(self.budget - self.used, 0)

    def add(self, text: str, *, cap: int | None = None, whole: bool = False) -> bool:
        """Add `text` (cut to `cap` and to what is left, marked when cut). `whole`: add it only
        if it fits uncut. Returns whether anything was added."""
        room = self.left if cap is None else min(cap, self.left)
        need = tokens.count(text) + 1  # + the newline that joins it
        if need <= room:
            self._put(text, need)
            return True
        if whole or room <= _MARK_TOKENS + 1:
            return False
        head, _ = tokens.cut(text, room - _MARK_TOKENS - 1)
        if not head:
            return False
        marked = head + TRUNCATED
        self._put(marked, tokens.count(marked) + 1)
        self.truncated = True
        return True

    def text(self) -> str:
        return "\n".join(self.lines).strip()

    def _put(self, text: str, cost: int) -> None:
        self.lines.append(text)
        self.used += cost
