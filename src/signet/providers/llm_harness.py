"""Harness providers: the user's own agent CLI as the pipeline's LLM. `claude-code` runs `claude -p`
as a bare text function (no tools, MCP servers, skills or saved session), so the subscription
pays for Signet's text and not the agent's scaffolding; `codex` and `opencode` run with every
tool denied. The rest is the `command` provider's.
"""

from __future__ import annotations

import json
from typing import Any

from signet.errors import BadResponse, ProviderError
from signet.providers.llm import LLMSettings, RateLimiter, RawCompletion, UsageSink
from signet.providers.llm_command import STDERR_TAIL_CHARS, CommandLLM

__all__ = ["HARNESSES", "ClaudeCodeLLM", "CodexLLM", "HarnessLLM", "OpenCodeLLM", "harness_llm"]

# provider -> (default binary, arguments after it, default model, model flag)
CLAUDE_SYSTEM = "You process text for a memory system. Follow the instructions in the message."
HARNESSES: dict[str, tuple[str, tuple[str, ...], str, str]] = {
    "claude-code": ("claude", ("-p", "--output-format", "json", "--tools", "",
                               "--strict-mcp-config", "--disable-slash-commands",
                               "--no-session-persistence", "--system-prompt", CLAUDE_SYSTEM),
                    "haiku", "--model"),
    "codex": ("codex", ("exec", "--skip-git-repo-check"), "", "--model"),
    "opencode": ("opencode", ("run",), "", "--model"),
}


class HarnessLLM(CommandLLM):
    """One harness run per completion; see the module docstring."""

    def _model(self, settings: LLMSettings) -> str:
        return settings.model or HARNESSES[self.name][2] or self.name

    def _argv(self, settings: LLMSettings) -> tuple[str, ...]:
        binary, args, default_model, model_flag = HARNESSES[self.name]
        model = settings.model or default_model
        argv = [*(settings.command or (binary,)), *args]
        if model:
            argv += [model_flag, model]
        if self.name == "codex":
            argv.append("-")  # read the prompt from stdin
        return tuple(argv)


class CodexLLM(HarnessLLM):
    name = "codex"


class OpenCodeLLM(HarnessLLM):
    name = "opencode"
    # `opencode run` is a whole agent: it runs shell commands, reads and edits files and fetches
    # URLs without asking, steered by the text it is given, which here is memories and
    # transcripts any token wrote. OpenCode applies OPENCODE_PERMISSION after every config
    # file, and a tool denied by "*" is not even offered to the model: a bare text function.
    extra_env = {"OPENCODE_PERMISSION": json.dumps({"*": "deny"})}


class ClaudeCodeLLM(HarnessLLM):
    name = "claude-code"

    def _reply(self, stdout: str, stderr: str, code: int) -> RawCompletion:
        """The answer from `claude -p --output-format json`'s one result object. A failed run
        (signed out: "Not logged in · Please run /login") exits 1 and still prints the object,
        whose `result` says why: that is the error reported."""
        try:
            reply: Any = json.loads(stdout)
        except ValueError:
            if code != 0:
                return super()._reply(stdout, stderr, code)
            raise BadResponse(
                f"{self.name}: {self.target} printed no JSON result: {stdout[:200]!r}"
            ) from None
        if not isinstance(reply, dict) or not isinstance(reply.get("result"), str):
            raise BadResponse(f"{self.name}: {self.target} printed JSON without a result text")
        if reply.get("is_error") or reply.get("subtype", "success") != "success":
            detail = reply["result"].strip()[-STDERR_TAIL_CHARS:] or str(reply.get("subtype"))
            raise ProviderError(f"{self.name}: {self.target} reported an error: {detail}")
        usage: dict[str, Any] = reply["usage"] if isinstance(reply.get("usage"), dict) else {}
        return RawCompletion(reply["result"].strip(), _tokens(usage, "input_tokens"),
                             _tokens(usage, "output_tokens"))


def _tokens(usage: dict[str, Any], key: str) -> int | None:
    value = usage.get(key)
    return value if isinstance(value, int) else None


def harness_llm(
    name: str, settings: LLMSettings, limiter: RateLimiter, sink: UsageSink | None
) -> HarnessLLM:
    kinds: dict[str, type[HarnessLLM]] = {
        "claude-code": ClaudeCodeLLM, "codex": CodexLLM, "opencode": OpenCodeLLM}
    return kinds[name](settings, limiter=limiter, usage_sink=sink)
