"""The injection benchmark: MemAware's requests through the exact code of the
user-prompt-submit hook (signet/injection, same budget, same relevance gate), after the same
ingest as the retrieval benchmark.

Per tier: **context hit** (the injected block holds a memory from a gold session), the mean
injected tokens (bundled tokenizer, over every request, an empty injection counting 0) and the
injection rate (requests that injected anything). With a file of negatives (prompts about
nothing stored), the **false injection rate**: the fraction of those that injected anything.
`thresholds` re-runs the same requests at other thresholds of the gate
(hooks.min_similarity: the calibration sweep the default was chosen from); the figures at the
configured threshold are the headline. With a sweep, `held_out` applies the rule the default
was chosen by (the lowest threshold whose false injection rate is at most 10%) to one half of
the data and reports the other half at that threshold, both ways round: halves by
conversation when the questions come from several (LoCoMo), else by question (MemAware's one
haystack), the negatives by prompt (each asked in every store). `groups` names the tiers or
categories (MemAware's by default; LoCoMo's for `signet bench locomo --inject`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from signet import injection
from signet.app import SignetApp
from signet.bench.datasets import BenchQuestion
from signet.bench.metrics import MEMAWARE_ALL, memaware_groups
from signet.errors import InvalidInput
from signet.injection import tokens

__all__ = ["MAX_FALSE_INJECTION", "InjectionBench", "load_negatives"]

MAX_FALSE_INJECTION = 0.10  # the rule hooks.min_similarity was chosen by (docs/benchmarks.md)


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
class InjectionBench:
    """Called once per ingested group with the app and the group's questions; `result()` then
    holds the figures."""

    negatives: Sequence[str] = ()
    thresholds: Sequence[float] = ()
    progress: Callable[[str], None] | None = None
    groups: Callable[[Iterable[BenchQuestion]], dict[str, list[str]]] = memaware_groups
    _hits: dict[float, dict[str, bool]] = dataclasses.field(default_factory=dict)
    _tokens: dict[float, dict[str, int]] = dataclasses.field(default_factory=dict)
    # (prompt, injected anything) per negative asked, in every store
    _false: dict[float, list[tuple[str, bool]]] = dataclasses.field(default_factory=dict)
    _questions: list[BenchQuestion] = dataclasses.field(default_factory=list)
    _configured: float | None = None

    def __call__(self, app: SignetApp, questions: Sequence[BenchQuestion], keys_of: dict[str, list[str]]) -> None:
        configured = app.config.hooks.min_similarity
        self._configured = configured
        self._questions.extend(questions)
        original = app.config
        try:
            for threshold in dict.fromkeys([configured, *self.thresholds]):
                app.config = dataclasses.replace(
                    original, hooks=dataclasses.replace(original.hooks, min_similarity=threshold)
                )
                self._run(app, questions, keys_of, threshold)
        finally:
            app.config = original

    def _run(
        self, app: SignetApp, questions: Sequence[BenchQuestion], keys_of: dict[str, list[str]],
        threshold: float,
    ) -> None:
        hits = self._hits.setdefault(threshold, {})
        used = self._tokens.setdefault(threshold, {})
        for index, question in enumerate(questions, 1):
            result = injection.handle(app, "user-prompt-submit", {"prompt": question.text}, record=False)
            sessions = {k for memory_id in result.memories for k in keys_of.get(memory_id, [])}
            hits[question.qid] = bool(sessions & question.gold)
            used[question.qid] = tokens.count(result.context)
            if self.progress and index % 50 == 0:
                self.progress(f"inject @{threshold:g}: {index}/{len(questions)} requests")
        false = self._false.setdefault(threshold, [])
        for prompt in self.negatives:
            result = injection.handle(app, "user-prompt-submit", {"prompt": prompt}, record=False)
            false.append((prompt, bool(result.context)))

    def result(self) -> dict[str, Any]:
        assert self._configured is not None, "no group was run"
        out = self._figures(self._configured)
        if len(self._hits) > 1:
            out["sweep"] = {f"{t:g}": self._figures(t) for t in sorted(self._hits)}
            if self.negatives:
                out["held_out"] = [self._held_out(half) for half in (0, 1)]
        return out

    def _figures(
        self, threshold: float, questions: Sequence[BenchQuestion] | None = None,
        negatives: Callable[[str], bool] | None = None,
    ) -> dict[str, Any]:
        hits, used = self._hits[threshold], self._tokens[threshold]
        out: dict[str, Any] = {"min_similarity": threshold}
        for group, qids in self.groups(self._questions if questions is None else questions).items():
            if group == MEMAWARE_ALL or not qids:
                continue
            n = len(qids)
            out[group] = {
                "n": n,
                "context_hit": round(sum(hits[q] for q in qids) / n, 4),
                "mean_tokens": round(sum(used[q] for q in qids) / n, 1),
                "injection_rate": round(sum(used[q] > 0 for q in qids) / n, 4),
            }
        false = [injected for prompt, injected in self._false.get(threshold, [])
                 if negatives is None or negatives(prompt)]
        if self.negatives:
            out["negatives"] = {"n": len(false), "false_injection_rate": round(sum(false) / max(len(false), 1), 4)}
        return out

    def _held_out(self, half: int) -> dict[str, Any]:
        """The threshold the rule picks on `half`, and the other half's figures at it."""
        by_conversation = len({q.group for q in self._questions}) > 1
        side = lambda key: _half(key) == half  # noqa: E731 - a one-line predicate
        chosen_q = [q for q in self._questions if side(q.group if by_conversation else q.qid)]
        other_q = [q for q in self._questions if q not in chosen_q]
        chosen = next(
            (t for t in sorted(self._hits)
             if self._figures(t, chosen_q, side)["negatives"]["false_injection_rate"] <= MAX_FALSE_INJECTION),
            max(self._hits),
        )
        figures = self._figures(chosen, other_q, lambda p: not side(p))
        return {"split": "conversation" if by_conversation else "question", "chosen_on_half": half,
                "held_out": figures}


def _half(key: str) -> int:
    return hashlib.sha256(key.encode("utf-8")).digest()[0] % 2
