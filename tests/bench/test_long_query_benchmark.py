"""The long-query benchmark's questions: the dialogue turns before the first gold turn, then
the question; the quoted turns are skipped when scoring."""

from __future__ import annotations

from signet.bench.datasets import BenchDoc, BenchQuestion, with_dialogue


def test_each_question_is_preceded_by_the_turns_before_its_first_gold_turn() -> None:
    docs = [BenchDoc(f"D1:{i}", f"A: turn {i}", None, "c", "c/session_1") for i in range(1, 8)]
    docs.append(BenchDoc("D1:1", "B: other conversation", None, "other"))
    question = BenchQuestion("c/q0", "What happened?", "c", "single-hop", frozenset({"D1:6", "D1:7"}))
    (long,) = with_dialogue(docs, [question], turns=3)
    assert long.text == "A: turn 3\nA: turn 4\nA: turn 5\nWhat happened?"
    assert long.quoted == {"D1:3", "D1:4", "D1:5"} and long.gold == question.gold
    (short,) = with_dialogue(docs, [BenchQuestion("c/q1", "Q?", "c", "temporal", frozenset({"D1:1"}))], 3)
    assert short.text == "Q?" and short.quoted == frozenset()

