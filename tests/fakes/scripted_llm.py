"""An in-process stand-in for the LLM seam (`pipeline.llm_json.CompletingLLM`), for unit tests
of the pipeline's pure functions (extraction, decision, contradiction, hints) that take the
seam as an argument: a fixed reply, or a failure, and a record of every call.

It answers with the provider's real `Completion` record. Tests of a configured provider, a
worker or the daemon use the loopback server in llm_server.py instead, which speaks the real
wire formats.
"""

from __future__ import annotations

from signet.providers.llm import Completion

__all__ = ["ScriptedLLM"]


class ScriptedLLM:
    """`complete()` returns `reply` (or raises `error`) and records (prompt, system, json_mode).
    `require_json`: a call without json_mode fails the test (the caller must ask for JSON)."""

    def __init__(
        self, reply: str = "", *, error: Exception | None = None, require_json: bool = False
    ) -> None:
        self.reply, self.error, self.require_json = reply, error, require_json
        self.calls: list[tuple[str, str | None, bool]] = []

    @property
    def prompts(self) -> list[str]:
        return [prompt for prompt, _system, _json in self.calls]

    def complete(
        self,
        prompt: str,
        *,
        system: str | None = None,
        json_mode: bool = False,
        max_tokens: int | None = None,
    ) -> Completion:
        assert json_mode or not self.require_json, "the call did not ask for JSON"
        self.calls.append((prompt, system, json_mode))
        if self.error is not None:
            raise self.error
        return Completion(
            text=self.reply, prompt_tokens=None, completion_tokens=None, latency_ms=0.0,
            model="scripted", provider="scripted",
        )
