"""The learned combiner's fit (bench/combiner_fit.py): it learns which evidence finds the gold
among a question's candidates and ranks held-out questions by it, its page is cut where recall
cuts it, and its probabilities are judged by their AUC."""

from __future__ import annotations

from signet.bench.combiner_fit import auc, fit, ranked, top_probabilities
from signet.bench.datasets import BenchQuestion
from signet.bench.loo import Run
from signet.recall.combine import FEATURES, MODEL


def _candidate(key: str, **values: float) -> dict[str, object]:
    return {"keys": [key], **dict.fromkeys(FEATURES, 0.0), **values}


def _run(questions: int) -> Run:
    # The default page puts a decoy first; the gold is the candidate the dense side is sure of.
    qs, candidates = [], {}
    for i in range(questions):
        qid = f"q{i}"
        qs.append(BenchQuestion(qid, "", "conv", "single-hop", frozenset({f"gold{i}"})))
        cosine = 0.5 + 0.01 * (i % 7)
        candidates[qid] = [
            _candidate(f"decoy{i}", default_rr=1.0, lexical=1.0, cosine=cosine - 0.2),
            _candidate(f"gold{i}", default_rr=0.5, lexical=0.6, cosine=cosine),
            *(_candidate(f"other{i}-{j}", default_rr=1 / (j + 3), cosine=cosine - 0.3)
              for j in range(12)),
        ]
    return Run("locomo", qs, {}, candidates)


def test_the_fit_learns_the_evidence_that_finds_the_gold_and_ranks_unseen_questions() -> None:
    train, test = _run(40), _run(10)
    weights = fit([(train, [q.qid for q in train.questions])])
    assert len(weights) == len(MODEL)
    assert weights[MODEL.index("cosine_gap")] > 0 or weights[MODEL.index("cosine")] > 0
    out = ranked(test, [q.qid for q in test.questions], weights)
    assert all(keys[0] == f"gold{i}" for i, keys in enumerate(out.values()))
    assert all(len(keys) == 10 for keys in out.values())  # LoCoMo's page: 10 hits


def test_weight_on_the_default_page_alone_gives_the_default_ranking_back() -> None:
    run = _run(3)
    default = [1.0 if name == "default_rr" else 0.0 for name in MODEL]
    out = ranked(run, ["q0"], default)
    assert out["q0"][:3] == ["decoy0", "gold0", "other0-0"]
    shares = top_probabilities(run, ["q0"], default, (0.0, *default))
    share, pointwise = shares["q0"]
    assert 0 < share < 1 and 0.5 < pointwise < 1


def test_auc_counts_pairs_ordered_right_and_ties_as_half() -> None:
    assert auc([0.9, 0.8, 0.1], [True, True, False]) == 1.0
    assert auc([0.1, 0.9], [True, False]) == 0.0
    assert auc([0.5, 0.5], [True, False]) == 0.5
