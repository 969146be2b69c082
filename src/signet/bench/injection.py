"""The injection benchmark: every request through the prompt hook's own code after the retrieval
benchmark's ingest. Per group: context hit, tokens and injection rate, precision, and the false
injection rate on easy and hard negatives; with `rows`, each prompt's candidates are kept for
`signet bench inject-fit`.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from signet import injection
from signet.app import SignetApp
from signet.bench.datasets import BenchQuestion
from signet.bench.metrics import MEMAWARE_ALL, memaware_groups
from signet.errors import InvalidInput
from signet.injection import judge, tokens
from signet.injection.prompt_submit import candidates, unknown_names
from signet.types import RecallHit

__all__ = ["EASY", "InjectionBench", "load_negatives"]

EASY = "easy"


def load_negatives(path: Path) -> list[str]:
    """A JSON list of prompt strings; InvalidInput naming the file otherwise."""
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"{path}: not a readable JSON file: {exc}") from exc
    if not isinstance(data, list) or not all(isinstance(p, str) and p.strip() for p in data):
        raise InvalidInput(f"{path}: must be a JSON list of non-empty prompt strings")
    return data


@dataclasses.dataclass
class _Asked:
    """What one prompt got: injected tokens, lines, relevant lines."""

    tokens: int
    lines: int
    relevant: int


@dataclasses.dataclass
class InjectionBench:
    """Called once per ingested group with the app and the group's questions; `result()` then
    holds the figures. `hard` maps a store (the group) to its named hard-negative sets."""

    benchmark: str
    easy: Sequence[str] = ()
    hard: Mapping[str, Mapping[str, Sequence[str]]] = dataclasses.field(default_factory=dict)
    progress: Callable[[str], None] | None = None
    groups: Callable[[Iterable[BenchQuestion]], dict[str, list[str]]] = memaware_groups
    rows: bool = False
    _asked: dict[str, _Asked] = dataclasses.field(default_factory=dict)
    _negatives: dict[str, list[_Asked]] = dataclasses.field(default_factory=dict)
    _questions: list[BenchQuestion] = dataclasses.field(default_factory=list)
    _rows: list[dict[str, Any]] = dataclasses.field(default_factory=list)

    def __call__(self, app: SignetApp, questions: Sequence[BenchQuestion],
                 keys_of: dict[str, list[str]]) -> None:
        if not questions:
            return
        store = questions[0].group
        self._questions.extend(questions)
        for index, question in enumerate(questions, 1):
            self._asked[question.qid] = self._ask(app, question.text, keys_of, question.gold)
            self._keep(app, question.text, keys_of, question.gold, "positive", store,
                       question.qid, question.category)
            if self.progress and index % 100 == 0:
                self.progress(f"inject: {index}/{len(questions)} requests")
        sets = {EASY: list(self.easy), **{f"hard: {k}": list(v)
                                          for k, v in self.hard.get(store, {}).items()}}
        for name, prompts in sets.items():
            for prompt in prompts:
                self._negatives.setdefault(name, []).append(self._ask(app, prompt, keys_of))
                self._keep(app, prompt, keys_of, frozenset(), name, store, None, None)
        if self.progress:
            self.progress(f"inject: {store}: negatives asked")

    def _ask(self, app: SignetApp, prompt: str, keys_of: dict[str, list[str]],
             gold: frozenset[str] = frozenset()) -> _Asked:
        result = injection.handle(app, "user-prompt-submit", {"prompt": prompt}, record=False)
        relevant = sum(bool(gold & set(keys_of.get(m, []))) for m in result.memories)
        return _Asked(tokens.count(result.context), len(result.memories), relevant)

    def _keep(self, app: SignetApp, prompt: str, keys_of: dict[str, list[str]],
              gold: frozenset[str], kind: str, store: str, qid: str | None,
              group: str | None) -> None:
        if not self.rows:
            return
        hits = candidates(app, prompt)
        judged = judge.judge(hits)
        self._rows.append({
            "kind": kind, "store": store, "qid": qid, "group": group, "prompt": prompt,
            "candidates": [
                [int(bool(gold & set(keys_of.get(j.hit.memory.id, [])))),
                 *[round(x, 5) for x in j.features]]
                for j in judged
            ],
            # Raw facts beside the judge's features, for fitting offline (EXTRA's order).
            "extra": [_extra(j.hit) for j in judged],
            "texts": [j.hit.memory.content for j in judged],
            # The hook injects nothing for such a prompt whatever the judge says (names.py).
            "names_unknown": unknown_names(app, prompt, hits),
        })

    def result(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        positive: list[_Asked] = []
        for group, qids in self.groups(self._questions).items():
            if group == MEMAWARE_ALL or not qids:
                continue
            asked = [self._asked[q] for q in qids]
            hit = sum(self._hit(q) for q in qids)
            out[group] = {"n": len(qids), "context_hit": round(hit / len(qids), 4), **_figures(asked)}
            if group != "cat1-4":
                positive += asked
        lines = sum(a.lines for a in positive)
        out["precision"] = round(sum(a.relevant for a in positive) / lines, 4) if lines else None
        out["negatives"] = {
            name: {"n": len(asked), "false_injection_rate":
                   round(sum(a.lines > 0 or a.tokens > 0 for a in asked) / max(len(asked), 1), 4),
                   **_figures(asked)}
            for name, asked in self._negatives.items()
        }
        return out

    def _hit(self, qid: str) -> bool:
        return self._asked[qid].relevant > 0

    def dump_rows(self, path: Path) -> None:
        path.write_text(json.dumps({"benchmark": self.benchmark, "features": judge.FEATURES,
                                    "extra": EXTRA, "prompts": self._rows}), "utf-8")


EXTRA = ("confidence", "lexical_rank", "semantic_rank", "chars", "score")


def _extra(hit: RecallHit) -> list[float]:
    e = hit.evidence
    return [round(hit.confidence, 5), -1 if e.lexical_rank is None else e.lexical_rank,
            -1 if e.semantic_rank is None else e.semantic_rank, len(hit.memory.content),
            round(hit.score, 6)]


def _figures(asked: Sequence[_Asked]) -> dict[str, Any]:
    injected = [a for a in asked if a.tokens > 0]
    n = max(len(asked), 1)
    return {
        "injection_rate": round(len(injected) / n, 4),
        "tokens_per_injected": round(sum(a.tokens for a in injected) / len(injected), 1)
        if injected else 0.0,
        "mean_tokens": round(sum(a.tokens for a in asked) / n, 1),
        "lines_per_injected": round(sum(a.lines for a in injected) / len(injected), 2)
        if injected else 0.0,
    }
