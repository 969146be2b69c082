"""`python -m signet hook <event> --harness <name>` as the harness runs it: payload on stdin,
stdout and exit code back, wall time measured."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any


@dataclass
class HookRun:
    code: int
    stdout: str
    stderr: str
    seconds: float

    def context(self) -> str:
        """Claude Code's additionalContext ("" when the hook printed nothing)."""
        if not self.stdout.strip():
            return ""
        data = json.loads(self.stdout)
        assert set(data) == {"hookSpecificOutput"}, data
        return str(data["hookSpecificOutput"]["additionalContext"])


def run_hook(
    event: str, payload: Any, env: dict[str, str], harness: str = "claude-code",
    raw: bytes | None = None,
) -> HookRun:
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "signet", "hook", event, "--harness", harness],
        input=raw if raw is not None else json.dumps(payload).encode(), env=env,
        capture_output=True, timeout=60,
    )
    return HookRun(
        proc.returncode, proc.stdout.decode(), proc.stderr.decode(), time.monotonic() - started
    )
