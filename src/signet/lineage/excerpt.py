"""The transcript excerpt around a memory: where in its session the memory's words were said.

The message sharing the most content words with the memory is the anchor (ties go to the
earlier message); the excerpt is the anchor with `around` messages either side, rendered as
"User: ..." / "Assistant: ..." lines and cut to `max_chars`.
"""

from __future__ import annotations

from signet.lineage.formats import Message
from signet.pipeline.tokens import content_tokens

__all__ = ["excerpt"]

MAX_CHARS = 4000


def excerpt(messages: list[Message], text: str, around: int, max_chars: int = MAX_CHARS) -> str:
    if not messages:
        return ""
    wanted = set(content_tokens(text))
    best, best_score = 0, -1
    for index, message in enumerate(messages):
        score = len(wanted & set(content_tokens(message.text)))
        if score > best_score:
            best, best_score = index, score
    window = messages[max(best - around, 0) : best + around + 1]
    lines = [f"{'User' if m.role == 'user' else 'Assistant'}: {m.text}" for m in window]
    out = "\n".join(lines)
    return out if len(out) <= max_chars else out[: max_chars - 3] + "..."
