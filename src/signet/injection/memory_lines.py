"""How one memory reads in an injected block: `- [type, id] content`, cut to a token cap.

The id is the memory's full id so the agent can fetch, correct or give feedback on it
(memory_get, memory_modify, memory_feedback); a cut memory ends with the truncation mark.
"""

from __future__ import annotations

from signet.injection.budget import ContextBlock
from signet.types import Memory

__all__ = ["add_memories"]


def add_memories(
    block: ContextBlock, memories: list[Memory], *, cap: int, limit: int | None = None
) -> list[str]:
    """Add memories in order while the budget lasts; return the ids that went in."""
    added: list[str] = []
    for memory in memories:
        if limit is not None and len(added) >= limit:
            break
        line = f"- [{memory.type}, {memory.id}] {' '.join(memory.content.split())}"
        if not block.add(line, cap=cap):
            break
        added.append(memory.id)
    return added
