"""Two daemons' extraction workers on one PostgreSQL database: each job is processed once.

Two apps are opened on the same database (as two daemons would be, each with its own
workspace folder) and their extraction workers run at the same time in two threads against the
fake LLM server. The fake model holds the first extraction call until a second one arrives, so
the test proves that both workers were inside a job at once, on different jobs (the lease is
`FOR UPDATE SKIP LOCKED`, store/postgres/jobs.py), and that every job still ran exactly once.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from worker_support import EXTRACTION_MARK, Script, http_llm, job_rows, open_app, pipeline_config
from worker_support import query as db_query

from fakes.llm_server import FakeLLMServer, Reply, prompt_of

N = 6


class HoldFirstExtraction:
    """The script's answers, with the first extraction call held until a second one arrives."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.lock = threading.Lock()
        self.extractions: list[str] = []
        self.second = threading.Event()

    def __call__(self, request: Any) -> Reply:
        prompt = prompt_of(request)
        if EXTRACTION_MARK in prompt:
            with self.lock:
                self.extractions.append(prompt.split("Text:\n", 1)[-1])
                first = len(self.extractions) == 1
                if len(self.extractions) == 2:
                    self.second.set()
            if first:
                self.second.wait(timeout=15)
        with self.lock:  # Script records its calls in a plain list
            return self.script(request)


def test_two_workers_on_one_database_process_each_job_once(tmp_path: Path, pg_url: str) -> None:
    script = Script(facts={
        f"Note {i}:": [{"content": f"The user's project number {i} is written in Rust",
                        "confidence": 0.9}]
        for i in range(N)
    })
    responder = HoldFirstExtraction(script)
    with FakeLLMServer(responder=responder) as server:
        apps = [open_app(pipeline_config(tmp_path / name, hints=False, store_url=pg_url),
                         http_llm(server)) for name in ("a", "b")]
        try:
            for i in range(N):
                apps[i % 2].remember(f"Note {i}: the project number {i} is written in Rust.")
            done = [0, 0]

            def run(k: int) -> None:
                done[k] = apps[k].run_pipeline_until_idle(only=["extract"])

            threads = [threading.Thread(target=run, args=(k,)) for k in (0, 1)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=60)
            assert responder.second.is_set(), "the two workers never held jobs at once"
            assert all(d > 0 for d in done)

            ended = [(status, attempts) for status, attempts, _, _ in job_rows(apps[0], "extract")]
            assert ended == [("completed", 1)] * N  # each leased once, by one of the two
            # Each source was extracted once, and each fact written once.
            assert sorted(responder.extractions) == sorted(
                f"Note {i}: the project number {i} is written in Rust." for i in range(N)
            )
            facts = db_query(apps[1], "SELECT content FROM memories WHERE source_type = ?"
                             " ORDER BY content", "pipeline")
            assert facts == sorted(
                (f"The user's project number {i} is written in Rust",) for i in range(N)
            )
        finally:
            for app in apps:
                app.close()
