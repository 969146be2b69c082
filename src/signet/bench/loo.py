"""`signet bench loo`: leave-one-out for the query-adaptive fusion's lexical lead, over runs saved
by `signet bench locomo|memaware --leads ... --save FILE`. Per split (one LoCoMo conversation
out, one benchmark out, LoCoMo to its long-query form) the lead is chosen on the training
questions and only held-out rankings are scored, beside bm25, vector and fixed-weight hybrid,
with the noise: Hit@1 flips (exact sign test) and a seeded bootstrap interval of the MRR
difference.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from signet.bench.datasets import BenchQuestion
from signet.bench.metrics import locomo_groups, memaware_groups, question_scores, score
from signet.errors import InvalidInput

SINGLE = ("bm25", "vector")
FIXED = "lead=0"
HELD_OUT = "default (held out)"
TOP = ("Hit@1", "MRR")


@dataclass(frozen=True)
class Run:
    benchmark: str
    questions: list[BenchQuestion]
    ranked: dict[str, dict[str, list[str]]]
    # Each question's candidates and their features (recall/combine.py), when saved with
    # --candidates (bench/combiner_fit.py reads them).
    candidates: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def leads(self) -> list[str]:
        return sorted((m for m in self.ranked if m.startswith("lead=")), key=_lead_value)

    def groups(self, qids: Sequence[str] | None = None) -> dict[str, list[str]]:
        chosen = [q for q in self.questions if qids is None or q.qid in set(qids)]
        if self.benchmark.startswith("locomo"):
            return locomo_groups(chosen)
        return memaware_groups(chosen)


def save(path: Path, benchmark: str, questions: Sequence[BenchQuestion],
         ranked: Mapping[str, Mapping[str, list[str]]],
         candidates: Mapping[str, list[dict[str, Any]]] | None = None) -> None:
    """Write a run for this report (JSON)."""
    data = {
        "benchmark": benchmark,
        "questions": [
            {"qid": q.qid, "group": q.group, "category": q.category, "gold": sorted(q.gold),
             "quoted": sorted(q.quoted)}
            for q in questions
        ],
        "ranked": {mode: dict(by_question) for mode, by_question in ranked.items()},
        "candidates": dict(candidates or {}),
    }
    path.write_text(json.dumps(data), "utf-8")


def load(path: Path) -> Run:
    try:
        data = json.loads(path.read_text("utf-8"))
        questions = [
            BenchQuestion(q["qid"], "", q["group"], q["category"], frozenset(q["gold"]),
                          frozenset(q["quoted"]))
            for q in data["questions"]
        ]
        return Run(str(data["benchmark"]), questions, data["ranked"],
                   data.get("candidates", {}))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InvalidInput(f"{path}: not a saved benchmark run ({exc})") from exc


def _lead_value(name: str) -> tuple[float, float]:
    """(dense lead, lexical lead) of a variant name: `lead=X` or `lead=X/Y` (Y: the dense)."""
    lexical, _, dense = name.split("=", 1)[1].partition("/")
    return float(dense or 0), float(lexical)


def choose(run: Run, qids: Sequence[str]) -> str:
    """The variant with the best Hit@1 + MRR over these questions (ties: no dense lead or the
    smaller, then the smaller lexical lead)."""
    by_id = {q.qid: q for q in run.questions}

    def objective(variant: str) -> float:
        total = 0.0
        for qid in qids:
            scores = question_scores(by_id[qid].gold, run.ranked[variant][qid])
            total += scores["Hit@1"] + scores["MRR"]
        return total

    leads = run.leads
    if not leads:
        raise InvalidInput(f"the {run.benchmark} run holds no fusion variants (--leads)")
    return max(leads, key=lambda v: (objective(v), *(-x for x in _lead_value(v))))


def report(run: Run, held_out: Mapping[str, list[str]], chosen: Mapping[str, str]) -> dict[str, Any]:
    """Scores per group: the single modes, hybrid at fixed weights and the held-out default
    (each question ranked by the variant chosen without it), and whether the default reaches
    the best single mode's Hit@1 and MRR in each group."""
    groups = run.groups()
    tables = {mode: score(run.questions, run.ranked[mode], groups)
              for mode in (*SINGLE, FIXED) if mode in run.ranked}
    tables[HELD_OUT] = score(run.questions, held_out, groups)
    meets = {
        group: all(
            tables[HELD_OUT][group][metric] + 1e-9
            >= max(tables[m][group][metric] for m in SINGLE if m in tables)
            for metric in TOP
        )
        for group in groups
    }
    noises = {group: {m: against(run, held_out, qids, m) for m in SINGLE if m in tables}
              for group, qids in groups.items()}
    noise = {group: max(by_mode.values(), key=lambda n: n["strength"])
             for group, by_mode in noises.items()}
    within = {
        group: all(
            _within(metric, noises[group][m])
            for metric in TOP for m in noises[group]
            if tables[HELD_OUT][group][metric] + 1e-9 < tables[m][group][metric]
        )
        for group, ok in meets.items() if not ok
    }
    return {"benchmark": run.benchmark, "chosen": dict(chosen), "scores": tables, "meets": meets,
            "noise": noise, "within_noise": within}


BOOTSTRAP = 1000
# A shortfall whose sign test or bootstrap interval cannot tell it from no difference.
NOISE_P = 0.05


def against(run: Run, held_out: Mapping[str, list[str]], qids: Sequence[str],
             single: str) -> dict[str, Any]:
    """Against one single mode: Hit@1 flips each way with the exact two-sided sign test of
    them, and the paired bootstrap 95% interval of the default's MRR minus that mode's."""
    gold = {q.qid: q.gold for q in run.questions}
    theirs = [question_scores(gold[q], run.ranked[single][q]) for q in qids]
    ours = [question_scores(gold[q], held_out[q]) for q in qids]
    won = sum(1 for a, b in zip(ours, theirs, strict=True) if a["Hit@1"] > b["Hit@1"])
    lost = sum(1 for a, b in zip(ours, theirs, strict=True) if a["Hit@1"] < b["Hit@1"])
    diffs = [a["MRR"] - b["MRR"] for a, b in zip(ours, theirs, strict=True)]
    rng = random.Random(0)
    means = sorted(sum(rng.choices(diffs, k=len(diffs))) / len(diffs)
                   for _ in range(BOOTSTRAP)) if diffs else [0.0]
    low, high = means[int(0.025 * (len(means) - 1))], means[int(0.975 * (len(means) - 1))]
    return {"against": single, "hit1_won": won, "hit1_lost": lost, "hit1_p": sign_test(won, lost),
            "mrr_diff": sum(diffs) / len(diffs) if diffs else 0.0, "mrr_ci95": [low, high],
            "strength": sum(x["Hit@1"] + x["MRR"] for x in theirs)}


def sign_test(won: int, lost: int) -> float:
    """Exact two-sided p of `won` against `lost` flips under no difference (each flip a fair
    coin): McNemar's exact test of paired hits."""
    n = won + lost
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(won, lost) + 1)) / 2**n
    return min(1.0, 2 * tail)


def _within(metric: str, noise: Mapping[str, Any]) -> bool:
    if metric == "Hit@1":
        return bool(noise["hit1_p"] >= NOISE_P)
    return bool(noise["mrr_ci95"][1] >= 0)


def by_conversation(run: Run) -> dict[str, Any]:
    """Leave one group (a LoCoMo conversation) out."""
    folds: dict[str, list[str]] = {}
    for q in run.questions:
        folds.setdefault(q.group, []).append(q.qid)
    held_out: dict[str, list[str]] = {}
    chosen: dict[str, str] = {}
    for fold, qids in folds.items():
        training = [qid for other, ids in folds.items() if other != fold for qid in ids]
        chosen[fold] = variant = choose(run, training)
        held_out.update({qid: run.ranked[variant][qid] for qid in qids})
    return report(run, held_out, chosen)


def transferred(train: Run, test: Run) -> dict[str, Any]:
    """The variant chosen on all of `train`, scored on `test`."""
    variant = choose(train, [q.qid for q in train.questions])
    if variant not in test.ranked:
        raise InvalidInput(f"the {test.benchmark} run lacks {variant}: save both with one --leads")
    chosen = {f"fit on {train.benchmark}": variant}
    return report(test, test.ranked[variant], chosen)


def reports(runs: Sequence[Run]) -> list[dict[str, Any]]:
    """Every report the given runs allow (see the module's docstring)."""
    named = {r.benchmark: r for r in runs}
    out = []
    locomo, long, memaware = (named.get(n) for n in ("locomo", "locomo-long", "memaware"))
    if locomo is not None:
        out.append({"split": "one LoCoMo conversation out", **by_conversation(locomo)})
    if long is not None:
        out.append({"split": "LoCoMo long queries, one conversation out", **by_conversation(long)})
        if locomo is not None:
            out.append({"split": "fit on LoCoMo questions, test on long queries",
                        **transferred(locomo, long)})
    if locomo is not None and memaware is not None:
        out.append({"split": "fit on LoCoMo, test on MemAware", **transferred(locomo, memaware)})
        out.append({"split": "fit on MemAware, test on LoCoMo", **transferred(memaware, locomo)})
    if memaware is not None and locomo is None:
        out.append({"split": "MemAware, fit on itself", **transferred(memaware, memaware)})
    return out


def format_reports(found: Sequence[Mapping[str, Any]]) -> str:
    """Hit@1 / MRR per group and mode, the chosen leads and the verdict, as text."""
    lines = []
    for rep in found:
        lines.append(f"## {rep['split']} ({rep['benchmark']}); chosen: {rep['chosen']}")
        tables = rep["scores"]
        modes = list(tables)
        lines.append("| group | n | " + " | ".join(f"{m} Hit@1 / MRR" for m in modes)
                     + " | default >= best single | Hit@1 won / lost (sign test p), MRR diff [95% CI] |")
        lines.append("|---|---:|" + "---|" * len(modes) + "---|---|")
        for group in rep["meets"]:
            cells = [
                f"{100 * tables[m][group]['Hit@1']:.1f} / {100 * tables[m][group]['MRR']:.1f}"
                for m in modes
            ]
            n = int(tables[modes[0]][group]["n"])
            noise = rep["noise"][group]
            low, high = noise["mrr_ci95"]
            lines.append(
                f"| {group} | {n} | " + " | ".join(cells) + f" | {_verdict(rep, group)} | "
                f"vs {noise['against']}: {noise['hit1_won']} / {noise['hit1_lost']}"
                f" (p {noise['hit1_p']:.2f}),"
                f" {100 * noise['mrr_diff']:+.1f} [{100 * low:+.1f}, {100 * high:+.1f}] |")
        lines.append("")
    return "\n".join(lines)


def _verdict(rep: Mapping[str, Any], group: str) -> str:
    if rep["meets"][group]:
        return "yes"
    return "NO, within noise" if rep.get("within_noise", {}).get(group) else "NO"
