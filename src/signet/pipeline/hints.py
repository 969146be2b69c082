"""Prospective hints: questions a user might ask later, for which this memory is the answer.

A fact and the query needing it often share no words ("The user has a Target loyalty card" vs "where
can I get discounts on car parts?"), so one LLM call imagines three to five such questions, indexed
beside the memory. `parse_hints` accepts the usual JSON shapes, or lines ending in "?" from a model
ignoring JSON mode, and keeps at most five distinct ones.
"""

from __future__ import annotations

import re
from typing import Any

from signet.errors import BadResponse
from signet.pipeline.llm_json import CompletingLLM, parse_llm_json

__all__ = ["MAX_HINTS", "build_hints_prompt", "generate_hints", "parse_hints"]

MAX_HINTS = 5
MAX_HINT_CHARS = 300
MAX_CONTENT_CHARS = 4_000
_LIST_KEYS = ("hints", "questions", "queries")
_ITEM_KEYS = ("question", "hint", "query", "text")
_BULLET = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)])\s*")

HINTS_SYSTEM = (
    "You help a long-term memory find facts later. Reply with one JSON object and nothing else."
)

_INSTRUCTIONS = """Here is a fact from a user's memory. Write {count} different questions or
requests the user might type in a future conversation where this fact would help answer them.
Vary them: direct questions about the fact, and indirect situations where it matters without
being named (for "The user has a Target loyalty card": "where can I get discounts?", "I need an
air filter for my car, where should I shop?"). Keep each one short and natural.

Reply as {"hints": ["...", "...", "..."]}

Fact: """


def build_hints_prompt(content: str, fewest: int = 3, most: int = MAX_HINTS) -> str:
    """The request for between `fewest` and `most` hints (memory.pipelineV2.hints.min/max)."""
    fewest, most = min(fewest, most), max(most, 1)
    if fewest == most:
        count = str(most)
    elif fewest <= 1:
        count = f"up to {most}"
    else:
        count = f"{fewest} to {most}"
    return _INSTRUCTIONS.replace("{count}", count) + content[:MAX_CONTENT_CHARS]


def generate_hints(
    llm: CompletingLLM, content: str, fewest: int = 3, most: int = MAX_HINTS
) -> list[str]:
    """One LLM call asking for `fewest` to `most` hints; at most `most` kept. Empty content or
    `most` 0 gives no hints and no call."""
    if not content.strip() or most <= 0:
        return []
    completion = llm.complete(
        build_hints_prompt(content, fewest, most), system=HINTS_SYSTEM, json_mode=True,
        max_tokens=400,
    )
    return parse_hints(completion.text)[:most]


def parse_hints(text: str) -> list[str]:
    try:
        data = parse_llm_json(text)
    except BadResponse:
        lines = _question_lines(text)
        if not lines:
            raise
        return _clean(lines)
    return _clean(_items(data))


def _items(data: Any) -> list[Any]:
    if isinstance(data, list):
        return data
    for key in _LIST_KEYS:
        if isinstance(data.get(key), list):
            return data[key]
    raise BadResponse("hints reply has no 'hints' list")


def _question_lines(text: str) -> list[str]:
    text = re.sub(r"<think>.*?</think>", "", text, flags=re.DOTALL | re.IGNORECASE)
    lines = (_BULLET.sub("", line).strip().strip('"') for line in text.splitlines())
    return [line for line in lines if line.endswith("?")]


def _clean(items: list[Any]) -> list[str]:
    hints: list[str] = []
    seen: set[str] = set()
    for item in items:
        hint = " ".join(_text(item).split())[:MAX_HINT_CHARS]
        key = hint.lower().rstrip("?.! ")
        if key and key not in seen:
            seen.add(key)
            hints.append(hint)
        if len(hints) == MAX_HINTS:
            break
    return hints


def _text(item: Any) -> str:
    if isinstance(item, str):
        return item
    if isinstance(item, dict):
        for key in _ITEM_KEYS:
            if isinstance(item.get(key), str):
                return item[key]
    return ""
