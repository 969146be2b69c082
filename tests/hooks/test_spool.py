"""Nothing a hook captures is lost while the daemon is down: session-end and pre-compaction
spool the transcript (its raw bytes and the payload) and a prompt's "remember that ..." its
request, in the workspace, before asking the daemon; the daemon imports the spool at start and
on a schedule, idempotently. Real hook processes, a real daemon process, a real kill -9."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from daemon_process import NO_EMBEDDINGS, DaemonProcess, daemon_env, free_port, make_workspace
from hook_process import run_hook

from signet import spool
from signet.app import SignetApp
from signet.config import Config
from signet.daemon.spool_import import import_spool
from signet.errors import NotFound

SESSIONS = 20
# The hooks of this module get a long budget: twenty Python processes starting at once on a
# shared two-core machine can take seconds each before they read their stdin.
AGENT_YAML = NO_EMBEDDINGS + "hooks:\n  session_end_timeout_ms: 10000\n  prompt_submit_timeout_ms: 5000\n"


def transcript(session: str, marker: str) -> str:
    """Two lines of a Claude Code transcript (JSONL)."""
    lines = [
        {"type": "user", "sessionId": session, "uuid": f"{session}-u1",
         "timestamp": "2026-12-01T10:00:00.000Z",
         "message": {"role": "user", "content": f"Deploy {marker} on Fridays."}},
        {"type": "assistant", "sessionId": session, "uuid": f"{session}-u2",
         "timestamp": "2026-12-01T10:00:05.000Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "Noted."}]}},
    ]
    return "".join(json.dumps(line) + "\n" for line in lines)


def end_payload(session: str, path: Path, cwd: Path) -> dict[str, str]:
    return {"session_id": session, "transcript_path": str(path), "cwd": str(cwd),
            "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"}


@pytest.fixture
def daemons() -> Iterator[Callable[[Path, int], DaemonProcess]]:
    started: list[DaemonProcess] = []

    def start(workspace: Path, port: int) -> DaemonProcess:
        started.append(DaemonProcess(workspace, port))
        started[-1].wait_healthy(timeout_s=60)
        return started[-1]

    yield start
    for daemon in started:
        daemon.kill()


def imported_messages(workspace: Path, sessions: list[str]) -> dict[str, list[str]]:
    """Each session's message texts as the store holds them ([] for no such session)."""
    found: dict[str, list[str]] = {}
    with SignetApp.open(Config.load(workspace, {}), embedder=None) as app:
        for session in sessions:
            try:
                found[session] = [m["text"] for m in app.session_show(session)["messages"]]
            except NotFound:
                found[session] = []
    return found


def spooled_sessions(workspace: Path) -> set[str]:
    return {str(spool.read(p).payload["session_id"]) for p in spool.pending(str(workspace))}


def wait_for_empty_spool(workspace: Path, timeout_s: float = 90) -> None:
    deadline = time.monotonic() + timeout_s
    while spool.pending(str(workspace)):
        assert time.monotonic() < deadline, f"spool not imported: {spool.pending(str(workspace))}"
        time.sleep(0.2)


def test_a_kill_9_during_20_concurrent_session_ends_loses_no_transcript(
    tmp_path: Path, daemons: Callable[[Path, int], DaemonProcess]
) -> None:
    workspace = make_workspace(tmp_path / "ws", AGENT_YAML)
    port = free_port()
    daemon = daemons(workspace, port)
    env = {**daemon_env(workspace, port), "SIGNET_AUTOSTART": "0"}
    cwd = tmp_path / "billing"
    cwd.mkdir()
    names = [f"s{i:02d}" for i in range(SESSIONS)]
    for name in names:
        (tmp_path / f"{name}.jsonl").write_text(transcript(name, f"marker-{name}"))
    hooks = [
        subprocess.Popen(
            [sys.executable, "-m", "signet", "hook", "session-end", "--harness", "claude-code"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
        )
        for _ in names
    ]
    for proc, name in zip(hooks, names, strict=True):
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(end_payload(name, tmp_path / f"{name}.jsonl", cwd)).encode())
        proc.stdin.close()
    # The daemon dies as soon as the hooks are at work (the first spool file is written).
    deadline = time.monotonic() + 60
    while not spool.pending(str(workspace)) and time.monotonic() < deadline:
        time.sleep(0.005)
    daemon.proc.kill()
    daemon.proc.wait(timeout=30)
    for proc in hooks:
        assert proc.stdout is not None and proc.stderr is not None
        code = proc.wait(timeout=60)
        assert (code, proc.stdout.read()) == (0, b""), proc.stderr.read()
        proc.stdout.close()
        proc.stderr.close()

    # Nothing lost: every transcript is a session already or waits in the spool.
    spooled = spooled_sessions(workspace)
    imported = {n for n, texts in imported_messages(workspace, names).items() if texts}
    assert spooled, "the kill cut no hook off: the test showed nothing"
    assert spooled | imported == set(names)
    log = (workspace / ".daemon" / "logs" / "hooks.log").read_text()
    assert "for the daemon to import" in log

    # The next daemon imports the spool at its start; every session holds its transcript once.
    restarted = daemons(workspace, port)
    wait_for_empty_spool(workspace)
    restarted.terminate()
    assert imported_messages(workspace, names) == {
        name: [f"Deploy marker-{name} on Fridays.", "Noted."] for name in names}


def test_a_remember_request_made_while_the_daemon_is_down_is_stored_at_its_start(
    tmp_path: Path, daemons: Callable[[Path, int], DaemonProcess]
) -> None:
    workspace = make_workspace(tmp_path / "ws", AGENT_YAML)
    port = free_port()
    env = {**daemon_env(workspace, port), "SIGNET_AUTOSTART": "0"}
    asked = run_hook("user-prompt-submit", {
        "session_id": "s1", "cwd": str(tmp_path / "billing"),
        "prompt": "Remember that the billing ledger lives in PostgreSQL. Now fix the test."}, env)
    plain = run_hook("user-prompt-submit", {"session_id": "s1", "prompt": "What is a ledger?"}, env)
    assert (asked.code, asked.stdout, plain.code, plain.stdout) == (0, "", 0, "")
    assert len(spool.pending(str(workspace))) == 1  # only the prompt that asks to remember

    daemon = daemons(workspace, port)
    wait_for_empty_spool(workspace)
    found = subprocess.run(
        [sys.executable, "-m", "signet", "recall", "billing ledger PostgreSQL", "--json"],
        env=env, capture_output=True, text=True, timeout=60,
    )
    daemon.terminate()
    assert found.returncode == 0, found.stderr
    assert "The billing ledger lives in PostgreSQL." in found.stdout


def test_a_remember_request_holding_a_lone_surrogate_is_spooled_and_stored(
    tmp_path: Path, daemons: Callable[[Path, int], DaemonProcess]
) -> None:
    """JSON may escape half a surrogate pair (a harness cutting a string mid-emoji), which no
    UTF-8 holds: the request is still spooled, with U+FFFD in its place, and stored."""
    workspace = make_workspace(tmp_path / "ws", AGENT_YAML)
    port = free_port()
    env = {**daemon_env(workspace, port), "SIGNET_AUTOSTART": "0"}
    raw = b'{"session_id": "s1", "prompt": "Remember that the deploy key is \\ud83d in the vault."}'
    asked = run_hook("user-prompt-submit", None, env, raw=raw)
    assert (asked.code, asked.stdout) == (0, "")
    assert len(spool.pending(str(workspace))) == 1

    daemon = daemons(workspace, port)
    wait_for_empty_spool(workspace)
    found = subprocess.run(
        [sys.executable, "-m", "signet", "recall", "deploy key vault", "--json"],
        env=env, capture_output=True, text=True, timeout=60,
    )
    daemon.terminate()
    assert found.returncode == 0, found.stderr
    recalled = json.dumps(json.loads(found.stdout), ensure_ascii=False)
    assert "The deploy key is \ufffd in the vault." in recalled


def test_a_remember_request_in_a_prompt_holding_a_nul_is_stored(
    tmp_path: Path, daemons: Callable[[Path, int], DaemonProcess]
) -> None:
    """A NUL anywhere in the prompt (a pasted binary log) made the daemon refuse the whole
    request, and one inside the fact had its spooled copy dropped at import, silently. The
    hook sends U+FFFD in its place: both are stored and the prompt gets its answer."""
    workspace = make_workspace(tmp_path / "ws", AGENT_YAML)
    port = free_port()
    env = {**daemon_env(workspace, port), "SIGNET_AUTOSTART": "0"}
    daemons(workspace, port)  # stopped by the fixture
    asked = run_hook("user-prompt-submit", {
        "session_id": "s1", "prompt": "Remember that the cache lives in Redis.\nlog: a\u0000b"}, env)
    inside = run_hook("user-prompt-submit", {
        "session_id": "s1", "prompt": "Remember that the queue is named jobs\u0000v2."}, env)
    assert (asked.code, inside.code) == (0, 0)
    wait_for_empty_spool(workspace)
    found = subprocess.run(
        [sys.executable, "-m", "signet", "recall", "cache Redis", "--json"],
        env=env, capture_output=True, text=True, timeout=60,
    )
    assert found.returncode == 0, found.stderr
    assert "The cache lives in Redis." in found.stdout
    queue = subprocess.run(
        [sys.executable, "-m", "signet", "recall", "queue named jobs", "--json"],
        env=env, capture_output=True, text=True, timeout=60,
    )
    assert "The queue is named jobs\ufffdv2." in queue.stdout, queue.stdout
    log = workspace / ".daemon" / "logs" / "hooks.log"
    assert not log.exists() or "HTTP 400" not in log.read_text()


def test_the_import_is_idempotent_and_sets_aside_what_it_cannot_read(tmp_path: Path) -> None:
    """The same transcript spooled twice is one session with its messages once; a file that
    is not a spool file, or a transcript that is not UTF-8, moves to failed/ with its reason."""
    workspace = make_workspace(tmp_path / "ws", AGENT_YAML)
    body = {"harness": "claude-code", "session_id": "s1", "transcript_path": "/gone.jsonl",
            "cwd": str(tmp_path)}
    raw = transcript("s1", "marker-s1").encode()
    spool.write(str(workspace), "pre-compaction", "claude-code", body, raw)
    spool.write(str(workspace), "session-end", "claude-code", body, raw)
    bad = spool.write(str(workspace), "session-end", "claude-code", {**body, "session_id": "s2"},
                      b"\xff\xfe not utf-8")
    assert bad is not None
    junk = Path(bad).with_name("00000000000000000000-1-junk.spool")
    junk.write_bytes(b"not a spool file")
    with SignetApp.open(Config.load(workspace, {}), embedder=None) as app:
        assert import_spool(app) == 2
        shown = app.session_show("s1")
    assert [m["text"] for m in shown["messages"]] == ["Deploy marker-s1 on Fridays.", "Noted."]
    assert shown["ended_at"]
    failed = Path(spool.spool_dir(str(workspace))) / "failed"
    reasons = sorted(p.read_text() for p in failed.glob("*.reason"))
    assert len(reasons) == 2 and "not UTF-8" in reasons[1] + reasons[0]
    assert any("unreadable spool file" in r for r in reasons)
    assert spool.pending(str(workspace)) == []


def test_a_remember_request_the_store_refuses_is_set_aside_with_its_reason(
    tmp_path: Path, daemons: Callable[[Path, int], DaemonProcess]
) -> None:
    """A request the store refuses (here: longer than memory.max_content_chars) was dropped
    without a trace while the prompt's other request was stored. Its spooled copy now stays,
    and the daemon's import sets it aside in failed/ with the reason, which doctor reports;
    the request stored beside it is stored once."""
    workspace = make_workspace(tmp_path / "ws", AGENT_YAML + "memory:\n  maxContentChars: 60\n")
    port = free_port()
    env = {**daemon_env(workspace, port), "SIGNET_AUTOSTART": "0"}
    daemons(workspace, port)  # stopped by the fixture
    long_fact = "the release checklist " + "has many steps " * 6
    asked = run_hook("user-prompt-submit", {
        "session_id": "s1", "prompt": f"Remember that the ledger is in Postgres. Remember that {long_fact}."}, env)
    assert asked.code == 0
    wait_for_empty_spool(workspace)
    failed = Path(spool.spool_dir(str(workspace))) / "failed"
    reasons = [p.read_text() for p in failed.glob("*.reason")]
    assert len(reasons) == 1 and "the maximum is 60" in reasons[0], reasons
    listed = subprocess.run([sys.executable, "-m", "signet", "list", "--json"],
                            env=env, capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.count("The ledger is in Postgres.") == 1
    doctor = subprocess.run([sys.executable, "-m", "signet", "doctor", "--no-mcp", "--json"],
                            env=env, capture_output=True, text=True, timeout=120)
    spool_check = next(c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "spool")
    assert (spool_check["status"], spool_check["data"]["failed"]) == ("warn", 1)
