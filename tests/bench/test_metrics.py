"""Retrieval metrics, grouping, percentiles and the table, checked against hand-computed cases."""

from __future__ import annotations

import pytest

from signet.bench.datasets import BenchQuestion
from signet.bench.metrics import (
    dedupe,
    format_table,
    locomo_groups,
    memaware_groups,
    percentile,
    question_scores,
    score,
)
from signet.errors import InvalidInput


def _q(qid: str, gold: set[str], category: str = "easy", group: str = "g") -> BenchQuestion:
    return BenchQuestion(qid=qid, text=qid, group=group, category=category, gold=frozenset(gold))


def test_a_hit_at_rank_three() -> None:
    s = question_scores(frozenset({"g"}), ["a", "b", "g", "c"])
    assert s["Hit@1"] == 0.0
    assert s["Hit@5"] == 1.0
    assert s["Hit@10"] == 1.0
    assert s["MRR"] == pytest.approx(1 / 3)
    assert s["Recall@10"] == 1.0
    assert s["All@10"] == 1.0


def test_duplicate_keys_pool_into_their_first_rank() -> None:
    assert dedupe(["a", "a", "b", "a", "g"]) == ["a", "b", "g"]
    s = question_scores(frozenset({"g"}), ["a", "a", "b", "a", "g"])
    assert s["MRR"] == pytest.approx(1 / 3)  # rank 5 in the raw list, rank 3 once pooled


def test_pooling_lets_a_gold_key_beyond_ten_raw_results_count() -> None:
    ranked = ["a"] * 12 + ["g"]
    assert question_scores(frozenset({"g"}), ranked)["Hit@5"] == 1.0


def test_recall_at_ten_with_two_gold_keys() -> None:
    ranked = [f"x{i}" for i in range(11)]
    ranked[3] = "g1"
    ranked.append("g2")  # rank 12
    s = question_scores(frozenset({"g1", "g2"}), ranked)
    assert s["Recall@10"] == 0.5
    assert s["Hit@10"] == 1.0
    assert s["All@10"] == 0.0
    assert s["MRR"] == pytest.approx(1 / 4)


def test_all_at_ten_needs_every_gold_key() -> None:
    s = question_scores(frozenset({"g1", "g2"}), ["g2", "x", "g1"])
    assert (s["Recall@10"], s["All@10"], s["Hit@1"]) == (1.0, 1.0, 1.0)


def test_no_gold_returned_scores_zero_everywhere() -> None:
    s = question_scores(frozenset({"g"}), ["a", "b"])
    assert s == {m: 0.0 for m in s}
    assert question_scores(frozenset({"g"}), [])["MRR"] == 0.0


def test_score_averages_each_group_and_counts_it() -> None:
    questions = [_q("q1", {"g"}), _q("q2", {"g"}), _q("q3", {"h"})]
    ranked = {"q1": ["g"], "q2": ["a", "g"], "q3": []}
    result = score(questions, ranked, {"two": ["q1", "q2"], "three": ["q1", "q2", "q3"]})
    assert result["two"]["Hit@1"] == 0.5
    assert result["two"]["MRR"] == pytest.approx(0.75)
    assert result["two"]["n"] == 2
    assert result["three"]["Hit@5"] == pytest.approx(2 / 3)
    assert result["three"]["n"] == 3


def test_score_without_groups_reports_all() -> None:
    result = score([_q("q1", {"g"})], {"q1": ["g"]})
    assert list(result) == ["all"]
    assert result["all"]["Hit@1"] == 1.0


def test_a_question_without_a_ranking_is_an_error_not_a_miss() -> None:
    with pytest.raises(InvalidInput, match="no ranking for question 'q2'"):
        score([_q("q1", {"g"}), _q("q2", {"g"})], {"q1": ["g"]})


def test_locomo_groups_put_categories_one_to_four_together() -> None:
    categories = ["single-hop", "adversarial", "temporal", "multi-hop", "single-hop"]
    questions = [_q(f"q{i}", {"g"}, c) for i, c in enumerate(categories)]
    groups = locomo_groups(questions)
    assert list(groups) == ["cat1-4", "single-hop", "multi-hop", "temporal", "adversarial"]
    assert sorted(groups["cat1-4"]) == ["q0", "q2", "q3", "q4"]
    assert groups["adversarial"] == ["q1"]


def test_memaware_groups_are_tiers_then_all() -> None:
    questions = [_q("a", {"g"}, "hard"), _q("b", {"g"}, "easy"), _q("c", {"g"}, "medium")]
    groups = memaware_groups(questions)
    assert groups == {"easy": ["b"], "medium": ["c"], "hard": ["a"], "all": ["a", "b", "c"]}


def test_grouping_rejects_a_category_it_does_not_know() -> None:
    with pytest.raises(InvalidInput, match="unknown category 'easy'"):
        locomo_groups([_q("a", {"g"}, "easy")])


def test_percentile_interpolates_linearly() -> None:
    assert percentile([4, 1, 3, 2], 50) == 2.5
    assert percentile(list(range(1, 101)), 95) == pytest.approx(95.05)
    assert percentile([7.0], 95) == 7.0
    assert (percentile([1, 9], 0), percentile([1, 9], 100)) == (1, 9)


def test_percentile_of_nothing_is_an_error() -> None:
    with pytest.raises(InvalidInput):
        percentile([], 50)
    with pytest.raises(InvalidInput):
        percentile([1.0], 101)


def test_the_table_puts_modes_side_by_side() -> None:
    bm25 = {
        "easy": {
            "Hit@1": 0.25,
            "Hit@5": 0.5,
            "Hit@10": 0.555,
            "Recall@10": 0.5,
            "MRR": 1 / 3,
            "All@10": 0.0,
            "n": 4.0,
        }
    }
    hybrid = {"easy": {**bm25["easy"], "Hit@10": 1.0}, "hard": {"Hit@1": 0.0, "n": 2.0}}
    table = format_table(
        {"bm25": bm25, "hybrid": hybrid},
        {"bm25": {"p50": 1.234, "p95": 5.0}, "hybrid": {"p50": 2.0, "p95": 9.5}},
    )
    lines = table.splitlines()
    assert [c.strip() for c in lines[0].strip("|").split("|")] == [
        "group",
        "metric",
        "bm25",
        "hybrid",
    ]
    assert lines[1].replace(" ", "").startswith("|---")
    assert lines[1].replace(" ", "").endswith(":|")
    cells = {tuple(c.strip() for c in line.strip("|").split("|")) for line in lines[2:]}
    assert ("easy", "n", "4", "4") in cells
    assert ("", "Hit@10", "55.5", "100.0") in cells
    assert ("", "MRR", "33.3", "33.3") in cells
    assert ("hard", "n", "-", "2") in cells
    assert ("latency", "p50 ms", "1.23", "2.00") in cells
    assert ("", "p95 ms", "5.00", "9.50") in cells
    assert len({len(line) for line in lines}) == 1  # aligned for the terminal
