"""Run one hook and fail open: whatever happens, the harness gets valid output or none.

The whole hook (reading stdin, asking the daemon, formatting) runs in a worker thread that the
main thread waits for at most the event's time budget (hooks.*_timeout_ms in agent.yaml,
defaults 2 s for session-start, 1 s for user-prompt-submit). Past the budget, or on any error
(no daemon, a refused token, a malformed payload, a locked database answered with 503), the
result is empty output and one line in `<workspace>/.daemon/logs/hooks.log`; the exit code is
always 0, so a hook never blocks or breaks the agent. The thread is a daemon thread: a hung
read cannot keep the process alive after the budget.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, BinaryIO

from signet.config import Config
from signet.hooks.formats import render
from signet.hooks.payloads import to_request
from signet.hooks.transport import post

__all__ = ["EVENTS", "HARNESSES", "LOG_NAME", "run"]

EVENTS = ("session-start", "user-prompt-submit", "pre-compaction", "session-end")
HARNESSES = ("claude-code", "codex", "opencode", "generic")
LOG_NAME = "hooks.log"
MAX_STDIN_BYTES = 8 * 1024 * 1024
DEFAULT_BUDGET_MS = 1000


def run(
    event: str, harness: str, stdin: BinaryIO, *, workspace: Path | None,
    env: Mapping[str, str],
) -> str:
    """The hook's stdout ("" when there is nothing to say or anything failed)."""
    started = time.monotonic()
    try:
        cfg = Config.load(workspace, env)
    except Exception as exc:  # noqa: BLE001 - a broken agent.yaml must not break the agent
        _log(_fallback_log_dir(workspace, env), event, harness, f"configuration: {exc}")
        return ""
    budget_s = _budget_ms(cfg, event) / 1000
    outcome: dict[str, Any] = {}

    def work() -> None:
        try:
            outcome["out"] = _ask(cfg, event, harness, stdin, started + budget_s)
        except Exception as exc:  # noqa: BLE001 - every failure is logged and swallowed
            outcome["error"] = exc

    thread = threading.Thread(target=work, name="signet-hook", daemon=True)
    thread.start()
    thread.join(max(budget_s - (time.monotonic() - started), 0))
    if thread.is_alive():
        _log(cfg.log_dir, event, harness, f"gave up after its {budget_s * 1000:.0f} ms budget")
        return ""
    if "error" in outcome:
        _log(cfg.log_dir, event, harness, _describe(outcome["error"]))
        return ""
    return str(outcome.get("out", ""))


def _ask(cfg: Config, event: str, harness: str, stdin: BinaryIO, deadline: float) -> str:
    raw = stdin.read(MAX_STDIN_BYTES + 1)
    if len(raw) > MAX_STDIN_BYTES:
        raise ValueError(f"the hook payload is over {MAX_STDIN_BYTES} bytes")
    try:
        payload = json.loads(raw or b"{}")
    except ValueError as exc:
        raise ValueError(f"the hook payload is not JSON: {exc}") from exc
    body = to_request(harness, payload)
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("no time left to ask the daemon")
    answer = post(cfg.bind, cfg.port, f"/api/hooks/{event}", body, cfg.token_path, left)
    return render(harness, event, answer)


def _budget_ms(cfg: Config, event: str) -> int:
    hooks = cfg.hooks
    return {
        "session-start": hooks.session_start_timeout_ms,
        "user-prompt-submit": hooks.prompt_submit_timeout_ms,
        "pre-compaction": hooks.session_end_timeout_ms,
        "session-end": hooks.session_end_timeout_ms,
    }.get(event, DEFAULT_BUDGET_MS)


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:500]


def _fallback_log_dir(workspace: Path | None, env: Mapping[str, str]) -> Path | None:
    root = workspace or (Path(env["SIGNET_WORKSPACE"]) if env.get("SIGNET_WORKSPACE") else None)
    return root / ".daemon" / "logs" if root else None


def _log(log_dir: Path | None, event: str, harness: str, message: str) -> None:
    """One line per failure; a log that cannot be written is not a reason to fail either."""
    if log_dir is None or not log_dir.parent.parent.is_dir():
        return  # no workspace there: never create one just to log
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    line = f"{stamp} {event} {harness}: {' '.join(message.split())}\n"
    try:
        log_dir.mkdir(parents=True, exist_ok=True)
        with open(log_dir / LOG_NAME, "a", encoding="utf-8") as handle:
            handle.write(line)
    except OSError:
        pass


