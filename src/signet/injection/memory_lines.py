"""How one memory reads in an injected block: `- [a1b2c3d4] content`, one line, cut to a cap.

No score, type or timestamps: the agent does not use them. The short id (SHORT_ID characters) is
enough for memory_get, memory_modify and memory_feedback at a third of the full id's tokens.
"""

from __future__ import annotations

from signet.injection.budget import ContextBlock
from signet.types import Memory

__all__ = ["SHORT_ID", "add_memories", "line"]

SHORT_ID = 8


def line(memory: Memory) -> str:
    """The memory as one line of the block."""
    return f"- [{memory.id[:SHORT_ID]}] {' '.join(memory.content.split())}"


def add_memories(
    block: ContextBlock, memories: list[Memory], *, cap: int, limit: int | None = None
) -> list[str]:
    """Add memories in order while the budget lasts; return the ids that went in."""
    added: list[str] = []
    for memory in memories:
        if limit is not None and len(added) >= limit:
            break
        if not block.add(line(memory), cap=cap):
            break
        added.append(memory.id)
    return added
