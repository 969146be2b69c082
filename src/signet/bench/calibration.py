"""`signet bench confidence`: refit recall's confidence (recall/confidence.py) and measure its
floor.

The dev halves of LoCoMo and MemAware go through the real recall, plus the `negatives.json` queries;
each top-ten result is a labelled (cosine, coverage) row. The trade-off table gives the gold dropped
and noise removed at each floor; `heldout` fits on one part and measures on another, since a floor
counts only where it was not fitted.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from signet.bench import retrieval
from signet.bench.confidence_features import Row, candidate_features, compare
from signet.bench.datasets import BenchQuestion
from signet.bench.logistic import newton_logistic
from signet.recall.confidence import Model, model
from signet.types import RecallResponse

FLOORS = (0.02, 0.03, 0.04, 0.05, 0.06, 0.08, 0.1, 0.15, 0.2)
TOP = 10


def negatives() -> list[str]:
    """The shared negative queries (package data)."""
    text = resources.files("signet.bench").joinpath("negatives.json").read_text("utf-8")
    return [str(q) for q in json.loads(text)]


@dataclass
class Collector:
    benchmark: str
    rows: list[Row] = field(default_factory=list)
    _negative: int = 0
    _group: str = ""  # the store last asked: negatives are asked in every store after its questions

    def __call__(
        self, question: BenchQuestion | None, mode: str, response: RecallResponse,
        keys_of: dict[str, list[str]],
    ) -> None:
        qid = question.qid if question is not None else None
        if question is not None:
            self._group = question.group
        if question is None:
            self._negative += 1
            qid = None
        top = response.hits[:TOP]
        for rank, hit in enumerate(top):
            gold = question.gold if question is not None else frozenset()
            label = int(any(k in gold for k in keys_of.get(hit.memory.id, [])))
            e = hit.evidence
            self.rows.append(
                Row(self.benchmark, mode, qid or f"neg{self._negative}", e.cosine or 0.0,
                    e.coverage or 0.0, label if qid else 0, self._group,
                    candidate_features(hit, rank, top))
            )


def fit(rows: Sequence[Row], with_cosine: bool, l2: float = 1e-3) -> Model:
    """Logistic regression of the label on (cosine, coverage) by Newton's method."""
    x = np.array(
        [[1.0, r.cosine if with_cosine else 0.0, r.coverage] for r in rows], dtype=np.float64
    )
    if not with_cosine:
        x = x[:, [0, 2]]
    w = newton_logistic(x, np.array([r.label for r in rows], dtype=np.float64), l2)
    if with_cosine:
        return Model(float(w[0]), float(w[1]), float(w[2]))
    return Model(float(w[0]), 0.0, float(w[1]))


def tradeoff(rows: Sequence[Row], rate: Model) -> list[dict[str, Any]]:
    """Per floor and benchmark: gold results dropped, questions left with no gold result,
    negative results removed, negative queries left empty (all as fractions)."""
    out = []
    for floor in FLOORS:
        line: dict[str, Any] = {"floor": floor}
        for bench in sorted({r.benchmark for r in rows}):
            mine = [r for r in rows if r.benchmark == bench]
            kept = [rate(r.cosine, r.coverage) >= floor for r in mine]
            gold = [k for r, k in zip(mine, kept, strict=True) if r.label]
            by_q: dict[str, bool] = {}
            for r, k in zip(mine, kept, strict=True):
                if r.label:
                    by_q[r.qid or ""] = by_q.get(r.qid or "", False) or k
            neg = [k for r, k in zip(mine, kept, strict=True) if r.qid and r.qid.startswith("neg")]
            neg_q: dict[str, bool] = {}
            for r, k in zip(mine, kept, strict=True):
                if r.qid and r.qid.startswith("neg"):
                    neg_q[r.qid] = neg_q.get(r.qid, False) or k
            line[bench] = {
                "gold_dropped": _share(gold, False),
                "questions_lost": _share(list(by_q.values()), False),
                "noise_removed": _share(neg, False),
                "negatives_empty": _share(list(neg_q.values()), False),
            }
        out.append(line)
    return out


def _noise(rows: Sequence[Row]) -> list[Row]:
    return [r for r in rows if r.qid and r.qid.startswith("neg")]


def _dropped(rows: Sequence[Row], rate: Model, floor: float) -> tuple[float, float]:
    """(gold results dropped, noise results removed) by `floor`, as fractions."""
    gold = [rate(r.cosine, r.coverage) < floor for r in rows if r.label]
    noise = [rate(r.cosine, r.coverage) < floor for r in _noise(rows)]
    return _share(gold, True), _share(noise, True)


def _floor_for(rows: Sequence[Row], rate: Model, removed: float) -> float:
    """The lowest floor that removes the share `removed` of the rows' noise results."""
    values = sorted(rate(r.cosine, r.coverage) for r in _noise(rows))
    if not values:
        return 0.0
    return values[min(int(math.ceil(removed * len(values))), len(values) - 1)]


def heldout(rows: Sequence[Row], with_cosine: bool, targets: Sequence[float] = (0.95, 0.99)
            ) -> list[dict[str, Any]]:
    """Fit model and floor on one part and measure on another (each benchmark on the other, each
    LoCoMo conversation on the four others): per split and noise target, the floor and the gold
    dropped / noise removed on both parts."""
    splits = []
    benches = sorted({r.benchmark for r in rows})
    for train in benches:
        for test in benches:
            if test != train:
                splits.append((f"{train} -> {test}", [r for r in rows if r.benchmark == train],
                               [r for r in rows if r.benchmark == test]))
    locomo = [r for r in rows if r.benchmark == "locomo"]
    for group in sorted({r.group for r in locomo if r.group}):
        splits.append((f"locomo: others -> {group}", [r for r in locomo if r.group != group],
                       [r for r in locomo if r.group == group]))
    out = []
    for name, fitted, held in splits:
        rate = fit(fitted, with_cosine)
        for target in targets:
            floor = _floor_for(fitted, rate, target)
            fit_gold, fit_noise = _dropped(fitted, rate, floor)
            gold, noise = _dropped(held, rate, floor)
            out.append({"split": name, "target": target, "floor": floor, "fit_gold_dropped":
                        fit_gold, "fit_noise_removed": fit_noise, "gold_dropped": gold,
                        "noise_removed": noise})
    return out


def _share(values: Sequence[bool], wanted: bool) -> float:
    return sum(1 for v in values if v == wanted) / len(values) if values else 0.0


def run(
    modes: tuple[str, str] = ("bm25", "full"),
    *,
    limit: int | None = None,
    cache: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Collect rows on both benchmarks, fit both models, and tabulate the floors."""
    queries = negatives()
    locomo = Collector("locomo")
    memaware = Collector("memaware")
    retrieval.run_locomo(None, modes, limit=limit, cache=cache, progress=progress,
                         observe=locomo, negatives=queries)
    retrieval.run_memaware(None, None, modes, limit=limit, cache=cache, progress=progress,
                           observe=memaware, negatives=queries)
    rows = locomo.rows + memaware.rows
    keyword_rows = [r for r in rows if r.mode == modes[0]]
    vector_rows = [r for r in rows if r.mode == modes[1]]
    keyword = fit(keyword_rows, with_cosine=False)
    vector = fit(vector_rows, with_cosine=True)
    # The table is the shipped model's (what recall computes); the refit is printed beside it.
    return {
        "rows": {"keyword": len(keyword_rows), "vector": len(vector_rows)},
        "with_cosine": [vector.bias, vector.cosine, vector.coverage],
        "without_cosine": [keyword.bias, keyword.cosine, keyword.coverage],
        "tradeoff": {
            modes[1]: tradeoff(vector_rows, model(with_cosine=True)),
            modes[0]: tradeoff(keyword_rows, model(with_cosine=False)),
        },
        "base_rate": {
            m: (sum(r.label for r in rs) / len(rs) if rs else math.nan)
            for m, rs in ((modes[0], keyword_rows), (modes[1], vector_rows))
        },
        "heldout": {
            modes[1]: heldout(vector_rows, with_cosine=True),
            modes[0]: heldout(keyword_rows, with_cosine=False),
        },
        "features": {
            modes[1]: compare(vector_rows, with_cosine=True),
            modes[0]: compare(keyword_rows, with_cosine=False),
        },
    }


def format_tradeoff(data: dict[str, Any]) -> str:
    tradeoff = (
        (mode, line["floor"], bench, *(_pct(v[k]) for k in (
            "gold_dropped", "questions_lost", "noise_removed", "negatives_empty")))
        for mode, table in data["tradeoff"].items() for line in table
        for bench, v in line.items() if bench != "floor"
    )
    heldout = (
        (mode, h["split"], f"{100 * h['target']:.0f}", f"{h['floor']:.3f}", *(_pct(h[k]) for k in (
            "fit_gold_dropped", "fit_noise_removed", "gold_dropped", "noise_removed")))
        for mode, splits in data.get("heldout", {}).items() for h in splits
    )
    features = (
        (mode, f["features"], *(f"{_pct(f[k][0])} / {_pct(f[k][1])}"
                                for k in ("locomo_memaware", "memaware_locomo")),
         _pct(f["by_conversation"]))
        for mode, table in data.get("features", {}).items() for f in table
    )
    return "\n".join([
        f"refit with cosine (bias, w_cos, w_cov): {[round(v, 3) for v in data['with_cosine']]}",
        f"refit without cosine: {[round(v, 3) for v in data['without_cosine']]}",
        *_table("trade-off of the shipped coefficients (recall/confidence.py):",
                "| mode | floor | bench | gold dropped % | questions lost % | noise removed % | "
                "negative queries empty % |", "| --- | ---: | --- | ---: | ---: | ---: | ---: |",
                tradeoff),
        *_table("held out (model and floor fitted on one part, measured on another):",
                "| mode | split | noise target % | floor | fit: gold dropped % | fit: noise removed % "
                "| held out: gold dropped % | held out: noise removed % |",
                "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |", heldout),
        *_table("candidate features (model refitted with them; floor removing 99% of the training "
                "part's noise): gold dropped % / noise removed % held out",
                "| mode | features | locomo -> memaware | memaware -> locomo | locomo by conversation "
                "(gold dropped %) |", "| --- | --- | ---: | ---: | ---: |", features),
    ])


def _pct(fraction: float) -> str:
    return f"{100 * fraction:.1f}"


def _table(title: str, header: str, align: str, rows: Iterable[Sequence[object]]) -> list[str]:
    """A markdown table's lines under its title, a cell's text its `str`."""
    return [title, header, align, *("| " + " | ".join(map(str, row)) + " |" for row in rows)]
