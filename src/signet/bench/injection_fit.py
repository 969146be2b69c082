"""`signet bench inject-fit`: fit the prompt hook's judge (injection/judge.py) on kept rows, judged
held out.

The hook's selection is replayed exactly on the rows (a prompt naming only things no candidate
mentions injects nothing, as in the hook). The floor is the lowest of FLOORS at which
every negative set injects for at most MAX_HARD / MAX_EASY of its prompts; the operating point of
POINTS maximises the harmonic mean of context hit and precision. Splits fit on one part and measure
the other; the shipped values are the fit on everything.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from signet.bench.logistic import newton_logistic
from signet.errors import InvalidInput
from signet.injection.judge import FEATURES

__all__ = ["FLOORS", "POINTS", "Prompt", "curve", "evaluate", "fit", "load", "run"]

FLOORS = tuple(round(f, 3) for f in np.arange(0.02, 0.951, 0.005))
MEMORY_FLOORS = (0.01, 0.03, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3)
POINTS = tuple((m, k) for m in MEMORY_FLOORS for k in (1, 2, 3, 4, 6))
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
    names_unknown: bool = False  # the hook injects nothing (injection/names.py)


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
                                  cand[:, 0], cand[:, 1:], bool(p.get("names_unknown"))))
    return prompts


def fit(prompts: Sequence[Prompt], names: Sequence[str] = FEATURES, l2: float = 1e-2
        ) -> np.ndarray:
    """Logistic regression of the label on `names` over every candidate (Newton's method):
    bias first, then a weight per FEATURES entry (0 for those not in `names`)."""
    cols = [FEATURES.index(n) for n in names]
    x = np.concatenate([p.x[:, cols] for p in prompts if len(p.labels)])
    x = np.hstack([np.ones((len(x), 1)), x])
    y = np.concatenate([p.labels for p in prompts if len(p.labels)])
    w = newton_logistic(x, y, l2, steps=100, tolerance=1e-9)
    full = np.zeros(1 + len(FEATURES))
    full[0] = w[0]
    for i, c in enumerate(cols):
        full[1 + c] = w[1 + i]
    return full


def _chosen(p: Prompt, w: np.ndarray, floor: float, memory: float, k: int) -> np.ndarray:
    """Labels of the candidates the hook injects (judge.select): none unless the best
    probability reaches `floor`, then those reaching `memory` in recall's order, <= k."""
    if not len(p.labels) or p.names_unknown:
        return p.labels[:0]
    prob = 1.0 / (1.0 + np.exp(-(w[0] + p.x @ w[1:])))
    best = float(prob.max())
    if best < floor:
        return p.labels[:0]
    return p.labels[prob >= min(memory, best)][:k]


def evaluate(prompts: Sequence[Prompt], w: np.ndarray, floor: float, k: int = 1,
             memory: float = 0.0) -> dict[str, Any]:
    """Per benchmark: each group's context hit, injection rate, lines per injected prompt;
    precision over the positives; each negative set's false injection rate."""
    out: dict[str, Any] = {}
    for p in prompts:
        bench = out.setdefault(p.benchmark, {"groups": {}, "negatives": {}, "_lines": [0, 0]})
        got = _chosen(p, w, floor, memory, k)
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
        _to_rates(bench, *bench.pop("_lines"))
    return out


def _to_rates(bench: dict[str, Any], relevant: float, lines: float) -> None:
    """One benchmark's summed counts -> its figures, in place: precision over the injected
    lines, each group's rates (n, hits, injections, lines) and each negative set's."""
    bench["precision"] = relevant / lines if lines else None
    bench["groups"] = {
        name: {"n": n, "context_hit": hit / n, "injection_rate": inj / n,
               "lines_per_injected": ln / inj if inj else 0.0}
        for name, (n, hit, inj, ln) in bench["groups"].items()
    }
    bench["negatives"] = {name: {"n": n, "false_injection_rate": f / n}
                          for name, (n, f) in bench["negatives"].items()}


def choose_floor(prompts: Sequence[Prompt], w: np.ndarray) -> float:
    for floor in FLOORS:
        figures = evaluate(prompts, w, floor, 1)
        if all(
            v["false_injection_rate"] <= (MAX_EASY if name == "easy" else MAX_HARD)
            for bench in figures.values() for name, v in bench["negatives"].items()
        ):
            return float(floor)
    return FLOORS[-1]


def balance(figures: dict[str, Any]) -> float:
    """The harmonic mean of context hit (over the positives) and precision, each benchmark's,
    averaged."""
    values = []
    for f in figures.values():
        n = sum(g["n"] for g in f["groups"].values())
        hit = sum(g["context_hit"] * g["n"] for g in f["groups"].values()) / max(n, 1)
        precision = f["precision"] or 0.0
        values.append(2 * hit * precision / (hit + precision) if hit + precision else 0.0)
    return float(np.mean(values)) if values else 0.0


def choose_point(prompts: Sequence[Prompt], w: np.ndarray, floor: float,
                 points: Sequence[tuple[float, int]] = POINTS) -> tuple[float, int]:
    """(memory floor, k) of `points` with the best balance on `prompts` (ties: smaller k)."""
    scored = [(round(balance(evaluate(prompts, w, floor, k, m)), 4), -k, m, k) for m, k in points]
    _, _, memory, k = max(scored)
    return memory, k


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
        _to_rates(figures, *figures.pop("_p"))
    return out


def _folds(prompts: Sequence[Prompt]) -> list[tuple[str, list[Prompt], list[Prompt]]]:
    """(name, fitted part, measured part): each benchmark on the other, each LoCoMo
    conversation left out."""
    by = {b: [p for p in prompts if p.benchmark == b] for b in sorted({p.benchmark for p in prompts})}
    out = []
    for train, test in (("locomo", "memaware"), ("memaware", "locomo")):
        if train in by and test in by:
            out.append((f"{train} -> {test}", by[train], by[test]))
    stores = sorted({p.store for p in by.get("locomo", [])})
    if len(stores) > 1:
        for store in stores:
            out.append((LEFT_OUT,
                        [p for p in prompts if p.benchmark != "locomo" or p.store != store],
                        [p for p in by["locomo"] if p.store == store]))
    return out


LEFT_OUT = "locomo: one conversation left out"


def splits(prompts: Sequence[Prompt], names: Sequence[str],
           points: Sequence[tuple[float, int]] = POINTS) -> dict[str, Any]:
    """Held-out figures per split (model, floor and point fitted on the other part), and the
    fit on everything."""
    out: dict[str, Any] = {}
    left_out: list[dict[str, Any]] = []
    chosen: list[list[float]] = []
    for name, train, test in _folds(prompts):
        w = fit(train, names)
        floor = choose_floor(train, w)
        memory, k = choose_point(train, w, floor, points)
        figures = evaluate(test, w, floor, k, memory)
        if name == LEFT_OUT:
            left_out.append(figures)
            chosen.append([float(floor), memory, k])
        else:
            out[name] = {"floor": floor, "memory_floor": memory, "k": k, **figures}
    if left_out:
        out[LEFT_OUT] = {"floor": chosen, **_merge(left_out)}
    w = fit(prompts, names)
    floor = choose_floor(prompts, w)
    memory, k = choose_point(prompts, w, floor, points)
    out["all (fitted on everything)"] = {
        "floor": floor, "memory_floor": memory, "k": k,
        "coefficients": [round(float(v), 4) for v in w], **evaluate(prompts, w, floor, k, memory),
    }
    return out


def curve(prompts: Sequence[Prompt], names: Sequence[str],
          points: Sequence[tuple[float, int]] = POINTS) -> dict[str, Any]:
    """Every point's figures held out: each fold's model and floor fitted on its other part,
    the point imposed; the folds' figures added up per benchmark."""
    fitted = []
    for _, train, test in _folds(prompts):
        w = fit(train, names)
        fitted.append((w, choose_floor(train, w), test))
    return {f"{m} / {k}": _merge([evaluate(test, w, floor, k, m) for w, floor, test in fitted])
            for m, k in points}


SHIPPED = "cosine+margin"


def run(paths: Sequence[Path], points: Sequence[tuple[float, int]] = POINTS) -> dict[str, Any]:
    prompts = load(paths)
    out: dict[str, Any] = {label: splits(prompts, names, points) for label, names in SUBSETS.items()}
    out["curve"] = curve(prompts, SUBSETS[SHIPPED], points)
    return out


def _cells(f: dict[str, Any]) -> tuple[str, str, str]:
    groups = ", ".join(f"{n} {100 * g['context_hit']:.1f} / {g['lines_per_injected']:.1f}"
                       for n, g in f["groups"].items())
    neg = ", ".join(f"{n} {100 * v['false_injection_rate']:.1f}" for n, v in f["negatives"].items())
    precision = "" if f["precision"] is None else f"{100 * f['precision']:.1f}"
    return groups, precision, neg


def format_fit(data: dict[str, Any]) -> str:
    lines = ["| features | split | floor / memory floor / k | groups: context hit % / lines | "
             "precision % | false injection % |", "| --- | --- | --- | --- | ---: | --- |"]
    for label, table in data.items():
        if label == "curve":
            continue
        for split, figures in table.items():
            point = (figures["floor"] if split == LEFT_OUT
                     else f"{figures['floor']} / {figures['memory_floor']} / {figures['k']}")
            for bench, f in figures.items():
                if not isinstance(f, dict) or "groups" not in f:
                    continue
                groups, precision, neg = _cells(f)
                lines.append(f"| {label} | {split} ({bench}) | {point} | {groups} | {precision} | {neg} |")
        coefficients = table.get("all (fitted on everything)", {}).get("coefficients")
        if coefficients:
            lines.append(f"coefficients ({label}; bias, {', '.join(FEATURES)}): {coefficients}")
    lines += ["", f"held out, {SHIPPED}, every point (memory floor / k):",
              "| point | benchmark | groups: context hit % / lines | precision % | false injection % |",
              "| --- | --- | --- | ---: | --- |"]
    for point, figures in data.get("curve", {}).items():
        for bench, f in figures.items():
            groups, precision, neg = _cells(f)
            lines.append(f"| {point} | {bench} | {groups} | {precision} | {neg} |")
    return "\n".join(lines)
