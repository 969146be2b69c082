"""`signet bench loo`'s verdict beside its noise: a group below the best single mode by a
question or two is told apart from one below it by more than chance explains."""

from __future__ import annotations

from signet.bench.datasets import BenchQuestion
from signet.bench.loo import HELD_OUT, Run, format_reports, report, sign_test


def _run(tier: str, n: int, lost: int) -> tuple[Run, dict[str, list[str]]]:
    """n questions of one MemAware tier, gold "g<i>": the vector mode finds each first; the
    default misses `lost` of them (ranking it second) and bm25 misses them all."""
    questions = [BenchQuestion(f"q{i}", "", "memaware", tier, frozenset({f"g{i}"}))
                 for i in range(n)]
    vector = {q.qid: [f"g{i}", "x"] for i, q in enumerate(questions)}
    bm25 = {q.qid: ["x", "y"] for q in questions}
    held = {q.qid: (["x", f"g{i}"] if i < lost else [f"g{i}", "x"])
            for i, q in enumerate(questions)}
    run = Run("memaware", questions, {"bm25": bm25, "vector": vector, "lead=0": held})
    return run, held


def test_the_sign_test_of_flips() -> None:
    assert sign_test(0, 0) == 1.0
    assert sign_test(1, 0) == 1.0
    assert sign_test(0, 6) == 2 / 64
    assert sign_test(5, 5) == 1.0


def test_a_shortfall_of_one_question_is_within_noise_and_of_many_is_not() -> None:
    run, held = _run("easy", 40, lost=1)
    rep = report(run, held, {"fit": "lead=0"})
    assert rep["meets"] == {"easy": False, "all": False}
    assert rep["within_noise"] == {"easy": True, "all": True}
    assert rep["noise"]["easy"]["against"] == "vector"
    assert (rep["noise"]["easy"]["hit1_won"], rep["noise"]["easy"]["hit1_lost"]) == (0, 1)
    assert "| NO, within noise |" in format_reports([{"split": "s", **rep}])

    run, held = _run("easy", 40, lost=12)
    rep = report(run, held, {"fit": "lead=0"})
    assert rep["within_noise"] == {"easy": False, "all": False}
    assert rep["noise"]["easy"]["hit1_p"] < 0.05 and rep["noise"]["easy"]["mrr_ci95"][1] < 0
    assert "| NO |" in format_reports([{"split": "s", **rep}])
    assert rep["scores"][HELD_OUT]["easy"]["Hit@1"] == 28 / 40
