"""The significance gate: is a session worth a summary?

It is skipped only when all three signals say "low": fewer than `min_turns` substantive user turns,
no entity the graph knows, fewer than `min_novel_terms` words new to the stored vocabulary. The gate
decides what is distilled, never what is stored: the transcript is kept. The caller looks up
entities and vocabulary; this module only counts.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from typing import Any

from signet.lineage.formats import Message

__all__ = ["GateSignals", "candidate_terms", "judge"]

MIN_WORDS = 4
_TERM = re.compile(r"[a-z][a-z0-9'-]{2,}")
_STOP = frozenset(
    """the and for with that this have has had was were are you your yours our ours they them
    their there then than what when where which who whom why how can could would should will
    shall may might must not but just also very really into onto from about above below over
    under again further once here all any both each few more most other some such only own same
    too don't doesn't didn't isn't aren't wasn't weren't i'm i've i'd i'll it's let's that's
    okay yes yeah hello thanks thank please sure well like get got make made know think want
    need going one two lot much many way thing things something anything nothing""".split()
)


@dataclass(frozen=True, slots=True)
class GateSignals:
    turns: int
    entities: tuple[str, ...]
    novel_terms: int
    skipped: bool

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["entities"] = list(self.entities)
        return data


def substantive_turns(messages: Iterable[Message]) -> int:
    return sum(1 for m in messages if m.role == "user" and len(m.text.split()) >= MIN_WORDS)


def candidate_terms(messages: Iterable[Message]) -> set[str]:
    """Distinct lowercase content words of the user's turns (what novelty is measured on)."""
    terms: set[str] = set()
    for message in messages:
        if message.role == "user":
            terms.update(t for t in _TERM.findall(message.text.lower()) if t not in _STOP)
    return terms


def judge(
    messages: list[Message], *, known_entities: list[str],
    unseen: Callable[[set[str]], int], min_turns: int, min_novel_terms: int,
) -> GateSignals:
    """The three signals and the verdict; `unseen(terms)` counts terms absent from memory."""
    turns = substantive_turns(messages)
    novel = unseen(candidate_terms(messages))
    skipped = turns < min_turns and not known_entities and novel < min_novel_terms
    return GateSignals(turns, tuple(known_entities), novel, skipped)
