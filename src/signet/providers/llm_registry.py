"""The LLM providers by name: `make_llm` builds the configured one; a plugin adds an entry to
`LLM_PROVIDERS`. Each factory imports its implementation on first use, so a deployment without
an LLM never loads their code."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence

from signet.errors import InvalidInput
from signet.providers.llm import LLM, LLMSettings, RateLimiter, UsageSink

LLMFactory = Callable[[LLMSettings, RateLimiter, UsageSink | None], LLM]


def _ollama(s: LLMSettings, limiter: RateLimiter, sink: UsageSink | None) -> LLM:
    from signet.providers.llm_http import OllamaLLM

    return OllamaLLM(s, limiter=limiter, usage_sink=sink)


def _openai(s: LLMSettings, limiter: RateLimiter, sink: UsageSink | None) -> LLM:
    from signet.providers.llm_http import OpenAICompatLLM

    return OpenAICompatLLM(s, limiter=limiter, usage_sink=sink)


def _anthropic(s: LLMSettings, limiter: RateLimiter, sink: UsageSink | None) -> LLM:
    from signet.providers.llm_http import AnthropicLLM

    return AnthropicLLM(s, limiter=limiter, usage_sink=sink)


def _command(s: LLMSettings, limiter: RateLimiter, sink: UsageSink | None) -> LLM:
    from signet.providers.llm_command import CommandLLM

    return CommandLLM(s, limiter=limiter, usage_sink=sink)


def _harness(name: str) -> LLMFactory:
    def factory(s: LLMSettings, limiter: RateLimiter, sink: UsageSink | None) -> LLM:
        from signet.providers.llm_harness import harness_llm

        return harness_llm(name, s, limiter, sink)

    return factory


# The registry. A plugin adds an entry (`LLM_PROVIDERS["mine"] = factory`) and is then
# selectable through configuration like the built-in ones. "none" is handled by `make_llm`.
LLM_PROVIDERS: dict[str, LLMFactory] = {
    "ollama": _ollama,
    "openai": _openai,
    "anthropic": _anthropic,
    "command": _command,
    "claude-code": _harness("claude-code"),
    "codex": _harness("codex"),
    "opencode": _harness("opencode"),
}


def make_llm(
    provider: str,
    *,
    model: str = "",
    base_url: str = "",
    timeout_ms: int = 60_000,
    api_key: str = "",
    command: Sequence[str] = (),
    max_calls_per_hour: int = 600,
    burst: int = 10,
    max_tokens: int = 1024,
    concurrency: int = 1,
    usage_sink: UsageSink | None = None,
) -> LLM | None:
    """The LLM configured by `provider` (ollama|openai|anthropic|command), or None for "none".

    A `command` given as one string is split shell-style, so `"claude -p"` works as written.
    """
    name = provider.strip().lower()
    if name == "none":
        return None
    factory = LLM_PROVIDERS.get(name)
    if factory is None:
        known = ", ".join(["none", *sorted(LLM_PROVIDERS)])
        raise InvalidInput(f"unknown llm provider {provider!r} (known: {known})")
    if timeout_ms < 1 or max_tokens < 1 or concurrency < 1:
        raise InvalidInput("llm timeout_ms, max_tokens and concurrency must be at least 1")
    settings = LLMSettings(
        model=model,
        base_url=base_url,
        timeout_ms=timeout_ms,
        api_key=api_key,
        command=_argv(command),
        max_tokens=max_tokens,
        concurrency=concurrency,
    )
    return factory(settings, RateLimiter(max_calls_per_hour, burst), usage_sink)


def _argv(command: Sequence[str]) -> tuple[str, ...]:
    if isinstance(command, str):
        return tuple(shlex.split(command))
    return tuple(command)
