"""The confidence calibration: the logistic fit recovers a known model, and the trade-off
counts what a floor drops and removes."""

from __future__ import annotations

import math
import random

from signet.bench.calibration import Row, fit, negatives, tradeoff
from signet.recall.confidence import Model


def test_fit_recovers_the_model_that_made_the_labels() -> None:
    rng = random.Random(7)
    truth = Model(-3.0, 2.0, 4.0)
    rows = []
    for i in range(6000):
        cosine, coverage = rng.random(), rng.random()
        label = int(rng.random() < truth(cosine, coverage))
        rows.append(Row("b", "m", f"q{i}", cosine, coverage, label))
    found = fit(rows, with_cosine=True)
    assert math.isclose(found.bias, -3.0, abs_tol=0.4)
    assert math.isclose(found.cosine, 2.0, abs_tol=0.4)
    assert math.isclose(found.coverage, 4.0, abs_tol=0.4)


def test_tradeoff_counts_gold_dropped_and_noise_removed() -> None:
    rows = [
        Row("b", "m", "q1", 0.9, 1.0, 1), Row("b", "m", "q1", 0.1, 0.0, 0),
        Row("b", "m", "q2", 0.1, 0.0, 1), Row("b", "m", "neg1", 0.2, 0.0, 0),
    ]
    line = next(t for t in tradeoff(rows, Model(-3.0, 2.0, 4.0)) if t["floor"] == 0.1)
    assert line["b"] == {"gold_dropped": 0.5, "questions_lost": 0.5, "noise_removed": 1.0,
                         "negatives_empty": 1.0}


def test_the_shared_negatives_are_package_data() -> None:
    queries = negatives()
    assert len(queries) >= 60 and all(isinstance(q, str) and q.strip() for q in queries)
