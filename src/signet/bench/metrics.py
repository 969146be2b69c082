"""Retrieval scores from ranked lists of doc keys: Hit@k, Recall@10, MRR (0 when no gold key was
returned) and All@10 (every gold key in the top 10). A key returned more than once (several
windows of one session) counts at its first rank (`dedupe`). Scores are fractions averaged per
group; `format_table` prints percentages.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from signet.bench.datasets import LOCOMO_CATEGORIES, MEMAWARE_TIERS, BenchQuestion
from signet.errors import InvalidInput

METRICS: tuple[str, ...] = ("Hit@1", "Hit@5", "Hit@10", "Recall@10", "MRR", "All@10")
LOCOMO_CORE = "cat1-4"  # LoCoMo is reported as categories 1-4 together, adversarial apart
MEMAWARE_ALL = "all"

Scores = dict[str, float]


def dedupe(keys: Iterable[str]) -> list[str]:
    """Keys in rank order, each at the first rank it appears."""
    return list(dict.fromkeys(keys))


def question_scores(gold: frozenset[str], ranked: Sequence[str]) -> Scores:
    """Every metric for one question; `ranked` may repeat keys."""
    keys = dedupe(ranked)
    top10 = set(keys[:10])
    first = next((rank for rank, key in enumerate(keys, start=1) if key in gold), None)
    return {
        "Hit@1": float(bool(gold & set(keys[:1]))),
        "Hit@5": float(bool(gold & set(keys[:5]))),
        "Hit@10": float(bool(gold & top10)),
        "Recall@10": len(gold & top10) / len(gold),
        "MRR": 1.0 / first if first else 0.0,
        "All@10": float(gold <= top10),
    }


def score(
    questions: Sequence[BenchQuestion],
    ranked: Mapping[str, Sequence[str]],
    groups: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, Scores]:
    """Mean scores per group of question ids (one group "all" when `groups` is None).

    Each group also gets "n", its number of questions. Every question in a group must have a
    ranking (possibly empty): a missing one is a runner bug, not a miss.
    """
    by_id = {q.qid: q for q in questions}
    if len(by_id) != len(questions):
        raise InvalidInput("question ids are not unique")
    if groups is None:
        groups = {MEMAWARE_ALL: list(by_id)}
    per_question: dict[str, Scores] = {}
    for qids in groups.values():
        for qid in qids:
            if qid not in per_question:
                per_question[qid] = _scores_for(by_id, ranked, qid)
    return {name: _mean([per_question[q] for q in qids]) for name, qids in groups.items()}


def _scores_for(
    by_id: Mapping[str, BenchQuestion], ranked: Mapping[str, Sequence[str]], qid: str
) -> Scores:
    if qid not in by_id:
        raise InvalidInput(f"group names unknown question {qid!r}")
    if qid not in ranked:
        raise InvalidInput(f"no ranking for question {qid!r}")
    return question_scores(by_id[qid].gold, ranked[qid])


def _mean(rows: Sequence[Scores]) -> Scores:
    count = len(rows)
    means = {m: (sum(r[m] for r in rows) / count if count else 0.0) for m in METRICS}
    return {**means, "n": float(count)}


def locomo_groups(questions: Iterable[BenchQuestion]) -> dict[str, list[str]]:
    """The core group (categories 1-4) first, then each category that has questions."""
    names = list(LOCOMO_CATEGORIES.values())
    by_category: dict[str, list[str]] = {name: [] for name in names}
    for q in questions:
        _bucket(by_category, q).append(q.qid)
    core = [qid for name in names if name != "adversarial" for qid in by_category[name]]
    groups = {LOCOMO_CORE: core} if core else {}
    groups.update({name: qids for name, qids in by_category.items() if qids})
    return groups


def memaware_groups(questions: Iterable[BenchQuestion]) -> dict[str, list[str]]:
    """Each tier that has questions, in easy/medium/hard order, then "all"."""
    by_tier: dict[str, list[str]] = {tier: [] for tier in MEMAWARE_TIERS}
    everyone = []
    for q in questions:
        _bucket(by_tier, q).append(q.qid)
        everyone.append(q.qid)
    groups = {tier: qids for tier, qids in by_tier.items() if qids}
    if everyone:
        groups[MEMAWARE_ALL] = everyone
    return groups


def _bucket(buckets: dict[str, list[str]], q: BenchQuestion) -> list[str]:
    if q.category not in buckets:
        raise InvalidInput(f"question {q.qid!r} has unknown category {q.category!r}")
    return buckets[q.category]


def percentile(values: Sequence[float], p: float) -> float:
    """The p-th percentile (0-100) by linear interpolation between closest ranks.

    This is numpy's default ("linear", Hyndman-Fan type 7): p50 of [1, 2, 3, 4] is 2.5, and
    p0 / p100 are the minimum / maximum.
    """
    if not values:
        raise InvalidInput("percentile of no values")
    if not 0 <= p <= 100:
        raise InvalidInput(f"percentile {p} is outside 0-100")
    ordered = sorted(values)
    position = (len(ordered) - 1) * p / 100
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


# --- the table ---------------------------------------------------------------------------------


def format_table(
    results: Mapping[str, Mapping[str, Mapping[str, float]]],
    latency: Mapping[str, Mapping[str, float]] | None = None,
) -> str:
    """A markdown table with one row per group x metric and one column per mode, from {mode: {group:
    {metric: fraction, "n": count}}}; `latency` ({mode: {label: ms}}) adds rows; a missing cell
    prints as "-"."""
    modes = list(results)
    rows = [["group", "metric", *modes]]
    for group in _union(results.values()):
        for i, metric in enumerate(("n", *METRICS)):
            cells = [_cell(results[m].get(group, {}).get(metric), metric) for m in modes]
            rows.append([group if i == 0 else "", metric, *cells])
    latency = latency or {}
    for i, label in enumerate(_union(latency.values())):
        cells = [_cell(latency.get(m, {}).get(label), "ms") for m in modes]
        rows.append(["latency" if i == 0 else "", f"{label} ms", *cells])
    return _render(rows)


def _union(maps: Iterable[Mapping[str, object]]) -> list[str]:
    """Keys of several mappings in order of first appearance."""
    return list(dict.fromkeys(key for m in maps for key in m))


def _cell(value: float | None, metric: str) -> str:
    if value is None:
        return "-"
    if metric == "n":
        return str(int(value))
    if metric == "ms":
        return f"{value:.2f}"
    return f"{100 * value:.1f}"


def _render(rows: list[list[str]]) -> str:
    widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]))]

    def line(cells: list[str]) -> str:
        # Labels left, numbers right, so columns of scores line up in a terminal.
        padded = [
            cell.ljust(w) if c < 2 else cell.rjust(w)
            for c, (cell, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "| " + " | ".join(padded) + " |"

    # The delimiter row: a trailing colon right-aligns the column when rendered as markdown.
    rule = ["-" * w if c < 2 else "-" * (w - 1) + ":" for c, w in enumerate(widths)]
    return "\n".join([line(rows[0]), line(rule), *map(line, rows[1:])])
