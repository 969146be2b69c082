"""The loaders, metrics and BM25 reference on samples of the real development files.

tests/data holds a small sample of each benchmark in its original format (tests/data/README.md
says where each comes from and under which licence), so these run on any clone. The checks of
the whole development data (its size, and that plain BM25 reproduces the published baselines)
are `signet bench baseline`, run where the data is; here `verify`, which that command runs, is
shown to report what a sample lacks.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from signet.bench.bm25_reference import rank, verify
from signet.bench.datasets import load_locomo, load_memaware
from signet.bench.metrics import locomo_groups, memaware_groups, score

DATA = Path(__file__).resolve().parents[1] / "data"
LOCOMO = DATA / "locomo" / "locomo-dev.json"
SESSIONS = DATA / "memaware" / "sessions"
QUESTIONS = DATA / "memaware" / "questions-dev.json"


def test_the_locomo_sample_loads_whole_and_bm25_finds_its_evidence() -> None:
    docs, questions = load_locomo(LOCOMO)
    assert {d.group for d in docs} == {q.group for q in questions} == {"conv-a", "conv-b"}
    assert len(docs) == 18 and len(questions) == 7  # two questions lack a valid evidence turn
    keys = {(d.group, d.key) for d in docs}
    assert all((q.group, k) in keys for q in questions for k in q.gold)
    assert all(d.event_at and d.event_at[4] == "-" and "T" in d.event_at for d in docs)
    assert any("[image: a photo of a lopsided clay bowl" in d.text for d in docs)

    bare, _ = load_locomo(LOCOMO, captions=False)
    assert not any("[image:" in d.text for d in bare)
    ranked, _ = rank(bare, questions)
    result = score(questions, ranked, locomo_groups(questions))
    assert result["cat1-4"]["n"] == 6 and result["adversarial"]["n"] == 1
    assert result["single-hop"]["Hit@1"] == 1.0  # each names its turn's rare words
    assert result["cat1-4"]["Hit@10"] == 1.0  # a conversation has fewer than 10 turns a word


def test_the_memaware_sample_loads_whole_leaks_no_ids_and_bm25_finds_the_easy_ones() -> None:
    docs, questions = load_memaware(SESSIONS, QUESTIONS, unit="session")
    session_ids = {d.key for d in docs}
    assert len(session_ids) == len(docs) == 22
    assert len({k for q in questions for k in q.gold} & session_ids) == 4  # every gold session
    assert {q.category for q in questions} == {"easy", "medium", "hard"}
    for unit in ("window", "message"):
        unit_docs, _ = load_memaware(SESSIONS, QUESTIONS, unit=unit)
        assert {d.key for d in unit_docs} <= session_ids
        assert not any("answer_" in d.text or "## Session" in d.text for d in unit_docs)
    assert not any("answer_" in d.text or "## Session" in d.text for d in docs)

    ranked, _ = rank(docs, questions)
    result = score(questions, ranked, memaware_groups(questions))
    assert result["easy"]["Hit@1"] == 1.0  # easy requests share words with their session


def test_verify_reports_what_a_sample_lacks_against_the_whole_data() -> None:
    problems = verify(DATA)
    assert "LoCoMo: 7 questions with evidence, expected >= 990" in problems
    assert "MemAware: 22 sessions (22 ids), expected > 1000" in problems
    assert not any("leaks" in p or "no document" in p for p in problems)


def test_signet_bench_baseline_names_the_folder_it_did_not_find(tmp_path: Path) -> None:
    missing = tmp_path / "bench-data"
    done = subprocess.run(
        [sys.executable, "-m", "signet", "bench", "baseline", "--data", str(missing)],
        env={**os.environ, "OMP_NUM_THREADS": "1"}, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 1
    assert f"benchmark data not found at {missing}" in done.stderr
