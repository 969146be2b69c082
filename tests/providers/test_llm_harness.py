"""The harness providers (claude-code, codex, opencode) as real subprocesses: a small script
written by the test stands in for the harness CLI, speaking `claude -p --output-format json`'s
result object; the argv each harness gets; a harness signed out, answering garbage, missing or
slow fails with an error naming it (the pipeline job then retries and dead-letters)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from signet.config import Config
from signet.errors import BadResponse, ProviderError, ProviderTimeout
from signet.providers.llm import Completion
from signet.providers.llm_registry import make_llm

# Prints its argv and stdin as the claude result, or what FAKE_HARNESS_STDOUT says; the
# guard variables it sees go into the result too.
SCRIPT = """import json, os, sys, time
stdin = sys.stdin.read()
time.sleep(float(os.environ.get("FAKE_HARNESS_SLEEP", "0")))
out = os.environ.get("FAKE_HARNESS_STDOUT")
if out is None:
    seen = {"argv": sys.argv[1:], "stdin": stdin, "no_hooks": os.environ.get("SIGNET_NO_HOOKS")}
    out = json.dumps({"type": "result", "subtype": "success", "is_error": False,
                      "result": json.dumps(seen), "usage": {"input_tokens": 12,
                      "output_tokens": 3}, "total_cost_usd": 0.0001})
print(out)
"""


@pytest.fixture
def harness(tmp_path: Path) -> list[str]:
    script = tmp_path / "fake_harness.py"
    script.write_text(SCRIPT)
    return [sys.executable, str(script)]


def test_claude_code_runs_claude_p_json_with_the_prompt_on_stdin_and_reports_usage(
    harness: list[str],
) -> None:
    used: list[Completion] = []
    llm = make_llm("claude-code", command=harness, usage_sink=used.append)
    assert llm is not None
    reply = llm.complete("Summarise: deploys never on Fridays.", system="Be brief.")
    seen = json.loads(reply.text)
    assert seen["argv"] == [
        "-p", "--output-format", "json", "--tools", "", "--strict-mcp-config",
        "--disable-slash-commands", "--no-session-persistence", "--system-prompt",
        "You process text for a memory system. Follow the instructions in the message.",
        "--model", "haiku"]
    assert seen["stdin"].endswith("Summarise: deploys never on Fridays.")
    assert "Be brief." in seen["stdin"] and seen["no_hooks"] == "1"
    assert (reply.provider, reply.model, reply.prompt_tokens, reply.completion_tokens) == (
        "claude-code", "haiku", 12, 3)
    assert [u.provider for u in used] == ["claude-code"]


@pytest.mark.parametrize(("provider", "argv"), [
    ("codex", ["exec", "--skip-git-repo-check", "--model", "gpt-5-mini", "-"]),
    ("opencode", ["run", "--model", "gpt-5-mini"]),
])
def test_codex_and_opencode_get_their_non_interactive_argv_and_stdout_is_the_reply(
    harness: list[str], provider: str, argv: list[str],
) -> None:
    llm = make_llm(provider, command=harness, model="gpt-5-mini")
    assert llm is not None
    reply = llm.complete("hello")
    # These CLIs print the final message as it is: here the JSON the script prints.
    assert json.loads(json.loads(reply.text)["result"])["argv"] == argv
    assert reply.provider == provider


def test_a_signed_out_claude_is_a_provider_error_with_its_message(
    harness: list[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FAKE_HARNESS_STDOUT", json.dumps({
        "type": "result", "subtype": "success", "is_error": True,
        "result": "Invalid API key · Please run /login"}))
    llm = make_llm("claude-code", command=harness)
    assert llm is not None
    with pytest.raises(ProviderError, match=r"claude-code: .* reported an error: Invalid API key"):
        llm.complete("hello")


@pytest.mark.parametrize("garbage", ["I am not JSON", json.dumps({"type": "result"}), "[1, 2]"])
def test_garbage_from_claude_is_a_bad_response(
    harness: list[str], monkeypatch: pytest.MonkeyPatch, garbage: str,
) -> None:
    monkeypatch.setenv("FAKE_HARNESS_STDOUT", garbage)
    llm = make_llm("claude-code", command=harness)
    assert llm is not None
    with pytest.raises(BadResponse, match="claude-code"):
        llm.complete("hello")


def test_a_missing_harness_binary_is_a_provider_error_naming_it(tmp_path: Path) -> None:
    llm = make_llm("claude-code", command=[str(tmp_path / "no-such-claude")])
    assert llm is not None
    with pytest.raises(ProviderError, match="cannot run .*no-such-claude"):
        llm.complete("hello")


def test_a_slow_harness_is_killed_at_the_timeout(
    harness: list[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FAKE_HARNESS_SLEEP", "30")
    llm = make_llm("opencode", command=harness, timeout_ms=300)
    assert llm is not None
    with pytest.raises(ProviderTimeout, match="opencode: .* no reply within 300 ms"):
        llm.complete("hello")


def test_concurrency_one_runs_one_harness_at_a_time(tmp_path: Path) -> None:
    import threading

    log = tmp_path / "runs.log"
    script = tmp_path / "logging_harness.py"
    script.write_text(
        "import sys, time\n"
        f"log = open({str(log)!r}, 'a')\n"
        "sys.stdin.read(); log.write('start\\n'); log.flush(); time.sleep(0.3)\n"
        "log.write('end\\n'); log.flush(); print('done')\n")
    llm = make_llm("opencode", command=[sys.executable, str(script)], concurrency=1)
    assert llm is not None
    calls = [threading.Thread(target=llm.complete, args=("hi",)) for _ in range(3)]
    for call in calls:
        call.start()
    for call in calls:
        call.join()
    assert log.read_text().split() == ["start", "end"] * 3


def test_a_signed_out_harness_fails_the_job_into_dead_letters_and_status_names_the_error(
    config: Config, harness: list[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    from datetime import UTC, datetime, timedelta

    from signet.app import SignetApp
    from signet.clock import ManualClock
    from signet.config import LlmConfig
    from signet.providers.hash_embedder import HashEmbedder

    monkeypatch.setenv("FAKE_HARNESS_STDOUT", json.dumps({
        "type": "result", "subtype": "success", "is_error": True,
        "result": "Not logged in · Please run /login"}))
    chosen = config.replace(llm=LlmConfig(provider="claude-code", command=tuple(harness)))
    clock = ManualClock(datetime.now(UTC))
    with SignetApp.open(chosen, embedder=HashEmbedder(64), clock=clock) as app:
        memory = app.remember("The billing service must never be deployed on Fridays.")
        for _ in range(chosen.pipeline.max_attempts):
            app.run_pipeline_until_idle(only=("extract",))
            clock.advance(timedelta(hours=1))  # past the retry back-off
        (job,) = [j for j in app.jobs() if j.job_type == "extract"]
        assert job.status == "dead" and "Not logged in" in (job.error or "")
        assert app.get(memory.id).content.startswith("The billing service must never")
        llm = app.status()["llm"]
        assert (llm["provider"], llm["model"]) == ("claude-code", "haiku")
        assert "Not logged in" in llm["last_error"] and llm["last_success_at"] is None
