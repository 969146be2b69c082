"""The hooks end to end, as Claude Code runs them: Claude Code-shaped payloads through the real
CLI (`python -m signet hook ...` subprocesses) against a real daemon subprocess with the
bundled embedding model, across two sessions; then with the daemon gone."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from daemon_process import DaemonProcess, daemon_env, free_port, make_workspace
from hook_process import run_hook

from signet.app import SignetApp
from signet.config import Config
from signet.workspace import init_workspace

DECISION = "We decided to use PostgreSQL for the billing service ledger, not MongoDB"
RELATED = "Do we use PostgreSQL or MongoDB for the billing ledger?"
UNRELATED = "How do I reverse a linked list in Rust?"
# Two lines of a Claude Code transcript (JSONL, one entry per line).
TRANSCRIPT = [
    {"type": "user", "sessionId": "s1", "uuid": "u1", "timestamp": "2026-12-01T10:00:00.000Z",
     "message": {"role": "user", "content": "Use PostgreSQL for the billing ledger."}},
    {"type": "assistant", "sessionId": "s1", "uuid": "u2", "timestamp": "2026-12-01T10:00:05.000Z",
     "message": {"role": "assistant", "content": [{"type": "text", "text": "Noted."}]}},
]


def payload(event: str, session: str, cwd: Path, transcript: Path, **extra: str) -> dict[str, str]:
    """A Claude Code hook payload (hooks reference: common fields plus the event's own)."""
    return {"session_id": session, "transcript_path": str(transcript), "cwd": str(cwd),
            "hook_event_name": event, "permission_mode": "default", **extra}


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[DaemonProcess]:
    workspace = init_workspace(tmp_path / "ws").workspace  # `signet init`: the bundled model
    process = DaemonProcess(workspace, free_port())
    process.wait_healthy(timeout_s=60)
    yield process
    process.kill()


def test_two_sessions_through_claude_code_hooks(daemon: DaemonProcess, tmp_path: Path) -> None:
    env = daemon_env(daemon.workspace, daemon.port)
    cwd = tmp_path / "billing"
    cwd.mkdir()
    transcript = tmp_path / "s1.jsonl"

    start = run_hook("session-start", payload("SessionStart", "s1", cwd, transcript, source="startup"), env)
    assert start.code == 0
    assert "# Agent" in start.context()  # AGENTS.md, the starter instructions
    first = run_hook("user-prompt-submit", payload("UserPromptSubmit", "s1", cwd, transcript,
                                                   prompt="Let's set up the billing service."), env)
    assert first.code == 0 and first.stdout == ""  # nothing stored yet: nothing injected

    stored = subprocess.run(
        [sys.executable, "-m", "signet", "remember", DECISION, "--type", "decision",
         "--project", "billing", "--json"],
        env=env, capture_output=True, text=True, timeout=60,
    )
    assert stored.returncode == 0, stored.stderr
    decision_id = json.loads(stored.stdout)["id"]
    transcript.write_text("".join(json.dumps(line) + "\n" for line in TRANSCRIPT))
    end = run_hook("session-end", payload("SessionEnd", "s1", cwd, transcript, reason="prompt_input_exit"), env)
    assert end.code == 0 and end.stdout == ""  # SessionEnd takes no output

    second = run_hook("session-start", payload("SessionStart", "s2", cwd, tmp_path / "s2.jsonl", source="startup"), env)
    # One line per memory: its short id and its text, nothing else (no type, no score).
    assert f"- [{decision_id[:8]}] {DECISION}" in second.context().splitlines()
    again = run_hook("user-prompt-submit", payload("UserPromptSubmit", "s2", cwd, tmp_path / "s2.jsonl", prompt=RELATED), env)
    assert decision_id[:8] not in again.stdout  # s2 already has it: the ledger

    related = run_hook("user-prompt-submit", payload("UserPromptSubmit", "s3", cwd, tmp_path / "s3.jsonl", prompt=RELATED), env)
    assert related.code == 0 and DECISION in related.context()
    unrelated = run_hook("user-prompt-submit", payload("UserPromptSubmit", "s3", cwd, tmp_path / "s3.jsonl", prompt=UNRELATED), env)
    assert unrelated.code == 0 and unrelated.stdout == ""

    log_path = daemon.workspace / ".daemon" / "logs" / "hooks.log"
    logged = log_path.read_text().count("\n") if log_path.exists() else 0
    daemon.terminate()
    with SignetApp.open(Config.load(daemon.workspace, {}), embedder=None) as app:
        session = app.session_show("s1")
    assert (session["harness"], session["project"]) == ("claude-code", "billing")
    assert session["ended_at"] and "PostgreSQL" in session["messages"][0]["text"]

    for event, name in (("session-start", "SessionStart"), ("user-prompt-submit", "UserPromptSubmit"),
                        ("pre-compaction", "PreCompact"), ("session-end", "SessionEnd")):
        down = run_hook(event, payload(name, "s4", cwd, transcript, prompt=RELATED), env)
        assert (down.code, down.stdout) == (0, "")
    log = log_path.read_text().splitlines()[logged:]
    assert len(log) == 4 and all("did not answer" in line for line in log)


TEA = "The user prefers tea."
# Two share a word with the prompt ("kind", "like"), so recall returns them beside the tea.
OTHERS = ["The deploy runs every Friday at noon", "I like to keep commits small and focused",
          "Be kind in code review comments", "Priya leads the billing team"]


def test_each_memory_is_judged_alone_and_a_resume_gets_no_second_batch(
    daemon: DaemonProcess, tmp_path: Path
) -> None:
    """In a store of five memories the one the prompt is about goes in, alone: its cosine is
    0.66, the others recall finds through a shared word are near 0.15 and are not filler. The
    same prompt again injects nothing rather than the leftovers; a resumed session gets no
    second session-start batch."""
    env = daemon_env(daemon.workspace, daemon.port)
    ids = {}
    for text in [TEA, *OTHERS]:
        stored = subprocess.run([sys.executable, "-m", "signet", "remember", text, "--json"],
                                env=env, capture_output=True, text=True, timeout=60)
        assert stored.returncode == 0, stored.stderr
        ids[text] = json.loads(stored.stdout)["id"]
    cwd, transcript = tmp_path / "home", tmp_path / "t.jsonl"
    cwd.mkdir()
    ask = payload("UserPromptSubmit", "tea", cwd, transcript, prompt="What kind of tea do I like?")
    first = run_hook("user-prompt-submit", ask, env)
    assert first.code == 0
    lines = [line for line in first.context().splitlines() if line.startswith("- [")]
    assert lines == [f"- [{ids[TEA][:8]}] {TEA}"]
    again = run_hook("user-prompt-submit", ask, env)
    assert (again.code, again.stdout) == (0, "")  # nothing new, and no filler

    start = run_hook("session-start", payload("SessionStart", "tea", cwd, transcript, source="startup"), env)
    assert "# Agent" in start.context()
    resumed = run_hook("session-start", payload("SessionStart", "tea", cwd, transcript, source="resume"), env)
    assert (resumed.code, resumed.stdout) == (0, "")
    cleared = run_hook("session-start", payload("SessionStart", "tea", cwd, transcript, source="clear"), env)
    assert "# Agent" in cleared.context() and TEA in cleared.context()  # its context was emptied


ROTATION = ["The staging database password rotates every month",
            "The staging database password is kept in the team vault"]


def test_a_prompt_gets_its_best_memory_and_a_repeat_gets_no_leftover(
    daemon: DaemonProcess, tmp_path: Path
) -> None:
    """Two stored memories are about the prompt: one line goes in (hooks.prompt_max_memories,
    1), recall's first; the same prompt again injects nothing, not the other one: the choice is
    made before the session's ledger, so a repeat never brings the next-best leftovers."""
    env = daemon_env(daemon.workspace, daemon.port)
    for text in [*ROTATION, *OTHERS]:
        stored = subprocess.run([sys.executable, "-m", "signet", "remember", text],
                                env=env, capture_output=True, text=True, timeout=60)
        assert stored.returncode == 0, stored.stderr
    cwd, transcript = tmp_path / "home", tmp_path / "t.jsonl"
    cwd.mkdir()
    ask = payload("UserPromptSubmit", "pw", cwd, transcript,
                  prompt="Where is the staging database password and when does it rotate?")
    first = run_hook("user-prompt-submit", ask, env)
    lines = [line for line in first.context().splitlines() if line.startswith("- [")]
    assert len(lines) == 1 and any(line.endswith(text) for text in ROTATION for line in lines)
    again = run_hook("user-prompt-submit", ask, env)
    assert (again.code, again.stdout) == (0, "")


def test_a_hung_daemon_costs_the_hook_its_budget_and_no_more(tmp_path: Path) -> None:
    """A socket that accepts and never answers: the hook gives up at its budget (300 ms here),
    prints nothing and exits 0."""
    workspace = make_workspace(tmp_path / "ws", "hooks:\n  prompt_submit_timeout_ms: 300\n")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    accepted: list[socket.socket] = []

    def accept_all() -> None:
        while True:
            try:
                accepted.append(listener.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept_all, daemon=True).start()
    env = daemon_env(workspace, listener.getsockname()[1])
    try:
        # The first hook of a workspace loads the configuration inside its budget (then caches
        # what it needs): on a loaded machine that alone can use 300 ms. The second is timed.
        run_hook("user-prompt-submit", {"session_id": "s", "prompt": "warm"}, env)
        hung = run_hook("user-prompt-submit", {"session_id": "s", "prompt": "hello there"}, env)
    finally:
        listener.close()
    assert (hung.code, hung.stdout) == (0, "")
    assert accepted, "the hook never reached the daemon"
    line = (workspace / ".daemon" / "logs" / "hooks.log").read_text().strip().splitlines()[-1]
    assert "user-prompt-submit claude-code" in line and ("300 ms" in line or "timed out" in line)


def test_a_payload_that_never_ends_costs_the_budget_and_exits_0(tmp_path: Path) -> None:
    """A harness that never closes the hook's stdin: the hook gives up at its budget and exits
    0 with nothing printed, although its reader is still blocked (a normal interpreter exit
    would abort on the stdin lock that reader holds)."""
    workspace = make_workspace(tmp_path / "ws", "hooks:\n  prompt_submit_timeout_ms: 300\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "signet", "hook", "user-prompt-submit", "--harness", "claude-code"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=daemon_env(workspace, free_port()),
    )
    assert proc.stdin is not None
    proc.stdin.write(b'{"prompt": "hel')  # and never more, never closed
    proc.stdin.flush()
    try:
        code = proc.wait(timeout=60)  # it exits by itself: its output is far below a pipe's size
    finally:
        proc.kill()
        proc.stdin.close()
    assert proc.stdout is not None and proc.stderr is not None
    assert (code, proc.stdout.read(), proc.stderr.read()) == (0, b"", b"")
    line = (workspace / ".daemon" / "logs" / "hooks.log").read_text().strip()
    assert "gave up after its 300 ms budget" in line


@pytest.mark.parametrize("raw", [b"{not json", b"[1, 2]", b'{"prompt": 42}'])
def test_a_bad_payload_prints_nothing_and_exits_0(tmp_path: Path, raw: bytes) -> None:
    workspace = make_workspace(tmp_path / "ws")
    env = daemon_env(workspace, free_port())
    bad = run_hook("user-prompt-submit", None, env, raw=raw)
    assert (bad.code, bad.stdout) == (0, "")
    assert (workspace / ".daemon" / "logs" / "hooks.log").read_text().count("\n") == 1


# Each pair: an older memory, and the later one that replaces it without an LLM: a decision
# the newer one marks current ("now"), and an entity attribute's newer value.
REPLACED = [("We decided to use PostgreSQL", "we now use MongoDB"),
            ("Priya's phone number is 555-0100", "Priya's phone number is 555-0199")]


def test_a_replaced_memory_is_left_out_of_the_hook_and_memory_md(
    daemon: DaemonProcess, tmp_path: Path
) -> None:
    """The daemon's own pipeline links each older memory to its replacement; the prompt hook
    then injects the current one alone and MEMORY.md holds only it."""
    env = daemon_env(daemon.workspace, daemon.port)

    def signet(*args: str) -> dict[str, object]:
        done = subprocess.run([sys.executable, "-m", "signet", *args, "--json"], env=env,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return dict(json.loads(done.stdout))

    pairs = []
    for old, new in REPLACED:
        old_id = str(signet("remember", old, "--type", "decision")["id"])
        signet("remember", "The deploy runs every Friday at noon")
        pairs.append((old_id, str(signet("remember", new)["id"])))
    for old_id, new_id in pairs:  # the pipeline runs in the daemon: wait for the link
        for _ in range(120):
            if signet("get", old_id).get("superseded_by") == new_id:
                break
            time.sleep(0.5)
        assert signet("get", old_id).get("superseded_by") == new_id
    cwd, transcript = tmp_path / "home", tmp_path / "t.jsonl"
    cwd.mkdir()
    for (old, new), prompt in zip(REPLACED, ("Which database do we use?",
                                             "What is Priya's phone number?"), strict=True):
        asked = run_hook("user-prompt-submit", payload("UserPromptSubmit", prompt, cwd, transcript,
                                                       prompt=prompt), env)
        assert new in asked.context() and old not in asked.context()
    signet("memory", "synthesize")
    head = (daemon.workspace / "MEMORY.md").read_text("utf-8")
    assert "MongoDB" in head and "555-0199" in head
    assert "PostgreSQL" not in head and "555-0100" not in head



DASHBOARD = "The dashboard's frontend uses HTMX and Alpine.js; we decided against React to keep the build simple."


def test_a_prompt_naming_only_what_nothing_stored_mentions_gets_nothing(
    daemon: DaemonProcess, tmp_path: Path
) -> None:
    """"Which CSS framework does the dashboard use?" is near the dashboard memory in meaning
    (the judge alone lets it in) but names a thing no recalled memory mentions: nothing goes
    in. A question naming what the memory names gets it."""
    env = daemon_env(daemon.workspace, daemon.port)
    for text in [DASHBOARD, *OTHERS]:
        stored = subprocess.run([sys.executable, "-m", "signet", "remember", text],
                                env=env, capture_output=True, text=True, timeout=60)
        assert stored.returncode == 0, stored.stderr
    cwd, transcript = tmp_path / "home", tmp_path / "t.jsonl"
    cwd.mkdir()
    css = run_hook("user-prompt-submit", payload(
        "UserPromptSubmit", "a", cwd, transcript, prompt="Which CSS framework does the dashboard use?"), env)
    assert (css.code, css.stdout) == (0, "")
    named = run_hook("user-prompt-submit", payload(
        "UserPromptSubmit", "b", cwd, transcript, prompt="Does the dashboard use HTMX or React?"), env)
    assert named.code == 0 and DASHBOARD in named.context()
