"""The confidence calibration: the logistic fit recovers a known model, and the trade-off
counts what a floor drops and removes."""

from __future__ import annotations

import math
import random

from signet.bench.calibration import Row, fit, heldout, negatives, tradeoff
from signet.bench.confidence_features import compare
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


def test_heldout_fits_on_one_part_and_measures_on_another() -> None:
    """The floor comes from the training part's noise; the held-out part's numbers are its
    own: here the second benchmark's noise sits higher, so the floor removes less of it."""
    rng = random.Random(11)
    rows = []
    for bench, noise_height in (("locomo", 0.1), ("memaware", 0.5)):
        for i in range(400):
            group = f"conv-{i % 2}" if bench == "locomo" else ""
            rows.append(Row(bench, "m", f"q{i}", 0.8 + 0.2 * rng.random(), 0.8, 1, group))
            rows.append(Row(bench, "m", f"neg{i}", noise_height * rng.random(), 0.0, 0, group))
    out = heldout(rows, with_cosine=True, targets=(0.95,))
    splits = {h["split"]: h for h in out}
    assert set(splits) == {"locomo -> memaware", "memaware -> locomo",
                           "locomo: others -> conv-0", "locomo: others -> conv-1"}
    forward = splits["locomo -> memaware"]
    assert forward["fit_noise_removed"] >= 0.95 and forward["fit_gold_dropped"] == 0.0
    assert forward["noise_removed"] < 0.5  # MemAware's higher noise mostly passes
    assert splits["memaware -> locomo"]["noise_removed"] == 1.0
    assert splits["locomo: others -> conv-1"]["noise_removed"] >= 0.9


def test_a_candidate_feature_is_judged_on_data_it_was_not_fitted_on() -> None:
    """A feature that truly marks the answers lowers the held-out gold dropped; `rank`, which
    the noise shares with the answers here, does not."""
    rng = random.Random(5)
    rows = []
    for bench in ("locomo", "memaware"):
        for i in range(600):
            group = f"conv-{i % 3}" if bench == "locomo" else ""
            marked = rng.random() < 0.8
            cov = 0.3 + 0.4 * rng.random()
            rows.append(Row(bench, "m", f"q{i}", 0.0, cov, 1, group,
                            {"context": float(marked), "rank": 0.0}))
            rows.append(Row(bench, "m", f"neg{i}", 0.0, 0.3 + 0.4 * rng.random(), 0, group,
                            {"context": 0.0, "rank": 0.0}))
    table = {f["features"]: f for f in compare(rows, with_cosine=False)}
    base, context = table["base"], table["+context"]
    assert context["locomo_memaware"][0] < base["locomo_memaware"][0] - 0.3
    assert context["by_conversation"] < base["by_conversation"] - 0.3
    assert table["+rank"]["memaware_locomo"][0] >= base["memaware_locomo"][0] - 0.05
