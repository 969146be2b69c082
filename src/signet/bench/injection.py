"""The injection benchmark: MemAware's requests through the exact code of the
user-prompt-submit hook (signet/injection, same budget, same relevance gate), after the same
ingest as the retrieval benchmark.

Per tier: **context hit** (the injected block holds a memory from a gold session), the mean
injected tokens (bundled tokenizer, over every request, an empty injection counting 0) and the
injection rate (requests that injected anything). With a file of negatives (prompts about
nothing stored), the **false injection rate**: the fraction of those that injected anything.
`thresholds` re-runs the same requests at other thresholds of the gate
(hooks.min_similarity: the calibration sweep the default was chosen from); the figures at the
configured threshold are the headline.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from signet import injection
from signet.app import SignetApp
from signet.bench.datasets import BenchQuestion
from signet.bench.metrics import MEMAWARE_ALL, memaware_groups
from signet.errors import InvalidInput
from signet.injection import tokens

__all__ = ["InjectionBench", "load_negatives"]


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
    _hits: dict[float, dict[str, bool]] = dataclasses.field(default_factory=dict)
    _tokens: dict[float, dict[str, int]] = dataclasses.field(default_factory=dict)
    _false: dict[float, list[bool]] = dataclasses.field(default_factory=dict)
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
            false.append(bool(result.context))

    def result(self) -> dict[str, Any]:
        assert self._configured is not None, "no group was run"
        out = self._figures(self._configured)
        if len(self._hits) > 1:
            out["sweep"] = {f"{t:g}": self._figures(t) for t in sorted(self._hits)}
        return out

    def _figures(self, threshold: float) -> dict[str, Any]:
        hits, used = self._hits[threshold], self._tokens[threshold]
        out: dict[str, Any] = {"min_similarity": threshold}
        for group, qids in memaware_groups(self._questions).items():
            if group == MEMAWARE_ALL or not qids:
                continue
            n = len(qids)
            out[group] = {
                "n": n,
                "context_hit": round(sum(hits[q] for q in qids) / n, 4),
                "mean_tokens": round(sum(used[q] for q in qids) / n, 1),
                "injection_rate": round(sum(used[q] > 0 for q in qids) / n, 4),
            }
        false = self._false.get(threshold, [])
        if self.negatives:
            out["negatives"] = {"n": len(false), "false_injection_rate": round(sum(false) / len(false), 4)}
        return out
