"""The LLM providers against a real loopback server and a real child process.

The HTTP providers share one set of tests, run for each wire format against `FakeLLMServer`;
the command provider runs `tests/fakes/fake_cli.py` as its CLI.
"""

from __future__ import annotations

import logging
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fakes.llm_server import FakeLLMServer, Reply, prompt_of, system_of
from signet.errors import BadResponse, InvalidInput, ProviderError, ProviderTimeout, RateLimited
from signet.providers.llm import (
    JSON_INSTRUCTION,
    LLM,
    BaseLLM,
    Completion,
    LLMSettings,
    RateLimiter,
    UsageSink,
)
from signet.providers.llm_http import AnthropicLLM, OllamaLLM
from signet.providers.llm_registry import LLM_PROVIDERS, make_llm

HTTP_PROVIDERS = ["ollama", "openai", "anthropic"]
PATHS = {"ollama": "/api/chat", "openai": "/v1/chat/completions", "anthropic": "/v1/messages"}
FAKE_CLI = str(Path(__file__).parents[1] / "fakes" / "fake_cli.py")


_opened: list[LLM] = []


@pytest.fixture(autouse=True)
def _close_llms() -> Iterator[None]:
    """Close every provider a test made, so no keep-alive socket outlives its test."""
    yield
    while _opened:
        llm = _opened.pop()
        if isinstance(llm, BaseLLM):
            llm.close()


def opened(llm: LLM | None) -> LLM:
    assert llm is not None
    _opened.append(llm)
    return llm


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as s:
        yield s


@pytest.fixture(params=HTTP_PROVIDERS)
def provider(request: pytest.FixtureRequest) -> str:
    return request.param


def http_llm(provider: str, server: FakeLLMServer, **options: Any) -> LLM:
    return opened(make_llm(provider, model="test-model", base_url=server.url, **options))


def cli_llm(*cli_args: str, **options: Any) -> LLM:
    return opened(make_llm("command", command=[sys.executable, FAKE_CLI, *cli_args], **options))


# -- HTTP providers: good replies ---------------------------------------------------------------


def test_good_reply_gives_text_and_token_counts(provider: str, server: FakeLLMServer) -> None:
    server.push(Reply("hello there world"))
    completion = http_llm(provider, server).complete("one two three", system="be brief")
    assert completion.text == "hello there world"
    assert completion.prompt_tokens == 5  # the fake counts words of system + prompt
    assert completion.completion_tokens == 3
    assert (completion.provider, completion.model) == (provider, "test-model")
    request = server.requests[0]
    assert request.path == PATHS[provider]
    assert request.json["model"] == "test-model"


def test_prompt_and_system_travel_in_the_provider_format(
    provider: str, server: FakeLLMServer
) -> None:
    http_llm(provider, server).complete("what did I say?", system="you are a memory")
    body = server.requests[0].json
    assert prompt_of(body) == "what did I say?"
    assert system_of(body) == "you are a memory"
    if provider == "anthropic":  # system is top-level; messages hold the user turn only
        assert body["messages"] == [{"role": "user", "content": "what did I say?"}]
    else:
        assert body["messages"][0] == {"role": "system", "content": "you are a memory"}


def test_latency_and_usage_reach_the_usage_sink(provider: str, server: FakeLLMServer) -> None:
    seen: list[Completion] = []
    server.push(Reply("slowish answer", delay_s=0.2))
    completion = http_llm(provider, server, usage_sink=seen.append).complete("hi")
    assert seen == [completion]
    assert completion.latency_ms >= 200
    assert completion.completion_tokens == 2


def test_json_mode_is_asked_for_in_the_request(provider: str, server: FakeLLMServer) -> None:
    llm = http_llm(provider, server)
    llm.complete("plain")
    llm.complete("as json", json_mode=True)
    plain, as_json = (r.json for r in server.requests)
    if provider == "ollama":
        assert "format" not in plain and as_json["format"] == "json"
    elif provider == "openai":
        assert "response_format" not in plain
        assert as_json["response_format"] == {"type": "json_object"}
    else:
        assert "system" not in plain and JSON_INSTRUCTION in as_json["system"]


def test_max_tokens_comes_from_config_unless_the_call_sets_it(
    provider: str, server: FakeLLMServer
) -> None:
    llm = http_llm(provider, server, max_tokens=77)
    llm.complete("a")
    llm.complete("b", max_tokens=5)
    key = ("options", "num_predict") if provider == "ollama" else ("max_tokens",)
    sent = [_dig(r.json, key) for r in server.requests]
    assert sent == [77, 5]


def test_think_blocks_are_returned_untouched(provider: str, server: FakeLLMServer) -> None:
    server.push(Reply('{"facts": []}', think=True))
    text = http_llm(provider, server).complete("x").text
    assert text.startswith("<think>") and text.endswith('{"facts": []}')


def test_api_key_goes_in_the_provider_header(provider: str, server: FakeLLMServer) -> None:
    http_llm(provider, server, api_key="sk-test").complete("x")
    headers = server.requests[0].headers
    if provider == "anthropic":
        assert headers["x-api-key"] == "sk-test"
        assert headers["anthropic-version"] == "2023-06-01"
    else:
        assert headers["authorization"] == "Bearer sk-test"


def test_openai_base_url_may_end_in_v1(server: FakeLLMServer) -> None:
    opened(make_llm("openai", model="m", base_url=server.url + "/v1/")).complete("x")
    assert server.requests[0].path == "/v1/chat/completions"


def test_a_failing_usage_sink_does_not_fail_the_call(provider: str, server: FakeLLMServer) -> None:
    def broken(_: Completion) -> None:
        raise RuntimeError("telemetry down")

    assert http_llm(provider, server, usage_sink=broken).complete("x").text == "ok"


def test_prompt_text_is_never_logged(
    provider: str, server: FakeLLMServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="signet")
    http_llm(provider, server).complete("my bank pin is 4921", system="secret system")
    assert "latency_ms" in caplog.text  # the call was logged ...
    assert "4921" not in caplog.text and "secret system" not in caplog.text  # ... its text not


# -- HTTP providers: faults ---------------------------------------------------------------------


def test_http_500_raises_provider_error_naming_provider_url_and_status(
    provider: str, server: FakeLLMServer
) -> None:
    server.push(Reply("model exploded", status=500))
    with pytest.raises(ProviderError) as caught:
        http_llm(provider, server).complete("x")
    assert type(caught.value) is ProviderError
    message = str(caught.value)
    assert provider in message and server.url + PATHS[provider] in message
    assert "HTTP 500" in message and "model exploded" in message


def test_slow_server_raises_provider_timeout(provider: str, server: FakeLLMServer) -> None:
    server.push(Reply("late", delay_s=2.0))
    started = time.monotonic()
    with pytest.raises(ProviderTimeout, match="300 ms"):
        http_llm(provider, server, timeout_ms=300).complete("x")
    assert time.monotonic() - started < 1.5


def test_unreachable_server_raises_provider_error(provider: str) -> None:
    with socket.socket() as sock:  # a port nobody listens on once closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    llm = opened(make_llm(provider, model="m", base_url=f"http://127.0.0.1:{port}"))
    with pytest.raises(ProviderError, match="cannot reach"):
        llm.complete("x")


def test_non_json_body_raises_bad_response(provider: str, server: FakeLLMServer) -> None:
    server.push(Reply(raw_body=b"<html>502 Bad Gateway</html>"))
    with pytest.raises(BadResponse, match="not JSON"):
        http_llm(provider, server).complete("x")


@pytest.mark.parametrize("text", ["", "  \n "])
def test_empty_content_raises_bad_response(provider: str, server: FakeLLMServer, text: str) -> None:
    server.push(Reply(text))
    with pytest.raises(BadResponse, match="empty reply"):
        http_llm(provider, server).complete("x")


@pytest.mark.parametrize("raw", ['{"unexpected": true}', "[1, 2]", "null", '"just a string"'])
def test_wrong_shape_raises_bad_response(provider: str, server: FakeLLMServer, raw: str) -> None:
    server.push(Reply(raw_body=raw))
    with pytest.raises(BadResponse, match="has no|not a list"):
        http_llm(provider, server).complete("x")


WRONG_TYPES = {
    "ollama": '{"message": {"content": 42}}',
    "openai": '{"choices": [{"message": {"content": ["a"]}}]}',
    "anthropic": '{"content": [{"type": "text", "text": {"nested": 1}}]}',
}


def test_text_of_the_wrong_type_raises_bad_response(provider: str, server: FakeLLMServer) -> None:
    server.push(Reply(raw_body=WRONG_TYPES[provider]))
    with pytest.raises(BadResponse, match="not text"):
        http_llm(provider, server).complete("x")


def test_openai_null_content_is_an_empty_reply(server: FakeLLMServer) -> None:
    server.push(Reply(raw_body='{"choices": [{"message": {"content": null}}]}'))
    with pytest.raises(BadResponse, match="empty reply"):
        http_llm("openai", server).complete("x")


def test_missing_token_counts_are_none_not_an_error(server: FakeLLMServer) -> None:
    server.push(Reply(raw_body='{"choices": [{"message": {"content": "fine"}}]}'))
    completion = http_llm("openai", server).complete("x")
    assert (completion.text, completion.prompt_tokens, completion.completion_tokens) == (
        "fine",
        None,
        None,
    )


def test_calls_beyond_the_burst_raise_rate_limited(provider: str, server: FakeLLMServer) -> None:
    llm = http_llm(provider, server, max_calls_per_hour=1, burst=2)
    llm.complete("1")
    llm.complete("2")
    with pytest.raises(RateLimited, match="1 LLM calls per hour"):
        llm.complete("3")
    assert len(server.requests) == 2  # the refused call never reached the server


# -- command provider ---------------------------------------------------------------------------


def test_command_reply_is_the_cli_stdout() -> None:
    seen: list[Completion] = []
    completion = cli_llm("--reply", "  the answer\n", usage_sink=seen.append).complete("q")
    assert completion.text == "the answer"
    assert (completion.provider, completion.prompt_tokens, completion.completion_tokens) == (
        "command",
        None,
        None,
    )
    assert seen == [completion] and completion.latency_ms > 0


def test_command_gets_system_json_instruction_and_prompt_on_stdin() -> None:
    completion = cli_llm("--echo").complete("the prompt", system="the system", json_mode=True)
    assert completion.text == f"the system\n\n{JSON_INSTRUCTION}\n\nthe prompt"


def test_command_child_runs_with_the_hook_guard(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SIGNET_NO_HOOKS", raising=False)
    monkeypatch.delenv("SIGNET_BYPASS", raising=False)
    assert cli_llm("--show-guard").complete("x").text == "SIGNET_NO_HOOKS=1 SIGNET_BYPASS=1"


def test_command_nonzero_exit_raises_provider_error_with_stderr() -> None:
    llm = cli_llm("--exit", "3", "--stderr", "quota exceeded for today")
    with pytest.raises(ProviderError, match="status 3: quota exceeded for today"):
        llm.complete("x")


def test_command_slow_cli_is_killed_at_the_timeout() -> None:
    started = time.monotonic()
    with pytest.raises(ProviderTimeout, match="300 ms"):
        cli_llm("--sleep", "5", timeout_ms=300).complete("x")
    assert time.monotonic() - started < 2.0


def test_command_empty_stdout_raises_bad_response() -> None:
    with pytest.raises(BadResponse, match="printed nothing"):
        cli_llm("--reply", "").complete("x")


def test_command_that_cannot_start_raises_provider_error(tmp_path: Path) -> None:
    llm = make_llm("command", command=[str(tmp_path / "no-such-cli")])
    assert llm is not None
    with pytest.raises(ProviderError, match="cannot run"):
        llm.complete("x")


def test_command_given_as_one_string_is_split_like_a_shell() -> None:
    llm = make_llm("command", command=f"{sys.executable} {FAKE_CLI} --reply 'two words'")
    assert llm is not None
    assert llm.complete("x").text == "two words"


# -- rate limiter -------------------------------------------------------------------------------


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_rate_limiter_allows_the_burst_then_refuses() -> None:
    limiter = RateLimiter(max_per_hour=3600, burst=3, clock=FakeClock())
    assert [limiter.try_acquire() for _ in range(4)] == [True, True, True, False]


def test_rate_limiter_refills_at_the_hourly_rate() -> None:
    clock = FakeClock()
    limiter = RateLimiter(max_per_hour=3600, burst=3, clock=clock)  # one call per second
    while limiter.try_acquire():
        pass
    clock.now += 0.5
    assert not limiter.try_acquire()
    assert limiter.seconds_until_available() == pytest.approx(0.5)
    clock.now += 0.5
    assert limiter.try_acquire() and not limiter.try_acquire()


def test_rate_limiter_never_holds_more_than_the_burst() -> None:
    clock = FakeClock()
    limiter = RateLimiter(max_per_hour=3600, burst=2, clock=clock)
    clock.now += 10_000
    assert [limiter.try_acquire() for _ in range(3)] == [True, True, False]


def test_rate_limiter_survives_a_clock_stepping_back() -> None:
    clock = FakeClock()
    limiter = RateLimiter(max_per_hour=3600, burst=1, clock=clock)
    clock.now -= 50
    assert limiter.try_acquire()


@pytest.mark.parametrize(("per_hour", "burst"), [(0, 1), (1, 0), (-5, 3)])
def test_rate_limiter_rejects_non_positive_settings(per_hour: int, burst: int) -> None:
    with pytest.raises(InvalidInput):
        RateLimiter(per_hour, burst)


# -- make_llm -----------------------------------------------------------------------------------


def test_make_llm_none_gives_no_llm() -> None:
    assert make_llm("none") is None


def test_make_llm_unknown_provider_is_invalid_input() -> None:
    with pytest.raises(InvalidInput, match="'gpt5' .*known: none, anthropic, claude-code, codex, command"):
        make_llm("gpt5")


@pytest.mark.parametrize("name", [*HTTP_PROVIDERS, "command"])
def test_make_llm_builds_every_builtin_provider(name: str) -> None:
    llm = opened(make_llm(name, model="m", command=["true"]))
    assert isinstance(llm, LLM) and llm.name == name and llm.model == "m"


def test_make_llm_defaults_to_the_provider_default_base_url() -> None:
    ollama = opened(make_llm("ollama", model="m"))
    anthropic = opened(make_llm("anthropic", model="m"))
    assert isinstance(ollama, OllamaLLM) and isinstance(anthropic, AnthropicLLM)
    assert ollama.url == "http://127.0.0.1:11434/api/chat"
    assert anthropic.url == "https://api.anthropic.com/v1/messages"


@pytest.mark.parametrize("name", HTTP_PROVIDERS)
def test_http_provider_without_a_model_is_invalid_input(name: str) -> None:
    with pytest.raises(InvalidInput, match="needs a model"):
        make_llm(name)


def test_command_provider_without_a_command_is_invalid_input() -> None:
    with pytest.raises(InvalidInput, match="needs a command"):
        make_llm("command")


def test_a_registered_plugin_is_selectable_like_a_builtin(monkeypatch: pytest.MonkeyPatch) -> None:
    class Echo:
        name = "echo"

        def __init__(self, settings: LLMSettings) -> None:
            self.model = settings.model

        def complete(self, prompt: str, **_: Any) -> Completion:
            return Completion(prompt, None, None, 0.0, self.model, self.name)

    def factory(settings: LLMSettings, limiter: RateLimiter, sink: UsageSink | None) -> LLM:
        return Echo(settings)

    monkeypatch.setitem(LLM_PROVIDERS, "echo", factory)
    llm = make_llm("echo", model="e1")
    assert llm is not None and llm.complete("hi").text == "hi"


def _dig(body: Any, keys: tuple[str, ...]) -> Any:
    for key in keys:
        body = body[key]
    return body
