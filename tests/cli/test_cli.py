"""The `signet` CLI, run as real subprocesses (`python -m signet ...`) against a tmp workspace.

Every test points SIGNET_PORT at a free port where nothing listens, so the CLI falls back to
opening the store in-process; the daemon tests at the end start a real daemon on such a port
and check that the CLI goes through it. Embeddings and the pipeline are off, for speed and
steady counts, except in the test that checks which commands use the configured embedder (a
loopback fake embedding server).
"""

from __future__ import annotations

import json
import os
import re
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from fakes.embed_server import FakeEmbedServer

# No embeddings, for speed; no pipeline, so a daemon's workers never add derived memories
# while a test counts them.
NO_EMBEDDINGS = "embedding:\n  provider: none\nmemory:\n  pipelineV2:\n    enabled: false\n"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Cli:
    """Runs `python -m signet` with this workspace's environment."""

    def __init__(self, workspace: Path, port: int) -> None:
        self.workspace = workspace
        self.env = {
            **os.environ,
            "SIGNET_WORKSPACE": str(workspace),
            "SIGNET_PORT": str(port),
            "HOME": str(workspace.parent),
            "OMP_NUM_THREADS": "1",
            "COLUMNS": "200",
        }

    def run(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "signet", *args], env=self.env, input=stdin,
            capture_output=True, text=True, timeout=120,
        )

    def ok(self, *args: str, stdin: str | None = None) -> str:
        done = self.run(*args, stdin=stdin)
        assert done.returncode == 0, f"signet {' '.join(args)} failed: {done.stderr}"
        return done.stdout

    def json(self, *args: str) -> Any:
        return json.loads(self.ok("--json", *args))

    def fails(self, *args: str, code: int = 1) -> str:
        done = self.run(*args)
        assert done.returncode == code, (done.returncode, done.stdout, done.stderr)
        assert done.stdout == ""
        return done.stderr


@pytest.fixture
def cli(tmp_path: Path) -> Iterator[Cli]:
    workspace = tmp_path / "agents"
    workspace.mkdir()
    (workspace / "agent.yaml").write_text(NO_EMBEDDINGS, encoding="utf-8")
    yield Cli(workspace, free_port())


@pytest.fixture
def ready(cli: Cli) -> Cli:
    cli.ok("init")
    return cli


def tables(db: Path) -> set[str]:
    with sqlite3.connect(db) as conn:
        return {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}


# --- init -----------------------------------------------------------------------------------


def test_init_creates_the_workspace_and_database_and_is_idempotent(cli: Cli) -> None:
    first = cli.json("init")
    db = cli.workspace / "memory" / "memories.db"
    assert str(db) in first["created"] and str(cli.workspace / "AGENTS.md") in first["created"]
    assert str(cli.workspace / "agent.yaml") in first["kept"]  # the test's own file survives
    assert "memories" in tables(db)

    second = cli.ok("init")
    assert "0 created" in second
    again = cli.json("init")
    assert again["created"] == [] and str(db) in again["kept"]
    assert (cli.workspace / "agent.yaml").read_text("utf-8") == NO_EMBEDDINGS


def test_init_path_option_chooses_another_directory(cli: Cli, tmp_path: Path) -> None:
    other = tmp_path / "elsewhere"
    report = cli.json("init", "--path", str(other))
    assert report["workspace"] == str(other)
    assert (other / "memory" / "memories.db").is_file()
    assert not (cli.workspace / "memory").exists()


# --- the life of one memory -----------------------------------------------------------------


def test_an_in_process_get_is_an_access_written_before_the_process_exits(ready: Cli) -> None:
    """No daemon: `signet get` opens the store itself; the access it records off the read path
    is written when the app closes, so the next process sees it (a list is no access)."""
    memory_id = ready.json("remember", "The deploy key lives in the vault")["id"]
    assert ready.json("get", memory_id)["access_count"] == 0
    ready.json("get", memory_id)
    (item,) = ready.json("list")["items"]
    assert item["access_count"] == 2 and item["last_accessed"] is not None


def test_a_memory_goes_through_remember_get_list_recall_modify_forget_recover(ready: Cli) -> None:
    cli = ready
    made = cli.json(
        "remember", "Alice prefers green tea in the morning", "--type", "preference",
        "--tags", "drinks,alice", "--importance", "0.8", "--pinned", "--who", "alice",
    )
    memory_id = made["id"]
    assert made["deduped"] is False and made["memory"]["tags"] == ["drinks", "alice"]

    shown = cli.ok("get", memory_id)
    assert memory_id in shown and "green tea" in shown and "preference" in shown
    assert cli.json("get", memory_id)["importance"] == 0.8

    listing = cli.ok("list")
    assert memory_id[:8] in listing and memory_id not in listing  # short ids in tables
    assert cli.json("list")["total"] == 1

    found = cli.json("recall", "green tea")
    assert [hit["id"] for hit in found["results"]] == [memory_id]
    assert found["results"][0]["evidence"]["lexical"] is not None
    readable = cli.ok("recall", "green tea")
    assert memory_id[:8] in readable and re.search(r"0\.\d{3} .*lexical \d+\.\d{3}", readable)
    assert "semantic" not in readable  # no embedder: only the channels that found it show

    updated = cli.json("modify", memory_id, "--content", "Alice prefers oolong", "--version", "1")
    assert updated["version"] == 2 and updated["content"] == "Alice prefers oolong"
    stale = cli.fails("modify", memory_id, "--content", "Alice prefers coffee", "--version", "1")
    assert "version 2, not 1" in stale
    assert cli.json("get", memory_id)["content"] == "Alice prefers oolong"

    assert "pinned" in cli.fails("forget", memory_id)
    assert cli.json("get", memory_id)["is_deleted"] is False
    gone = cli.json("forget", memory_id, "--force", "--reason", "outdated")
    assert gone["is_deleted"] is True
    assert cli.json("list")["total"] == 0
    assert [m["id"] for m in cli.json("list", "--deleted")["items"]] == [memory_id]

    assert "Recovered" in cli.ok("recover", memory_id)
    assert cli.json("get", memory_id)["is_deleted"] is False

    events = cli.json("history", memory_id)["history"]
    assert [e["event"] for e in events] == ["created", "updated", "deleted", "recovered"]
    assert {e["changed_by"] for e in events} == {"cli"}
    assert events[2]["reason"] == "outdated"
    assert "recovered" in cli.ok("history", memory_id)


def test_remembering_the_same_content_twice_is_a_dedup_hit(ready: Cli) -> None:
    first = ready.json("remember", "The build runs on Fridays")
    second = ready.json("remember", "The build runs on Fridays")
    assert second["deduped"] is True and second["id"] == first["id"]
    assert "Already remembered" in ready.ok("remember", "The build runs on Fridays")


def test_remember_reads_content_from_stdin_with_a_dash(ready: Cli) -> None:
    ready.ok("remember", "-", stdin="Deploys happen from the release branch\n")
    assert "release branch" in ready.json("list")["items"][0]["content"]


def test_list_and_recall_filter_by_type_and_tags(ready: Cli) -> None:
    ready.ok("remember", "Use tabs in the Go code", "--type", "decision", "--tags", "go")
    ready.ok("remember", "Use spaces in the Python code", "--type", "preference", "--tags", "py")
    decisions = ready.json("list", "--type", "decision")["items"]
    assert [m["content"] for m in decisions] == ["Use tabs in the Go code"]
    tagged = ready.json("recall", "code", "--tags", "py")["results"]
    assert [m["content"] for m in tagged] == ["Use spaces in the Python code"]
    page = ready.json("list", "--limit", "1", "--offset", "1")
    assert page["limit"] == 1 and page["offset"] == 1 and len(page["items"]) == 1


def test_json_output_has_the_http_contract_shapes(ready: Cli) -> None:
    made = ready.json("remember", "Bob owns the billing service")
    assert set(made) == {"id", "deduped", "embedded", "memory"}
    assert set(ready.json("list")) == {"items", "total", "limit", "offset"}
    assert set(ready.json("history", made["id"])) == {"history"}
    recall = ready.json("recall", "billing")
    assert set(recall) == {"results", "query", "method", "meta"}
    assert {"score", "evidence", "adjustments"} <= set(recall["results"][0])
    status = ready.json("status")
    assert status["memories"] == 1 and status["daemon"] is None
    # --json also works after the command name.
    assert json.loads(ready.ok("get", made["id"], "--json"))["id"] == made["id"]


def test_status_reads_without_a_daemon(ready: Cli) -> None:
    ready.ok("remember", "Carol reviews the API changes")
    shown = ready.ok("status")
    assert "not running" in shown and str(ready.workspace) in shown


# --- bad input ------------------------------------------------------------------------------


BAD_INPUT: tuple[tuple[tuple[str, ...], str], ...] = (
    (("remember", "   "), "content is empty"),
    (("remember", "tea", "--type", "bogus"), "invalid type 'bogus'"),
    (("remember", "tea", "--importance", "3"), "importance must be a number between 0 and 1"),
    (("get", "no-such-id"), "memory no-such-id not found"),
    (("modify", "no-such-id", "--content", "x"), "memory no-such-id not found"),
    (("forget", "no-such-id"), "memory no-such-id not found"),
    (("recover", "no-such-id"), "memory no-such-id not found"),
    (("history", "no-such-id"), "memory no-such-id not found"),
    (("list", "--limit", "0"), "limit must be between 1 and 1000"),
)


def test_bad_input_exits_1_names_the_problem_and_writes_nothing(ready: Cli) -> None:
    # One workspace for every case (each CLI run is a process start): a case that wrote
    # anything shows up in the final count.
    for args, problem in BAD_INPUT:
        assert problem in ready.fails(*args), args
    assert ready.json("list", "--deleted")["total"] == 0
    with sqlite3.connect(ready.workspace / "memory" / "memories.db") as conn:
        assert conn.execute("SELECT count(*) FROM memory_history").fetchone()[0] == 0


def test_modify_without_changes_and_an_invalid_type_change_fail(ready: Cli) -> None:
    memory_id = ready.json("remember", "Dana runs the on-call rota")["id"]
    assert "no changes" in ready.fails("modify", memory_id)
    assert "invalid type" in ready.fails("modify", memory_id, "--type", "bogus")
    assert ready.json("get", memory_id)["version"] == 1


def test_usage_errors_exit_2(ready: Cli) -> None:
    assert "bogus" in ready.fails("recall", "tea", "--mode", "bogus", code=2)
    assert "Missing argument" in ready.fails("get", code=2)


def test_a_malformed_agent_yaml_is_reported_on_stderr(cli: Cli) -> None:
    (cli.workspace / "agent.yaml").write_text("embedding: [1, 2\n", encoding="utf-8")
    assert "agent.yaml" in cli.fails("status")


# --- which commands use the configured embedder ---------------------------------------------


def test_in_process_commands_use_the_configured_embedder_only_where_vectors_matter(
    cli: Cli,
) -> None:
    with FakeEmbedServer(dimensions=32) as server:
        (cli.workspace / "agent.yaml").write_text(
            "embedding:\n  provider: ollama\n  model: fake\n  dimensions: 32\n"
            f"  base_url: {server.url}\n",
            encoding="utf-8",
        )
        cli.ok("init")
        memory_id = cli.json("remember", "Erin maintains the deploy scripts")["id"]
        with sqlite3.connect(cli.workspace / "memory" / "memories.db") as conn:
            jobs = {row[0] for row in conn.execute("SELECT job_type FROM memory_jobs")}
        assert "embed" in jobs  # a remote embedder embeds later, in the worker
        for args in (("get", memory_id), ("list",), ("history", memory_id),
                     ("recall", "deploy", "--mode", "keyword")):
            cli.ok(*args)
        assert server.requests == []
        cli.ok("recall", "deploy scripts")
        assert [r.json["input"] for r in server.requests] == [["deploy scripts"]]
        assert cli.json("status")["embedder"]["model"] == "fake"


def test_without_a_daemon_a_remembered_memory_is_found_by_meaning_at_once(cli: Cli) -> None:
    """No embed worker runs in the CLI's process: with the bundled model, its writes embed on
    the write path (a deferred vector would wait for the next daemon start)."""
    (cli.workspace / "agent.yaml").write_text("embedding:\n  provider: local\n", encoding="utf-8")
    cli.ok("init")
    made = cli.json("remember", "The quarterly invoices are archived in the blue cabinet")
    assert made["embedded"] is True
    found = cli.json("recall", "where do the invoices get filed", "--mode", "vector")
    assert [r["id"] for r in found["results"]][:1] == [made["id"]]


# --- with a running daemon ------------------------------------------------------------------


def wait_until_healthy(cli: Cli, proc: subprocess.Popen[bytes], output: Path) -> None:
    url = f"http://127.0.0.1:{cli.env['SIGNET_PORT']}/health"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"the daemon exited: {output.read_text('utf-8', 'replace')}")
        try:
            body = httpx.get(url, timeout=0.5).json()
            if body.get("pid") == proc.pid and not body.get("starting"):
                return
        except (httpx.HTTPError, ValueError):
            pass
        time.sleep(0.1)
    pytest.fail(f"the daemon did not answer: {output.read_text('utf-8', 'replace')}")


@pytest.fixture
def daemon(ready: Cli) -> Iterator[subprocess.Popen[bytes]]:
    """`signet daemon start --foreground` on the workspace's free port."""
    output = ready.workspace.parent / "daemon.out"
    with output.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "signet", "daemon", "start", "--foreground"],
            env=ready.env, stdout=out, stderr=subprocess.STDOUT,
        )
    try:
        wait_until_healthy(ready, proc, output)
        yield proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def test_the_cli_goes_through_a_running_daemon(
    ready: Cli, daemon: subprocess.Popen[bytes]
) -> None:
    cli = ready
    status = cli.json("status")
    assert status["daemon"]["pid"] == daemon.pid
    assert status["daemon"]["port"] == int(cli.env["SIGNET_PORT"])
    assert f"pid {daemon.pid}" in cli.ok("status")

    made = cli.json("remember", "Grace deploys on Tuesdays", "--tags", "ops", "--pinned")
    assert set(made) == {"id", "deduped", "embedded", "memory"}
    memory_id = made["id"]
    assert cli.json("get", memory_id)["tags"] == ["ops"]
    assert [h["id"] for h in cli.json("recall", "deploys")["results"]] == [memory_id]
    assert cli.json("list", "--tags", "ops")["total"] == 1

    # The daemon's error JSON comes back as the same messages and exit code as in-process.
    assert cli.json("modify", memory_id, "--importance", "0.9", "--version", "1")["version"] == 2
    assert "version 2, not 1" in cli.fails("modify", memory_id, "--content", "x", "--version", "1")
    assert "pinned" in cli.fails("forget", memory_id)
    assert "memory no-such-id not found" in cli.fails("get", "no-such-id")
    assert "invalid type" in cli.fails("remember", "tea", "--type", "bogus")
    assert cli.json("forget", memory_id, "--force")["is_deleted"] is True
    assert cli.json("list")["total"] == 0
    assert [m["id"] for m in cli.json("list", "--deleted")["items"]] == [memory_id]
    assert cli.json("recover", memory_id)["is_deleted"] is False

    events = cli.json("history", memory_id)["history"]
    assert [e["event"] for e in events] == ["created", "updated", "deleted", "recovered"]
    assert {e["changed_by"] for e in events} == {"cli"}  # sent as X-Signet-Actor
    # The requests reached the daemon: its access log has them.
    logs = cli.ok("daemon", "logs", "-n", "500")
    assert "/api/memory/remember" in logs and f"/api/memory/{memory_id}/recover" in logs


def test_daemon_status_and_stop_control_the_running_daemon(
    ready: Cli, daemon: subprocess.Popen[bytes]
) -> None:
    info = ready.json("daemon", "status")
    assert info["running"] is True and info["pid"] == daemon.pid and info["healthy"] is True
    assert "yes" in ready.ok("daemon", "status")
    assert "Daemon stopped" in ready.ok("daemon", "stop")
    assert daemon.wait(timeout=15) is not None
    assert ready.json("daemon", "status")["running"] is False
    assert ready.json("status")["daemon"] is None  # back to the store in-process
    assert "No daemon was running" in ready.ok("daemon", "stop")


def test_a_daemon_serving_another_workspace_is_not_used(
    ready: Cli, daemon: subprocess.Popen[bytes], tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "agent.yaml").write_text(NO_EMBEDDINGS, encoding="utf-8")
    ready.ok("--workspace", str(other), "init")
    ready.ok("remember", "Heidi owns the first workspace")
    status = ready.json("--workspace", str(other), "status")
    assert status["workspace"] == str(other) and status["daemon"] is None
    assert status["memories"] == 0


def test_daemon_start_runs_it_detached_until_stop(ready: Cli) -> None:
    started = ready.json("daemon", "start")
    try:
        assert ready.json("status")["daemon"]["pid"] == started["pid"]
        assert "already running" in ready.fails("daemon", "start")
    finally:
        ready.run("daemon", "stop")
    assert ready.json("daemon", "status")["running"] is False
