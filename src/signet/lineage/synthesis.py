"""The global head: MEMORY.md rendered from what the database holds.

Importance decays about 5% a day since last access (pinned memories exempt). Sections are filled in
priority order (constraints, active projects, open decisions, key people and tools, the rest above
MIN_SCORE) until the token budget, counted with the bundled tokenizer, is spent. Hand edits between
`<!-- signet:keep -->` and `<!-- /signet:keep -->` are carried over at the top, never cut.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import cache

from signet.types import parse_ts

__all__ = [
    "KEEP_CLOSE", "KEEP_OPEN", "Candidate", "Head", "count_tokens", "decayed", "hand_edits",
    "render",
]

KEEP_OPEN = "<!-- signet:keep -->"
KEEP_CLOSE = "<!-- /signet:keep -->"
ACTIVE_DAYS = 30
MIN_SCORE = 0.1
MAX_ITEM_CHARS = 240
SECTIONS = ("Constraints", "Active projects", "Open decisions", "Key people and tools",
            "Also important")
_KEEP = re.compile(re.escape(KEEP_OPEN) + r"\n?(.*?)\n?" + re.escape(KEEP_CLOSE), re.S)


@dataclass(frozen=True, slots=True)
class Candidate:
    section: str
    text: str
    score: float


@dataclass(frozen=True, slots=True)
class Head:
    text: str
    tokens: int
    items: int
    dropped: int
    over_budget: bool


def decayed(importance: float, last: str, pinned: bool, now: datetime, rate: float) -> float:
    """Importance after `rate` per day since `last`; pinned memories do not decay."""
    if pinned:
        return importance
    days = max((now - parse_ts(last)).total_seconds() / 86400.0, 0.0)
    return importance * math.pow(1.0 - rate, days)


def hand_edits(previous: str) -> str:
    """The user's text between the keep markers of the previous file (all such blocks)."""
    return "\n\n".join(block.strip("\n") for block in _KEEP.findall(previous))


@cache
def _tokenizer() -> object:
    from importlib import resources

    from tokenizers import Tokenizer

    source = resources.files("signet.resources").joinpath("minilm-tokenizer.json")
    with resources.as_file(source) as path:
        tokenizer = Tokenizer.from_file(str(path))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def count_tokens(text: str) -> int:
    """Tokens of `text` under the bundled tokenizer, without the [CLS]/[SEP] it adds."""
    if not text.strip():
        return 0
    encoding = _tokenizer().encode(text, add_special_tokens=False)  # type: ignore[attr-defined]
    return len(encoding.ids)


def render(
    candidates: list[Candidate], *, kept: str, budget: int, generated_at: str,
    count: Callable[[str], int] = count_tokens,
) -> Head:
    """The file: title, note, the kept block, then the sections filled within `budget`."""
    header = [
        "# Memory",
        "",
        f"<!-- Rendered by Signet from the memory database at {generated_at}; it is rendered again"
        " after idle gaps and by `signet memory synthesize` (the previous file is backed up)."
        " Text between the signet:keep markers is yours and is kept as written. -->",
        "",
        KEEP_OPEN,
        kept or "",
        KEEP_CLOSE,
    ]
    used = count("\n".join(header))
    chosen: dict[str, list[str]] = {name: [] for name in SECTIONS}
    dropped = 0
    for section in SECTIONS:
        heading_cost = count(f"## {section}")
        for item in sorted((c for c in candidates if c.section == section), key=lambda c: -c.score):
            line = f"- {_clip(item.text)}"
            cost = count(line) + (heading_cost if not chosen[section] else 0)
            if used + cost > budget:
                dropped += 1
                continue
            chosen[section].append(line)
            used += cost
    lines = [*header]
    for section in SECTIONS:
        if chosen[section]:
            lines += ["", f"## {section}", *chosen[section]]
    text = "\n".join(lines) + "\n"
    return _within(text, budget, count, sum(len(v) for v in chosen.values()), dropped)


def _within(text: str, budget: int, count: Callable[[str], int], items: int, dropped: int) -> Head:
    """Drop trailing item lines until the whole file fits (token boundaries can differ a little
    from the sum of the lines); the kept block is never cut."""
    lines = text.rstrip("\n").split("\n")
    tokens = count(text)
    while tokens > budget and lines and lines[-1].startswith("- "):
        lines.pop()
        items -= 1
        dropped += 1
        if lines and lines[-1].startswith("## "):
            lines.pop()
            if lines and not lines[-1]:
                lines.pop()
        text = "\n".join(lines) + "\n"
        tokens = count(text)
    return Head(text, tokens, items, dropped, tokens > budget)


def _clip(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= MAX_ITEM_CHARS else flat[: MAX_ITEM_CHARS - 3] + "..."
