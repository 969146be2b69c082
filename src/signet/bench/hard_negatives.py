"""Hard negatives for the injection benchmark: prompts near a store's subjects, about nothing in it.

The bundled negatives are easy: nothing in a store of people's lives is near a programming question.
These are built at bench time from the development halves: a LoCoMo conversation's store is asked
the other conversations' questions and MemAware requests, MemAware's store LoCoMo questions. Each
set is the prompts with the smallest sha256, so runs repeat and the sample spreads over every group.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from signet.bench.datasets import BenchQuestion, load_locomo

__all__ = [
    "LOCOMO_OTHER_PER_STORE", "MEMAWARE_PER_LOCOMO_STORE", "MEMAWARE_STORE_N", "for_locomo",
    "for_memaware", "memaware_requests", "sample",
]

LOCOMO_OTHER_PER_STORE = 60  # other conversations' questions asked in each LoCoMo store
MEMAWARE_PER_LOCOMO_STORE = 30  # MemAware requests asked in each LoCoMo store
MEMAWARE_STORE_N = 200  # LoCoMo questions asked in MemAware's store
CORE = frozenset({"single-hop", "multi-hop", "temporal", "open-domain"})


def sample(texts: Iterable[str], n: int, salt: str = "") -> list[str]:
    """`n` distinct texts, the same ones every run (smallest sha256 of salt + text)."""
    unique = dict.fromkeys(t.strip() for t in texts if t.strip())
    return sorted(unique, key=lambda t: hashlib.sha256((salt + t).encode()).hexdigest())[:n]


def for_locomo(questions: Sequence[BenchQuestion], memaware: Sequence[str]
               ) -> dict[str, dict[str, list[str]]]:
    """Per conversation: {"other conversations": [...], "memaware": [...]}."""
    groups = sorted({q.group for q in questions})
    out: dict[str, dict[str, list[str]]] = {}
    for group in groups:
        others = [q.text for q in questions if q.group != group and q.category in CORE]
        sets = {"other conversations": sample(others, LOCOMO_OTHER_PER_STORE, group)}
        if memaware:
            sets["memaware"] = sample(memaware, MEMAWARE_PER_LOCOMO_STORE, group)
        out[group] = sets
    return out


def for_memaware(locomo_path: Path | None) -> dict[str, list[str]]:
    """{"locomo": [...]} for MemAware's one store; empty when the LoCoMo file is absent."""
    if locomo_path is None or not locomo_path.is_file():
        return {}
    _, questions = load_locomo(locomo_path)
    core = [q.text for q in questions if q.category in CORE]
    return {"locomo": sample(core, MEMAWARE_STORE_N, "memaware")}


def memaware_requests(path: Path | None) -> list[str]:
    """MemAware's request texts (no gold needed: they are negatives elsewhere); [] when absent."""
    if path is None or not path.is_file():
        return []
    data = json.loads(path.read_text("utf-8"))
    return [str(item["question"]) for item in data if isinstance(item, dict) and item.get("question")]
