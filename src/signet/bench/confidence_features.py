"""Candidate confidence features (`agree`, `context`, `rank`, `margin`, `length`), measured held out
before any is shipped. `compare` refits the model with each added and reports, at the floor
removing 99% of the training part's noise, the gold dropped and noise removed on the held-out
part.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from signet.bench.logistic import newton_logistic
from signet.types import RecallHit

CANDIDATES: dict[str, tuple[str, ...]] = {
    "base": (),
    "+agree": ("agree",),
    "+context": ("context",),
    "+rank": ("rank",),
    "+margin": ("margin_coverage", "margin_cosine"),
    "+length": ("length",),
    "+agree+context": ("agree", "context"),
}
TARGET = 0.99


@dataclass
class Row:
    benchmark: str
    mode: str
    qid: str | None  # None: a negative query
    cosine: float
    coverage: float
    label: int
    group: str = ""  # the store asked (a LoCoMo conversation); negatives carry their store's
    # Candidate features the shipped model does not read (candidate_features below).
    extra: dict[str, float] = field(default_factory=dict)


def candidate_features(hit: RecallHit, rank: int, top: Sequence[RecallHit]) -> dict[str, float]:
    """The candidates of one result among its query's first ten (`top`)."""
    e = hit.evidence
    lexical = e.lexical is not None or e.source is not None
    dense = e.semantic is not None or e.source_semantic is not None
    best_cov = max((h.evidence.coverage or 0.0) for h in top)
    best_cos = max((h.evidence.cosine or 0.0) for h in top)
    return {
        "agree": float(lexical and dense),
        "context": float(e.context is not None),
        "rank": math.log1p(rank),
        "margin_coverage": (e.coverage or 0.0) - best_cov,
        "margin_cosine": (e.cosine or 0.0) - best_cos,
        "length": math.log(max(len(hit.memory.content.split()), 1)),
    }


def _matrix(rows: Sequence[Row], names: Sequence[str], with_cosine: bool) -> np.ndarray:
    base = [[1.0, r.coverage] + ([r.cosine] if with_cosine else []) for r in rows]
    return np.array(
        [b + [r.extra.get(n, 0.0) for n in names] for b, r in zip(base, rows, strict=True)],
        dtype=np.float64,
    )


def _scorer(train: Sequence[Row], names: Sequence[str], with_cosine: bool
            ) -> Callable[[Sequence[Row]], np.ndarray]:
    labels = np.array([r.label for r in train], float)
    w = newton_logistic(_matrix(train, names, with_cosine), labels, 1e-3)
    return lambda rows: 1.0 / (1.0 + np.exp(-(_matrix(rows, names, with_cosine) @ w)))


def _is_noise(rows: Sequence[Row]) -> np.ndarray:
    return np.array([bool(r.qid and r.qid.startswith("neg")) for r in rows])


def _heldout(train: Sequence[Row], test: Sequence[Row], names: Sequence[str],
             with_cosine: bool) -> tuple[float, float]:
    """(gold dropped, noise removed) on `test` by the floor removing TARGET of `train`'s noise."""
    score = _scorer(train, names, with_cosine)
    noise = score(train)[_is_noise(train)]
    if not len(noise) or not test:
        return math.nan, math.nan
    floor = float(np.quantile(noise, TARGET))
    p = score(test)
    gold = p[np.array([r.label == 1 for r in test])]
    test_noise = p[_is_noise(test)]
    return (float(np.mean(gold < floor)) if len(gold) else math.nan,
            float(np.mean(test_noise < floor)) if len(test_noise) else math.nan)


def compare(rows: Sequence[Row], with_cosine: bool) -> list[dict[str, Any]]:
    locomo = [r for r in rows if r.benchmark == "locomo"]
    memaware = [r for r in rows if r.benchmark == "memaware"]
    groups = sorted({r.group for r in locomo if r.group})
    out = []
    for label, names in CANDIDATES.items():
        by_conversation = [
            _heldout([r for r in locomo if r.group != g], [r for r in locomo if r.group == g],
                     names, with_cosine)[0]
            for g in groups
        ]
        out.append({
            "features": label,
            "locomo_memaware": _heldout(locomo, memaware, names, with_cosine),
            "memaware_locomo": _heldout(memaware, locomo, names, with_cosine),
            "by_conversation": float(np.nanmean(by_conversation)) if groups else math.nan,
        })
    return out
