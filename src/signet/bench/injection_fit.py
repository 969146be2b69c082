"""Fitting the prompt hook's per-memory judge (injection/judge.py), judged held out.

Input: the rows `signet bench locomo|memaware --inject --rows FILE` keep (every prompt's
candidates as the hook sees them: a label and the judge's features). The hook injects, in
recall's order, each candidate whose probability reaches the floor, at most `k` of them; this
module replays exactly that on the rows, so a model and floor are measured without asking
recall again.

The floor rule: the lowest floor of FLOORS at which, on the data the model was fitted on,
every hard-negative set injects for at most MAX_HARD of its prompts and every easy one for at
most MAX_EASY. Splits, each fitting model and floor on one part and measuring the other:
LoCoMo -> MemAware, MemAware -> LoCoMo, and each LoCoMo conversation left out (fitted on
MemAware and the four others). The shipped coefficients are the fit on everything, floor by
the same rule; the held-out splits say whether that transfers. Feature subsets are compared the
same way (what each fact adds).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from signet.errors import InvalidInput
from signet.injection.judge import FEATURES

__all__ = ["FLOORS", "Prompt", "evaluate", "fit", "load", "run"]

FLOORS = tuple(round(f, 3) for f in np.arange(0.05, 0.951, 0.025))
MAX_HARD = 0.10
MAX_EASY = 0.02
POSITIVE = "positive"
# "cosine+margin" is the shipped judge (injection/judge.py); the others say what a fact adds.
SUBSETS: dict[str, tuple[str, ...]] = {
    "cosine": ("cosine",),
    "cosine+margin": ("cosine", "margin"),
    "cosine+margin+lead+rank": ("cosine", "margin", "lead", "rank"),
    "all": FEATURES,
}


@dataclass(frozen=True)
class Prompt:
    benchmark: str
    kind: str  # "positive", "easy" or "hard: <set>"
    store: str
    group: str | None  # a positive's tier or category
    labels: np.ndarray
    x: np.ndarray  # candidates x FEATURES


def load(paths: Sequence[Path]) -> list[Prompt]:
    prompts = []
    for path in paths:
        try:
            data = json.loads(path.read_text("utf-8"))
        except (OSError, ValueError) as exc:
            raise InvalidInput(f"{path}: not a readable rows file: {exc}") from exc
        if list(data.get("features", [])) != list(FEATURES):
            raise InvalidInput(f"{path}: rows of other features ({data.get('features')}); "
                               "run the benchmark again")
        for p in data["prompts"]:
            cand = np.array(p["candidates"], dtype=np.float64).reshape(-1, 1 + len(FEATURES))
            prompts.append(Prompt(data["benchmark"], p["kind"], p["store"], p.get("group"),
                                  cand[:, 0], cand[:, 1:]))
    return prompts


def fit(prompts: Sequence[Prompt], names: Sequence[str] = FEATURES, l2: float = 1e-2
        ) -> np.ndarray:
    """Logistic regression of the label on `names` over every candidate (Newton's method):
    bias first, then a weight per FEATURES entry (0 for those not in `names`)."""
    cols = [FEATURES.index(n) for n in names]
    x = np.concatenate([p.x[:, cols] for p in prompts if len(p.labels)])
    x = np.hstack([np.ones((len(x), 1)), x])
    y = np.concatenate([p.labels for p in prompts if len(p.labels)])
    w = np.zeros(x.shape[1])
    for _ in range(100):
        q = 1.0 / (1.0 + np.exp(-(x @ w)))
        hess = (x * (q * (1 - q))[:, None]).T @ x + l2 * np.eye(x.shape[1])
        step = np.linalg.solve(hess, x.T @ (q - y) + l2 * w)
        w -= step
        if float(np.abs(step).max()) < 1e-9:
            break
    full = np.zeros(1 + len(FEATURES))
    full[0] = w[0]
    for i, c in enumerate(cols):
        full[1 + c] = w[1 + i]
    return full


def _chosen(p: Prompt, w: np.ndarray, floor: float, k: int) -> np.ndarray:
    """Labels of the candidates the hook injects: probability >= floor, recall's order, <= k."""
    if not len(p.labels):
        return p.labels
    prob = 1.0 / (1.0 + np.exp(-(w[0] + p.x @ w[1:])))
    return p.labels[prob >= floor][:k]


def evaluate(prompts: Sequence[Prompt], w: np.ndarray, floor: float, k: int = 6
             ) -> dict[str, Any]:
    """Per benchmark: each group's context hit, injection rate, lines per injected prompt;
    precision over the positives; each negative set's false injection rate."""
    out: dict[str, Any] = {}
    for p in prompts:
        bench = out.setdefault(p.benchmark, {"groups": {}, "negatives": {}, "_lines": [0, 0]})
        got = _chosen(p, w, floor, k)
        if p.kind == POSITIVE:
            g = bench["groups"].setdefault(p.group or "all", [0, 0, 0, 0])
            g[0] += 1
            g[1] += int(got.sum() > 0)
            g[2] += int(len(got) > 0)
            g[3] += len(got)
            bench["_lines"][0] += int(got.sum())
            bench["_lines"][1] += len(got)
        else:
            n = bench["negatives"].setdefault(p.kind, [0, 0])
            n[0] += 1
            n[1] += int(len(got) > 0)
    for bench in out.values():
        relevant, lines = bench.pop("_lines")
        bench["precision"] = relevant / lines if lines else None
        bench["groups"] = {
            name: {"n": n, "context_hit": hit / n, "injection_rate": inj / n,
                   "lines_per_injected": lines_ / inj if inj else 0.0}
            for name, (n, hit, inj, lines_) in bench["groups"].items()
        }
        bench["negatives"] = {name: {"n": n, "false_injection_rate": f / n}
                              for name, (n, f) in bench["negatives"].items()}
    return out


def choose_floor(prompts: Sequence[Prompt], w: np.ndarray, k: int = 6) -> float:
    for floor in FLOORS:
        figures = evaluate(prompts, w, floor, k)
        if all(
            v["false_injection_rate"] <= (MAX_EASY if name == "easy" else MAX_HARD)
            for bench in figures.values() for name, v in bench["negatives"].items()
        ):
            return floor
    return FLOORS[-1]


def _merge(parts: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Folds' figures added up (counts weighted by n)."""
    out: dict[str, Any] = {}
    for part in parts:
        for bench, figures in part.items():
            mine = out.setdefault(bench, {"groups": {}, "negatives": {}, "_p": [0.0, 0.0]})
            for name, g in figures["groups"].items():
                acc = mine["groups"].setdefault(name, [0, 0.0, 0.0, 0.0])
                inj = g["injection_rate"] * g["n"]
                acc[0] += g["n"]
                acc[1] += g["context_hit"] * g["n"]
                acc[2] += inj
                acc[3] += g["lines_per_injected"] * inj
            for name, v in figures["negatives"].items():
                acc = mine["negatives"].setdefault(name, [0, 0.0])
                acc[0] += v["n"]
                acc[1] += v["false_injection_rate"] * v["n"]
            lines = sum(g["lines_per_injected"] * g["injection_rate"] * g["n"]
                        for g in figures["groups"].values())
            if figures["precision"] is not None:
                mine["_p"][0] += figures["precision"] * lines
                mine["_p"][1] += lines
    for figures in out.values():
        rel, lines = figures.pop("_p")
        figures["precision"] = rel / lines if lines else None
        figures["groups"] = {
            name: {"n": n, "context_hit": hit / n, "injection_rate": inj / n,
                   "lines_per_injected": ln / inj if inj else 0.0}
            for name, (n, hit, inj, ln) in figures["groups"].items()
        }
        figures["negatives"] = {name: {"n": n, "false_injection_rate": f / n}
                                for name, (n, f) in figures["negatives"].items()}
    return out


def splits(prompts: Sequence[Prompt], names: Sequence[str], k: int = 6) -> dict[str, Any]:
    """Held-out figures per split, and the fit on everything."""
    by = {b: [p for p in prompts if p.benchmark == b] for b in sorted({p.benchmark for p in prompts})}
    out: dict[str, Any] = {}
    for train, test in (("locomo", "memaware"), ("memaware", "locomo")):
        if train in by and test in by:
            w = fit(by[train], names)
            floor = choose_floor(by[train], w, k)
            out[f"{train} -> {test}"] = {"floor": floor, **evaluate(by[test], w, floor, k)}
    locomo = by.get("locomo", [])
    stores = sorted({p.store for p in locomo})
    if len(stores) > 1:
        folds, floors = [], []
        for store in stores:
            train_p = [p for p in prompts if p.benchmark != "locomo" or p.store != store]
            w = fit(train_p, names)
            floor = choose_floor(train_p, w, k)
            floors.append(float(floor))
            folds.append(evaluate([p for p in locomo if p.store == store], w, floor, k))
        out["locomo: one conversation left out"] = {"floor": floors, **_merge(folds)}
    w = fit(prompts, names)
    floor = choose_floor(prompts, w, k)
    out["all (fitted on everything)"] = {"floor": floor, "coefficients": [round(float(v), 4) for v in w],
                                         **evaluate(prompts, w, floor, k)}
    return out


def run(paths: Sequence[Path], k: int = 6) -> dict[str, Any]:
    prompts = load(paths)
    return {label: splits(prompts, names, k) for label, names in SUBSETS.items()}


def format_fit(data: dict[str, Any]) -> str:
    lines = ["| features | split | floor | groups: context hit % / lines | precision % | "
             "false injection % |", "| --- | --- | --- | --- | ---: | --- |"]
    for label, table in data.items():
        for split, figures in table.items():
            floor = figures["floor"]
            for bench, f in figures.items():
                if not isinstance(f, dict) or "groups" not in f:
                    continue
                groups = ", ".join(f"{n} {100 * g['context_hit']:.1f} / {g['lines_per_injected']:.1f}"
                                   for n, g in f["groups"].items())
                neg = ", ".join(f"{n} {100 * v['false_injection_rate']:.1f}"
                                for n, v in f["negatives"].items())
                precision = "" if f["precision"] is None else f"{100 * f['precision']:.1f}"
                lines.append(f"| {label} | {split} ({bench}) | {floor} | {groups} | {precision} | {neg} |")
        coefficients = table.get("all (fitted on everything)", {}).get("coefficients")
        if coefficients:
            lines.append(f"coefficients ({label}; bias, {', '.join(FEATURES)}): {coefficients}")
    return "\n".join(lines)
