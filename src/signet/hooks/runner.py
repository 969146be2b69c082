"""Run one hook and fail open: whatever happens, the harness gets valid output or none.

Captures are spooled before the daemon is asked and deleted once it answers, so failing open loses
none. The hook runs in a worker thread the main thread waits for at most the event's budget
(`hooks.*_timeout_ms`); past it, or on any error, the output is empty, one line goes to hooks.log
and the exit code is 0.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time

from signet import spool
from signet.hooks.autostart import start_daemon
from signet.hooks.formats import render
from signet.hooks.payloads import to_request
from signet.hooks.settings import HookSettings, load_settings, resolve_workspace
from signet.hooks.transport import DaemonDown, post

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing and pathlib cost a hook process imports it does not need at run time
    from collections.abc import Mapping
    from pathlib import Path
    from typing import Any, BinaryIO

__all__ = [
    "EVENTS", "GUARD_ENV", "HARNESSES", "LOG_NAME", "emit", "exit_now_if_abandoned", "guarded", "run",
]

EVENTS = ("session-start", "user-prompt-submit", "pre-compaction", "session-end")
HARNESSES = ("claude-code", "codex", "opencode", "cursor", "generic")
LOG_NAME = "hooks.log"
MAX_STDIN_BYTES = 8 * 1024 * 1024
DEFAULT_BUDGET_MS = 1000
SPOOL_GRACE_S = 5.0
MAX_SPOOLED_TRANSCRIPT_BYTES = 64 * 1024 * 1024  # larger: the path is spooled, read at import
HANDOFF_EVENTS = ("session-end", "pre-compaction")
# Set by the `command` LLM provider for the harness CLI it runs (providers/llm_command.py):
# that CLI's own hooks would call the daemon, whose pipeline would call the CLI again.
GUARD_ENV = ("SIGNET_NO_HOOKS", "SIGNET_BYPASS")


def guarded(env: Mapping[str, str]) -> bool:
    """True when the re-entry guard is set: the hook then does nothing at all."""
    return any(env.get(name, "").strip().lower() not in ("", "0", "false", "no") for name in GUARD_ENV)


def run(
    event: str, harness: str, stdin: BinaryIO, *, workspace: str | Path | None,
    env: Mapping[str, str],
) -> str:
    """The hook's stdout ("" when there is nothing to say, anything failed, or the re-entry
    guard is set: then not even stdin or the configuration is read)."""
    if guarded(env):
        return ""
    started = time.monotonic()
    where = str(workspace) if workspace is not None and str(workspace) else None
    try:
        cfg = load_settings(where, env)
    except Exception as exc:  # a broken agent.yaml must not break the agent
        _log(_fallback_log_dir(where, env), event, harness, f"configuration: {exc}")
        return ""
    budget_s = cfg.budgets_ms.get(event, DEFAULT_BUDGET_MS) / 1000
    outcome: dict[str, Any] = {}
    spooling = threading.Event()  # set while a spool file is being written
    spooled = threading.Event()  # set once it is written (or failed)

    def work() -> None:
        try:
            outcome["out"] = _ask(cfg, event, harness, stdin, started + budget_s,
                                  (spooling, spooled, outcome), env)
        except Exception as exc:  # every failure is logged and swallowed
            outcome["error"] = exc

    thread = threading.Thread(target=work, name="signet-hook", daemon=True)
    thread.start()
    thread.join(max(budget_s - (time.monotonic() - started), 0))
    if thread.is_alive() and spooling.is_set() and not spooled.is_set():
        spooled.wait(SPOOL_GRACE_S)  # a capture half written is finished, not dropped
    if thread.is_alive():
        message = f"gave up after its {budget_s * 1000:.0f} ms budget"
        _log(cfg.log_dir, event, harness, message + _spool_note(outcome))
        return ""
    if "error" in outcome:
        _log(cfg.log_dir, event, harness, _describe(outcome["error"]) + _spool_note(outcome))
        return ""
    return str(outcome.get("out", ""))


def emit(out: str) -> None:
    """Print the hook's output as UTF-8 whatever the locale's encoding (a cp1252 or latin-1
    stdout cannot encode most memories, and a lone surrogate no encoding takes): an encoding
    error here would be a traceback and exit 1 in the agent's session. A closed stdout is
    ignored for the same reason."""
    if not out:
        return
    data = (out + "\n").encode("utf-8", "replace")
    try:
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    except (AttributeError, OSError, ValueError):
        pass


def exit_now_if_abandoned() -> None:
    """End the process at once (exit 0) when a hook worker runs past its budget: a normal exit
    closes stdin while the worker is inside `stdin.read()`, and CPython then aborts (SIGABRT),
    which the harness would see as a crash. Output is flushed first."""
    if any(t.name == "signet-hook" and t.is_alive() for t in threading.enumerate()):
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(0)


def _ask(
    cfg: HookSettings, event: str, harness: str, stdin: BinaryIO, deadline: float,
    state: tuple[threading.Event, threading.Event, dict[str, Any]], env: Mapping[str, str],
) -> str:
    raw = stdin.read(MAX_STDIN_BYTES + 1)
    if len(raw) > MAX_STDIN_BYTES:
        raise ValueError(f"the hook payload is over {MAX_STDIN_BYTES} bytes")
    try:
        payload = json.loads(raw or b"{}")
    except ValueError as exc:
        raise ValueError(f"the hook payload is not JSON: {exc}") from exc
    body = to_request(harness, payload)
    kept = _spool(cfg, event, harness, body, state)
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("no time left to ask the daemon")
    try:
        answer = post(cfg.bind, cfg.port, f"/api/hooks/{event}", body, cfg.token_path, left)
    except DaemonDown as exc:
        started = start_daemon(cfg, env)
        if started:
            raise DaemonDown(f"{exc}; {started}") from exc
        raise
    # A request the store refused stays spooled: the daemon's import sets it aside in failed/
    # with the reason, where `signet doctor` shows it.
    if not (isinstance(answer, dict) and answer.get("capture_refused")):
        spool.remove(kept)  # the daemon has it now
        state[2].pop("spooled_path", None)
    return render(harness, event, answer)


def _spool(
    cfg: HookSettings, event: str, harness: str, body: dict[str, Any],
    state: tuple[threading.Event, threading.Event, dict[str, Any]],
) -> str | None:
    """Write the event to the spool first when it carries something to keep: a transcript
    (session-end, pre-compaction) or a prompt that may ask to remember something."""
    transcript: bytes | None = None
    if event in HANDOFF_EVENTS:
        if not body.get("transcript_path") and not body.get("transcript"):
            return None
        transcript = _transcript_bytes(body.get("transcript_path"))
    elif event != "user-prompt-submit" or "remember" not in str(body.get("prompt", "")).lower():
        return None
    spooling, spooled, outcome = state
    spooling.set()
    try:
        path = spool.write(cfg.workspace, event, harness, body, transcript)
    finally:
        spooled.set()
    if path:
        outcome["spooled_path"] = path
    return path


def _transcript_bytes(path: Any) -> bytes | None:
    """The transcript file's raw bytes; None when there is none to read (or it is too large:
    then the spooled path is read at import time)."""
    if not isinstance(path, str) or not path:
        return None
    try:
        with open(os.path.expanduser(path), "rb") as handle:
            data = handle.read(MAX_SPOOLED_TRANSCRIPT_BYTES + 1)
    except OSError:
        return None
    return data if len(data) <= MAX_SPOOLED_TRANSCRIPT_BYTES else None


def _spool_note(outcome: dict[str, Any]) -> str:
    path = outcome.get("spooled_path")
    return f"; spooled as {os.path.basename(path)} for the daemon to import" if path else ""


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:500]


def _fallback_log_dir(workspace: str | None, env: Mapping[str, str]) -> str | None:
    if not workspace and not env.get("SIGNET_WORKSPACE"):
        return None
    return os.path.join(resolve_workspace(workspace, env), ".daemon", "logs")


def _log(log_dir: str | None, event: str, harness: str, message: str) -> None:
    """One line per failure; a log that cannot be written is not a reason to fail either."""
    if log_dir is None or not os.path.isdir(os.path.dirname(os.path.dirname(log_dir))):
        return  # no workspace there: never create one just to log
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    line = f"{stamp} {event} {harness}: {' '.join(message.split())}\n"
    try:
        os.makedirs(log_dir, exist_ok=True)
        with open(os.path.join(log_dir, LOG_NAME), "a", encoding="utf-8") as handle:
            handle.write(line)
    except OSError:
        pass


