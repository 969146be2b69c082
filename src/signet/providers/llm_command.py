"""The `command` LLM provider: run a configured CLI once per completion. The prompt goes on stdin,
never in argv where `ps` shows it; the child gets `SIGNET_NO_HOOKS=1` and `SIGNET_BYPASS=1` so an
agent CLI's hooks do not call the daemon back in a loop; its process group is killed at the
timeout.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from pathlib import Path

from signet.errors import BadResponse, InvalidInput, ProviderError, ProviderTimeout
from signet.providers.llm import (
    JSON_INSTRUCTION,
    BaseLLM,
    LLMSettings,
    RawCompletion,
)

__all__ = ["GUARD_ENV", "CommandLLM"]

# Set in the child's environment so that our own hooks, started by the child, stand down.
GUARD_ENV = {"SIGNET_NO_HOOKS": "1", "SIGNET_BYPASS": "1"}

STDERR_TAIL_CHARS = 500


class CommandLLM(BaseLLM):
    """A completion is one run of `command` with the prompt on stdin and the reply on stdout."""

    name = "command"
    # Set in the child's environment on top of ours (a harness provider's own settings).
    extra_env: dict[str, str] = {}  # read only, replaced by subclasses

    def _model(self, settings: LLMSettings) -> str:
        if not settings.command:
            raise InvalidInput("llm provider command needs a command (llm.command)")
        return settings.model or Path(settings.command[0]).name

    def _setup(self, settings: LLMSettings) -> None:
        self.command = self._argv(settings)
        self.timeout_ms = settings.timeout_ms
        # Each run is a whole process (an agent CLI for the harness providers): at most
        # `concurrency` at once, the others wait their turn.
        self._slots = threading.BoundedSemaphore(settings.concurrency)

    def _argv(self, settings: LLMSettings) -> tuple[str, ...]:
        """The command line run per completion."""
        return settings.command

    @property
    def target(self) -> str:
        # The program only: arguments may hold secrets (an API key flag).
        return f"command {self.command[0]!r}"

    def _complete(
        self, prompt: str, *, system: str | None, json_mode: bool, max_tokens: int
    ) -> RawCompletion:
        with self._slots:
            stdout, stderr, code = self._run(_stdin_text(prompt, system, json_mode))
        return self._reply(stdout, stderr, code)

    def _reply(self, stdout: str, stderr: str, code: int) -> RawCompletion:
        """The completion in what the run printed, or the error it amounts to."""
        if code != 0:
            tail = stderr.strip()[-STDERR_TAIL_CHARS:] or "(no stderr)"
            raise ProviderError(f"{self.name}: {self.target} exited with status {code}: {tail}")
        if not stdout.strip():
            raise BadResponse(f"{self.name}: {self.target} printed nothing on stdout")
        return RawCompletion(stdout.strip())

    def _run(self, stdin_text: str) -> tuple[str, str, int]:
        try:
            proc = subprocess.Popen(
                self.command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                errors="replace",
                env={**_child_env(), **self.extra_env},
                start_new_session=True,
            )
        except OSError as exc:
            raise ProviderError(f"{self.name}: cannot run {self.target}: {exc}") from exc
        with proc:
            try:
                stdout, stderr = proc.communicate(stdin_text, timeout=self.timeout_ms / 1000.0)
            except subprocess.TimeoutExpired:
                _kill_group(proc)
                _drain(proc)
                raise ProviderTimeout(
                    f"{self.name}: {self.target} gave no reply within {self.timeout_ms} ms"
                ) from None
        return stdout, stderr, proc.returncode


def _stdin_text(prompt: str, system: str | None, json_mode: bool) -> str:
    parts = [system] if system else []
    if json_mode:
        parts.append(JSON_INSTRUCTION)
    parts.append(prompt)
    return "\n\n".join(parts)


def _child_env() -> dict[str, str]:
    # The child inherits our environment (PATH, HOME, its own API keys) plus the guard; this is
    # pass-through for the child, not configuration read by Signet.
    return {**os.environ, **GUARD_ENV}


def _drain(proc: subprocess.Popen[str]) -> None:
    try:
        proc.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        pass  # something outside the group still holds the pipes; closing them is enough


def _kill_group(proc: subprocess.Popen[str]) -> None:
    try:
        if hasattr(os, "killpg"):
            os.killpg(proc.pid, signal.SIGKILL)
        else:  # Windows: no process groups through this API
            proc.kill()
    except ProcessLookupError:
        pass  # it exited between the timeout and the kill
