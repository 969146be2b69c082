"""CLI papercuts, run as real subprocesses: `--json` errors are JSON on stderr; a read-only
command on a workspace that does not exist says so instead of creating one; the 8-character
ids the CLI prints are accepted wherever an id is; status says what extraction does."""

from __future__ import annotations

import json
import os
import re
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

NO_EMBEDDINGS = "embedding:\n  provider: none\nmemory:\n  pipelineV2:\n    enabled: false\n"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def signet(workspace: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SIGNET_WORKSPACE": str(workspace), "SIGNET_PORT": str(free_port()),
           "HOME": str(workspace.parent), "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "signet", *args], env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "agents"
    root.mkdir()
    (root / "agent.yaml").write_text(NO_EMBEDDINGS, encoding="utf-8")
    assert signet(root, "init").returncode == 0
    return root


# --- --json errors --------------------------------------------------------------------------


@pytest.mark.parametrize("args, code, exit_code", [
    (("--json", "get", "0" * 32), "not_found", 1),
    (("get", "0" * 32, "--json"), "not_found", 1),
    (("--json", "remember", ""), "invalid_input", 1),
    (("get", "--json"), "usage_error", 2),
    (("list", "--limit", "many", "--json"), "usage_error", 2),
    (("--json", "recall", "tea", "--mode", "bogus"), "usage_error", 2),
])
def test_json_errors_are_json_on_stderr_with_a_non_zero_exit(
    workspace: Path, args: tuple[str, ...], code: str, exit_code: int
) -> None:
    done = signet(workspace, *args)
    assert done.returncode == exit_code and done.stdout == ""
    error = json.loads(done.stderr)
    assert error["code"] == code and error["error"]


def test_an_os_error_about_a_named_path_is_a_message_not_a_traceback(workspace: Path) -> None:
    blocker = workspace / "a-file"
    blocker.write_text("not a folder")
    done = signet(workspace, "--json", "api", "spec", "--out", str(blocker / "spec.json"))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    error = json.loads(done.stderr)
    assert error["code"] == "os_error" and str(blocker / "spec.json") in error["error"]
    prose = signet(workspace, "api", "spec", "--out", str(blocker / "spec.json"))
    assert prose.returncode == 1 and prose.stderr.startswith("Error: Not a directory")


def test_without_json_errors_stay_prose(workspace: Path) -> None:
    done = signet(workspace, "get", "0" * 32)
    assert done.returncode == 1 and done.stderr.startswith("Error: memory")


# A byte that is not UTF-8, as the shell hands it over (Python keeps it as U+DCFF).
NOT_UTF8 = "p\udcff"


@pytest.mark.parametrize("args, names", [
    (("list", "--project", NOT_UTF8), "not valid UTF-8 text: 'p\\xff'"),
    (("list", "--tags", NOT_UTF8), "not valid UTF-8 text: 'p\\xff'"),
    (("get", NOT_UTF8), "not valid UTF-8 text: 'p\\xff'"),
    (("recall", "tea", "--project", NOT_UTF8), "not valid UTF-8 text: 'p\\xff'"),
    (("recall", NOT_UTF8), "query is not valid Unicode text"),
])
def test_an_argument_that_is_not_utf8_is_named_not_a_traceback(
    workspace: Path, args: tuple[str, ...], names: str
) -> None:
    done = signet(workspace, *args)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith("Error: ") and names in done.stderr, done.stderr
    as_json = signet(workspace, "--json", *args)
    assert as_json.returncode == 1 and json.loads(as_json.stderr)["code"] == "invalid_input"


@pytest.mark.parametrize("command", [("list",), ("graph", "entities"), ("session", "list")])
def test_an_offset_past_the_largest_sql_integer_is_named_not_an_overflow(
    workspace: Path, command: tuple[str, ...]
) -> None:
    done = signet(workspace, *command, "--offset", str(2**64))
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert re.search(r"offset (must be )?between 0 and 9223372036854775807", done.stderr), \
        done.stderr


@pytest.mark.parametrize("limit", ["-1", "0", "501", str(2**64)])
def test_jobs_list_refuses_a_limit_out_of_range_naming_it(workspace: Path, limit: str) -> None:
    done = signet(workspace, "jobs", "list", "--limit", limit)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert "limit must be between 1 and 500" in done.stderr, done.stderr


# --- read-only commands on a missing workspace ---------------------------------------------


@pytest.mark.parametrize("args", [
    ("status",), ("list",), ("get", "0" * 32), ("history", "0" * 32),
    ("recall", "tea", "--mode", "keyword"), ("graph", "entities"), ("jobs", "list"),
    ("documents", "list"), ("documents", "show", "0" * 32), ("connector", "list"),
    ("connector", "sync"), ("retention", "run", "--dry-run"), ("backup",),
    ("export", "{tmp}/bundle"), ("threads", "list"), ("lineage", "0" * 32),
    ("maintenance", "report"), ("maintenance", "run"), ("skill", "list"), ("skill", "show", "x"),
    ("skill", "remove", "x"),
])
def test_read_only_commands_on_a_missing_workspace_fail_and_create_nothing(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    typo = tmp_path / "typo"
    args = tuple(a.replace("{tmp}", str(tmp_path)) for a in args)
    done = signet(tmp_path / "agents", "--workspace", str(typo), *args)
    assert done.returncode == 1, done.stderr
    assert "signet init" in done.stderr and str(typo) in done.stderr
    assert not typo.exists()


def test_a_workspace_directory_without_a_database_is_not_given_one_by_list(tmp_path: Path) -> None:
    root = tmp_path / "agents"
    root.mkdir()
    (root / "agent.yaml").write_text(NO_EMBEDDINGS, encoding="utf-8")
    done = signet(root, "--json", "list")
    assert done.returncode == 1
    assert json.loads(done.stderr)["code"] == "workspace_missing"
    assert sorted(p.name for p in root.iterdir()) == ["agent.yaml"]


# --- short ids ------------------------------------------------------------------------------


def remember(workspace: Path, content: str) -> str:
    done = signet(workspace, "--json", "remember", content)
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["id"])


def test_every_command_taking_an_id_takes_the_8_character_prefix(tmp_path: Path) -> None:
    workspace = tmp_path / "agents"
    workspace.mkdir()  # the pipeline on (the default), so there are jobs to name
    (workspace / "agent.yaml").write_text("embedding:\n  provider: none\n", encoding="utf-8")
    assert signet(workspace, "init").returncode == 0
    memory_id = remember(workspace, "The billing service is written in Go")
    short = memory_id[:8]
    assert json.loads(signet(workspace, "--json", "get", short).stdout)["id"] == memory_id
    changed = signet(workspace, "--json", "modify", short, "--content",
                     "The billing service is written in Rust")
    assert json.loads(changed.stdout)["version"] == 2, changed.stderr
    events = json.loads(signet(workspace, "--json", "history", short).stdout)["history"]
    assert [e["event"] for e in events] == ["created", "updated"]
    assert json.loads(signet(workspace, "--json", "forget", short).stdout)["is_deleted"] is True
    assert json.loads(signet(workspace, "--json", "recover", short).stdout)["is_deleted"] is False
    [job] = json.loads(signet(workspace, "--json", "jobs", "list", "--type", "extract").stdout)["jobs"]
    shown = signet(workspace, "--json", "jobs", "show", job["id"][:8])
    assert json.loads(shown.stdout)["id"] == job["id"]


def test_an_ambiguous_prefix_is_an_error_listing_the_candidates(workspace: Path) -> None:
    first = remember(workspace, "Alice owns the deploy scripts")
    second = remember(workspace, "Bob owns the billing service")
    # Two ids sharing a prefix, as a big store has: set them so (uuid4 would take ~300 rows).
    a, b = "abcd1111" + first[8:], "abcd2222" + second[8:]
    with sqlite3.connect(workspace / "memory" / "memories.db") as conn:
        conn.execute("UPDATE memories SET id = ? WHERE id = ?", (a, first))
        conn.execute("UPDATE memories SET id = ? WHERE id = ?", (b, second))
    done = signet(workspace, "--json", "get", "abcd")
    assert done.returncode == 1
    error = json.loads(done.stderr)
    assert error["code"] == "ambiguous_id" and a in error["error"] and b in error["error"]
    prose = signet(workspace, "get", "abcd").stderr
    assert "ambiguous" in prose and a in prose and b in prose
    assert json.loads(signet(workspace, "--json", "get", "abcd2").stdout)["id"] == b
    missing = signet(workspace, "--json", "get", "abcd3")
    assert json.loads(missing.stderr)["code"] == "not_found"


# --- status ---------------------------------------------------------------------------------


def test_status_says_facts_need_an_llm_when_none_is_configured(tmp_path: Path) -> None:
    root = tmp_path / "agents"
    root.mkdir()
    (root / "agent.yaml").write_text("embedding:\n  provider: none\n", encoding="utf-8")
    assert signet(root, "init").returncode == 0
    status = json.loads(signet(root, "--json", "status").stdout)
    assert status["pipeline"]["extraction"] == "entities"
    assert "facts need an LLM" in signet(root, "status").stdout


def test_a_list_page_past_the_end_says_so(workspace: Path) -> None:
    assert signet(workspace, "remember", "The deploy runs on Fridays").returncode == 0
    first = signet(workspace, "list")
    assert first.returncode == 0 and "1-1 of 1" in first.stdout
    past = signet(workspace, "list", "--offset", "5")
    assert past.returncode == 0 and "none from 6 on (1 in all)" in past.stdout, past.stdout
