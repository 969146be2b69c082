"""`signet bench locomo|memaware` end to end on tiny fixtures: a real subprocess, real ingest
through remember (the bundled local embedder), real recall, and the documented JSON shape."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

LOCOMO = [
    {
        "sample_id": "conv-x",
        "conversation": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a grey kitten named Pixel."},
                {"speaker": "Ben", "dia_id": "D1:2", "text": "Lovely! I started learning the cello."},
                {"speaker": "Ana", "dia_id": "D1:3", "text": "My sister moved to Lisbon last week."},
            ],
        },
        "qa": [
            {"question": "What is the name of Ana's kitten?", "answer": "Pixel",
             "evidence": ["D1:1"], "category": 4},
            {"question": "Which instrument is Ben learning?", "answer": "cello",
             "evidence": ["D1:2"], "category": 1},
            {"question": "Where did Ana's sister move?", "adversarial_answer": "Lisbon",
             "evidence": ["D1:3"], "category": 5},
        ],
    }
]

SESSIONS = {
    "2023-04-01.md": (
        "## Session answer_s1\nSession Date: 2023-04-01\n"
        "User: I redeem coupons with my Target loyalty card every week.\n"
        "Assistant: Nice, that adds up.\n\n"
        "## Session s2\nSession Date: 2023-04-01\n"
        "User: My ford mustang needs new tires soon.\nAssistant: Check the tread depth.\n"
    ),
}
QUESTIONS = [
    {"question_id": "q1", "difficulty": "easy", "question": "Where do I use my loyalty card coupons?",
     "answer": "Target", "answer_session_ids": ["answer_s1"], "should_recall": "x", "connection": "y"},
]


def run_bench(tmp_path: Path, *args: str, data: str | None = None) -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    if data is not None:
        env["SIGNET_BENCH_DATA"] = data
    done = subprocess.run(
        [sys.executable, "-m", "signet", "bench", *args, "--json"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_bench_locomo_on_a_tiny_file(tmp_path: Path) -> None:
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(LOCOMO))
    data = run_bench(tmp_path, "locomo", "--file", str(path), "--mode", "bm25,hybrid")
    assert set(data) >= {"bm25", "hybrid", "latency_ms"}
    for mode in ("bm25", "hybrid"):
        groups = data[mode]
        assert {"single-hop", "multi-hop", "adversarial", "cat1-4"} <= set(groups)
        assert groups["cat1-4"]["n"] == 2
        assert groups["cat1-4"]["Hit@10"] == 1.0  # three turns: every gold is in the top ten
        assert 0.0 <= groups["cat1-4"]["MRR"] <= 1.0
        assert set(data["latency_ms"][mode]) == {"p50", "p95"}


def test_bench_memaware_on_tiny_sessions(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    for name, text in SESSIONS.items():
        (sessions / name).write_text(text)
    questions = tmp_path / "questions.json"
    questions.write_text(json.dumps(QUESTIONS))
    data = run_bench(
        tmp_path, "memaware", "--sessions", str(sessions), "--questions", str(questions),
        "--mode", "bm25",
    )
    assert data["bm25"]["easy"]["Hit@1"] == 1.0
    assert data["bm25"]["all"]["n"] == 1


def bench_data(tmp_path: Path, *, locomo: bool = False, memaware: bool = False) -> str:
    """A SIGNET_BENCH_DATA folder holding the other benchmark's tiny file (hard negatives)."""
    root = tmp_path / "bench-data"
    (root / "locomo").mkdir(parents=True)
    (root / "memaware").mkdir()
    if locomo:
        (root / "locomo" / "locomo-dev.json").write_text(json.dumps(LOCOMO))
    if memaware:
        (root / "memaware" / "questions-dev.json").write_text(json.dumps(QUESTIONS))
    return str(root)


def test_bench_memaware_inject_scores_what_the_prompt_hook_injects(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    for name, text in SESSIONS.items():
        (sessions / name).write_text(text)
    questions = tmp_path / "questions.json"
    questions.write_text(json.dumps(QUESTIONS))
    negatives = tmp_path / "negatives.json"
    negatives.write_text(json.dumps(["How do I reverse a linked list in Rust?"]))
    rows = tmp_path / "rows.json"
    data = run_bench(
        tmp_path, "memaware", "--sessions", str(sessions), "--questions", str(questions),
        "--mode", "hybrid", "--inject", "--negatives", str(negatives), "--rows", str(rows),
        data=bench_data(tmp_path, locomo=True),
    )
    inject = data["inject"]
    easy = inject["easy"]
    assert easy["n"] == 1 and easy["context_hit"] in (0.0, 1.0)
    assert set(easy) >= {"tokens_per_injected", "injection_rate", "lines_per_injected"}
    assert easy["tokens_per_injected"] <= 800
    # Easy negatives and the hard ones (LoCoMo's questions of categories 1-4) apart.
    assert inject["negatives"]["easy"]["n"] == 1
    assert inject["negatives"]["hard: locomo"]["n"] == 2
    assert 0.0 <= inject["negatives"]["hard: locomo"]["false_injection_rate"] <= 1.0
    assert data["hybrid"]["easy"]["Hit@1"] == 1.0  # one ingest serves both
    kept = json.loads(rows.read_text())
    assert kept["benchmark"] == "memaware"
    assert sorted(p["kind"] for p in kept["prompts"]) == [
        "easy", "hard: locomo", "hard: locomo", "positive"]
    positive = next(p for p in kept["prompts"] if p["kind"] == "positive")
    # The gold session's window is a candidate, labelled relevant; a negative's never are.
    assert [c[0] for c in positive["candidates"]].count(1) == 1
    assert all(len(c) == 1 + len(kept["features"]) for c in positive["candidates"])
    assert not any(c[0] for p in kept["prompts"] if p["kind"] != "positive"
                   for c in p["candidates"])


def test_bench_locomo_inject_scores_what_the_prompt_hook_injects(tmp_path: Path) -> None:
    other = json.loads(json.dumps(LOCOMO[0]))
    other["sample_id"] = "conv-y"
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([LOCOMO[0], other]))
    negatives = tmp_path / "negatives.json"
    negatives.write_text(json.dumps(["How do I reverse a linked list in Rust?"]))
    data = run_bench(tmp_path, "locomo", "--file", str(path), "--mode", "hybrid", "--inject",
                     "--negatives", str(negatives), data=bench_data(tmp_path, memaware=True))
    inject = data["inject"]
    assert inject["cat1-4"]["n"] == 4 and inject["adversarial"]["n"] == 2
    assert inject["precision"] is None or 0.0 <= inject["precision"] <= 1.0
    negatives_of = inject["negatives"]
    assert negatives_of["easy"]["n"] == 2  # asked in both stores
    # Each store is asked the other conversation's two questions of categories 1-4, and
    # MemAware's one request.
    assert negatives_of["hard: other conversations"]["n"] == 4
    assert negatives_of["hard: memaware"]["n"] == 2


def test_bench_memaware_refuses_a_negatives_file_that_is_not_a_list(tmp_path: Path) -> None:
    bad = tmp_path / "negatives.json"
    bad.write_text('{"prompt": "x"}')
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "signet", "bench", "memaware", "--inject", "--negatives", str(bad)],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120,
    )
    assert done.returncode == 1 and "JSON list" in done.stderr


def test_bench_memaware_sessions_as_transcripts_compares_windows_transcripts_and_both(
    tmp_path: Path,
) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    for name, text in SESSIONS.items():
        (sessions / name).write_text(text)
    questions = tmp_path / "questions.json"
    questions.write_text(json.dumps(QUESTIONS))
    data = run_bench(
        tmp_path, "memaware", "--sessions", str(sessions), "--questions", str(questions),
        "--mode", "bm25", "--sessions-as-transcripts",
    )
    assert set(data["results"]) == {"windows/bm25", "transcripts/bm25", "both/bm25"}
    assert data["results"]["windows/bm25"]["easy"]["Hit@1"] == 1.0
    lineage = data["lineage"]["transcripts"]
    # Two one-turn sessions with nothing known: both are gated out, nothing to recall from.
    assert (lineage["sessions"], lineage["gate_skip_rate"]) == (2, 1.0)
    assert data["results"]["transcripts/bm25"]["easy"]["Hit@10"] == 0.0


def test_bench_sessions_reports_import_and_summary_throughput(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    for name, text in SESSIONS.items():
        (sessions / name).write_text(text)
    data = run_bench(tmp_path, "sessions", "--sessions", str(sessions), "--embedder", "none")
    assert (data["sessions"], data["messages"]) == (2, 4)
    assert data["import_sessions_per_s"] > 0 and data["summary_sessions_per_s"] > 0
    assert data["statuses"] == {"skipped": 2}



def test_bench_hooks_times_the_hook_process_against_a_daemon(tmp_path: Path) -> None:
    data = run_bench(tmp_path, "hooks", "--n", "30", "--runs", "3", "--embedder", "none")
    assert (data["memories"], data["runs"], data["embedder"]) == (30, 3, "none")
    assert 0 < data["p50_ms"] <= data["p95_ms"] <= data["max_ms"]
    assert data["cpu_p50_ms"] > 0 and data["target_p95_ms"] == 150.0
    assert 0 <= data["injected"] <= 3 and 0 <= data["over_budget"] <= 3
    assert data["daemon_down"]["printed"] == 0


def test_bench_loo_chooses_the_lead_without_the_held_out_questions(tmp_path: Path) -> None:
    # Two conversations, so one can be left out; the runs saved, then the report over them.
    second = json.loads(json.dumps(LOCOMO[0]).replace("conv-x", "conv-y"))
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([LOCOMO[0], second]))
    saved = tmp_path / "run.json"
    data = run_bench(tmp_path, "locomo", "--file", str(path), "--mode", "bm25,vector",
                     "--leads", "0,0.2,0.2/0.1", "--save", str(saved), "--candidates")
    assert {"bm25", "vector", "lead=0", "lead=0.2", "lead=0.2/0.1"} <= set(data)
    run = json.loads(saved.read_text())
    assert run["benchmark"] == "locomo" and len(run["questions"]) == 6
    assert set(run["ranked"]["lead=0.2"]) == {q["qid"] for q in run["questions"]}
    # The candidates open with the default's page, so the combiner is judged on what recall
    # would rank: ordered by their place on it, they give the default's ranking back.
    for qid, candidates in run["candidates"].items():
        page = sorted((c for c in candidates if c["default_rr"] > 0),
                      key=lambda c: -c["default_rr"])
        assert [k for c in page[:10] for k in c["keys"]] == run["ranked"]["lead=0.2"][qid]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "signet", "bench", "loo", str(saved), "--json"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600,
    )
    assert done.returncode == 0, done.stderr
    report, combined = json.loads(done.stdout)
    assert combined["split"] == "combiner, one LoCoMo conversation out"
    assert {"combiner (held out)", "lead rule (held out)", "bm25"} <= set(combined["scores"])
    assert set(combined["against_lead_rule"]) >= {"cat1-4", "adversarial"}
    assert report["split"] == "one LoCoMo conversation out"
    assert set(report["chosen"]) == {"conv-x", "conv-y"}
    assert set(report["chosen"].values()) <= {"lead=0", "lead=0.2", "lead=0.2/0.1"}
    assert set(report["scores"]) == {"bm25", "vector", "lead=0", "default (held out)"}
    assert set(report["meets"]) >= {"cat1-4", "adversarial"}


def test_bench_locomo_twice_prints_the_same_bytes(tmp_path: Path) -> None:
    # The sample holds turns of equal score: their order (memory ids, the clock's decay) must
    # not change between runs, nor anything else but the left-out timings.
    sample = Path(__file__).resolve().parents[1] / "data" / "locomo" / "locomo-dev.json"
    outputs = []
    for run in ("a", "b"):
        save = tmp_path / f"{run}.json"
        data = run_bench(tmp_path, "locomo", "--file", str(sample), "--mode", "all",
                         "--cache", str(tmp_path / "cache"), "--save", str(save), "--no-timings",
                         "--candidates")
        assert "latency_ms" not in data and data["ingest"] == {"docs": 18}
        outputs.append((json.dumps(data), save.read_bytes()))
    assert outputs[0] == outputs[1]


def test_bench_memaware_llm_runs_the_write_path_through_the_provider_and_caches_it(
    tmp_path: Path,
) -> None:
    """--llm: extraction, decisions, the graph and hints through a (fake) provider, one
    session at a time; every reply kept under <provider>/<model>/<session>.jsonl, so a second
    run asks the model nothing and ranks the same."""
    from fakes.llm_server import FakeLLMServer, prompt_of

    def model(request: dict) -> str:
        prompt = prompt_of(request)
        if "Extract the facts worth remembering" in prompt:
            facts = ([{"content": "The user shops at Target with a loyalty card.",
                       "type": "fact", "confidence": 0.9}] if "Target" in prompt else [])
            return json.dumps({"facts": facts, "entities": [
                {"source": "user", "relationship": "shops at", "target": "Target",
                 "confidence": 0.9}] if facts else []})
        if "New fact (" in prompt:
            return json.dumps({"action": "add", "confidence": 0.9, "reason": "new"})
        return json.dumps({"hints": ["where do I redeem coupons?", "which store card do I use?",
                                     "how do I save on groceries?"]})

    sessions = tmp_path / "sessions"
    sessions.mkdir()
    for name, text in SESSIONS.items():
        (sessions / name).write_text(text)
    questions = tmp_path / "questions.json"
    questions.write_text(json.dumps(QUESTIONS))
    cache = tmp_path / "llm-cache"
    with FakeLLMServer(responder=model) as server:
        args = ("memaware", "--sessions", str(sessions), "--questions", str(questions),
                "--mode", "bm25,full", "--embedder", "none", "--llm", "openai",
                "--llm-base-url", server.url, "--llm-model", "tiny", "--llm-cache", str(cache))
        first = run_bench(tmp_path, *args)
        asked = len(server.requests)
        second = run_bench(tmp_path, *args)
        assert len(server.requests) == asked  # all from the cache
    usage = first["llm"]
    # Per session: an extraction and hints for its window, and hints for the Target fact (no
    # decision call: nothing older to compare it with): 3 for answer_s1, 2 for s2.
    assert (usage["sessions"], usage["calls"], usage["cached"], asked) == (2, 5, 0, 5)
    assert usage["per_session"]["calls"] == 2.5 and usage["prompt_tokens"] > 0
    assert sorted(p.name for p in (cache / "openai" / "tiny").iterdir()) == [
        "answer_s1.jsonl", "s2.jsonl"]
    assert (second["llm"]["calls"], second["llm"]["cached"]) == (5, 5)
    assert second["full"] == first["full"] and first["full"]["easy"]["Hit@1"] == 1.0


def test_bench_coding_asks_a_projects_prompts_and_its_near_misses(tmp_path: Path) -> None:
    rows = tmp_path / "rows.json"
    data = run_bench(tmp_path, "coding", "--mode", "hybrid", "--no-cache", "--rows", str(rows))
    inject = data["inject"]
    assert inject["keyword"]["n"] == 15 and inject["paraphrase"]["n"] == 15
    assert data["hybrid"]["all"]["n"] == 30
    # Near-miss prompts about the same project are asked in its store beside the easy set.
    assert inject["negatives"]["hard: near-miss"]["n"] == 40
    assert inject["negatives"]["easy"]["n"] >= 100
    assert inject["precision"] is None or 0.0 <= inject["precision"] <= 1.0
    kept = json.loads(rows.read_text())
    assert kept["benchmark"] == "coding"
    positive = next(p for p in kept["prompts"] if p["kind"] == "positive")
    # Each row keeps the prompt and its candidates' text, for judges fitted offline.
    assert positive["prompt"] and len(positive["texts"]) == len(positive["candidates"])


def test_bench_coding_refuses_a_set_whose_gold_is_no_memory(tmp_path: Path) -> None:
    bad = tmp_path / "set.json"
    bad.write_text(json.dumps({
        "memories": [{"key": "m1", "text": "We use Go."}],
        "questions": [{"id": "q1", "form": "keyword", "prompt": "Go?", "gold": ["m9"]}],
        "near_miss": []}))
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "signet", "bench", "coding", "--data", str(bad)],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120,
    )
    assert done.returncode == 1 and "q1" in done.stderr
