"""A coding project's store for the injection benchmark: near-miss prompts about one project.

coding_project.json (hand-written) holds 36 memories of a fictional project, 30 prompts about them
(`keyword` and `paraphrase` forms) and 40 near-miss prompts that nothing stored answers, asked as
hard negatives. It is small on purpose: the judge must hold in a store of a few dozen memories as in
one of 100k.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import Any

from signet.bench.datasets import BenchDoc, BenchQuestion
from signet.errors import InvalidInput

__all__ = ["FORMS", "GROUP", "NEAR_MISS", "form_groups", "load"]

GROUP = "coding-project"
NEAR_MISS = "near-miss"
FORMS = ("keyword", "paraphrase")


def load(path: Path | None = None) -> tuple[list[BenchDoc], list[BenchQuestion], list[str]]:
    """(memories, prompts about them, near-miss prompts); InvalidInput naming the file when
    it is not of that shape."""
    if path is None:
        with resources.as_file(resources.files("signet.bench").joinpath(
                "coding_project.json")) as bundled:
            return load(bundled)
    try:
        data: Any = json.loads(path.read_text("utf-8"))
        docs = [BenchDoc(m["key"], m["text"], None, GROUP) for m in data["memories"]]
        keys = {d.key for d in docs}
        questions = [
            BenchQuestion(q["id"], q["prompt"], GROUP, q["form"], frozenset(q["gold"]))
            for q in data["questions"]
        ]
        near = [str(p) for p in data["near_miss"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InvalidInput(f"{path}: not a coding-project set: {exc}") from exc
    for q in questions:
        if q.category not in FORMS or not q.gold or not q.gold <= keys:
            raise InvalidInput(f"{path}: prompt {q.qid}: form must be one of {FORMS} and its"
                               " gold known memory keys")
    return docs, questions, near


def form_groups(questions: Iterable[BenchQuestion]) -> dict[str, list[str]]:
    """Each form that has prompts, then "all"."""
    qs = list(questions)
    groups = {form: [q.qid for q in qs if q.category == form] for form in FORMS}
    groups = {name: qids for name, qids in groups.items() if qids}
    groups["all"] = [q.qid for q in qs]
    return groups
