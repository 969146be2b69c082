"""`signet bench inject-fit`: the per-memory judge fitted on rows, its floor held out."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from signet.bench.injection_fit import POINTS
from signet.injection.judge import FEATURES


def candidate(label: int, cosine: float) -> list[float]:
    # label, then FEATURES: cosine, margin, lead, coverage, agree, rank
    return [label, cosine, cosine - 0.2, cosine - 0.3, 0.5 * label, float(label), 0.0]


def rows_file(path: Path, benchmark: str, stores: list[str]) -> Path:
    prompts = []
    for store in stores:
        for i in range(20):
            # About something stored: the gold candidate stands out (cosine 0.6-0.8).
            prompts.append({"kind": "positive", "store": store, "qid": f"{store}/{i}",
                            "group": "single-hop" if i % 2 else "temporal",
                            "candidates": [candidate(1, 0.6 + i / 100), candidate(0, 0.3),
                                           candidate(0, 0.25)]})
            # Near the store, about nothing in it (cosine 0.3-0.45), and far from it.
            prompts.append({"kind": "hard: other", "store": store, "qid": None, "group": None,
                            "candidates": [candidate(0, 0.3 + i / 150), candidate(0, 0.2)]})
            prompts.append({"kind": "easy", "store": store, "qid": None, "group": None,
                            "candidates": [candidate(0, 0.1)]})
    path.write_text(json.dumps({"benchmark": benchmark, "features": list(FEATURES),
                                "prompts": prompts}))
    return path


def test_inject_fit_measures_the_judge_held_out(tmp_path: Path) -> None:
    locomo = rows_file(tmp_path / "locomo.json", "locomo", ["c1", "c2", "c3"])
    memaware = rows_file(tmp_path / "memaware.json", "memaware", ["memaware"])
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "signet", "bench", "inject-fit", str(locomo), str(memaware),
         "--json"], capture_output=True, text=True, env=env, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert set(data) == {"cosine", "cosine+margin", "cosine+margin+lead+rank", "all", "curve"}
    table = data["all"]
    assert set(table) == {"locomo -> memaware", "memaware -> locomo",
                          "locomo: one conversation left out", "all (fitted on everything)"}
    held = table["locomo -> memaware"]["memaware"]
    # Separable data: every positive injects its one relevant memory and nothing else, no
    # negative injects anything; one line a prompt balances hit and precision best.
    assert table["locomo -> memaware"]["k"] == 1
    assert held["groups"]["temporal"]["context_hit"] == 1.0
    assert held["precision"] == 1.0
    assert held["negatives"]["hard: other"]["false_injection_rate"] == 0.0
    assert len(table["locomo: one conversation left out"]["floor"]) == 3
    assert len(table["all (fitted on everything)"]["coefficients"]) == 1 + len(FEATURES)
    # The trade-off held out, at every point (memory floor / k) of the grid.
    assert set(data["curve"]) == {f"{m} / {k}" for m, k in POINTS}
    assert data["curve"]["0.01 / 1"]["memaware"]["precision"] == 1.0


def test_inject_fit_refuses_rows_of_other_features(tmp_path: Path) -> None:
    bad = tmp_path / "rows.json"
    bad.write_text(json.dumps({"benchmark": "locomo", "features": ["cosine"], "prompts": []}))
    done = subprocess.run(
        [sys.executable, "-m", "signet", "bench", "inject-fit", str(bad)],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 1 and "other features" in done.stderr
