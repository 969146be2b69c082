"""`llm.provider: claude-code` with the real, pinned Claude Code (conftest.py) run as
`claude -p --output-format json` against the recording fake Anthropic API: the extraction
prompt reaches the model through the harness, the model's JSON comes back as the Friday fact,
the child runs with our hooks disabled, and a signed-out harness fails with its own message."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fakes.anthropic_stream import FakeAnthropic
from signet.errors import ProviderError
from signet.pipeline.extraction import extract
from signet.providers.llm_registry import make_llm

SESSION = "User: The billing service must never be deployed on Fridays.\nAssistant: Noted."
FACT = {"facts": [{"content": "The billing service must never be deployed on Fridays.",
                   "type": "constraint", "confidence": 0.9}],
        "entities": [{"source": "user", "relationship": "mentions",
                      "target": "billing service", "confidence": 0.8}]}


def script(request: dict[str, Any]) -> list[dict[str, Any]]:
    if "deployed on Fridays" in json.dumps(request["messages"]):
        return [{"type": "text", "text": json.dumps(FACT)}]
    return [{"type": "text", "text": "ok"}]


@pytest.fixture
def claude_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeAnthropic:
    fake = FakeAnthropic(script)
    home = tmp_path / "home"
    home.mkdir()
    for name, value in {"HOME": str(home), "ANTHROPIC_BASE_URL": fake.url,
                        "ANTHROPIC_API_KEY": "sk-ant-test-dummy",
                        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                        "DISABLE_AUTOUPDATER": "1"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    yield fake
    fake.close()


def test_the_real_claude_p_as_provider_turns_the_session_into_the_friday_fact(
    claude_bin: Path, claude_env: FakeAnthropic,
) -> None:
    llm = make_llm("claude-code", command=[str(claude_bin)], timeout_ms=120_000)
    assert llm is not None
    extraction = extract(llm, SESSION)
    assert [f.content for f in extraction.facts] == [
        "The billing service must never be deployed on Fridays."]
    asked = [r.json for r in claude_env.requests if r.path.startswith("/v1/messages")
             and "deployed on Fridays" in json.dumps(r.json.get("messages"))]
    assert asked and "haiku" in asked[0]["model"]
    # A bare text function: no tools, no agent system prompt, nothing saved as a session.
    assert not asked[0].get("tools") and len(json.dumps(asked[0])) < 4_000
    assert not list((Path.home() / ".claude" / "projects").rglob("*.jsonl"))


def test_a_signed_out_real_claude_p_is_a_provider_error_saying_so(
    claude_bin: Path, claude_env: FakeAnthropic, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY")  # a fresh HOME and no key: not logged in
    llm = make_llm("claude-code", command=[str(claude_bin)], timeout_ms=120_000)
    assert llm is not None
    with pytest.raises(ProviderError, match="claude-code: .*reported an error: Not logged in"):
        llm.complete("hello")
    assert claude_env.requests == []
