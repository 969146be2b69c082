"""The fast path of `signet hook ...`: argv parsed by hand, no click, no CLI modules.

A harness starts the hook on every prompt, so its process start is part of the agent's
latency. `signet.__main__` hands an argv of the exact form `[--workspace DIR] [--port N] hook
EVENT [--harness NAME]` here before importing the CLI; anything else (help, a typo, another option)
returns None and the full click CLI handles it, with its usual messages.
"""

from __future__ import annotations

import os
import sys

__all__ = ["global_options", "parse", "run_fast"]

EVENTS = ("session-start", "user-prompt-submit", "pre-compaction", "session-end")
HARNESSES = ("claude-code", "codex", "opencode", "cursor", "generic")


def global_options(argv: list[str]) -> tuple[str | None, str | None, list[str]] | None:
    """(workspace, port, the rest) from leading `--workspace DIR` / `--port N` options; None
    when they are malformed (click then says what is wrong)."""
    args = list(argv)
    options: dict[str, str] = {}
    while args and args[0].startswith("--") and args[0].split("=", 1)[0] in ("--workspace", "--port"):
        name, sep, value = args[0].partition("=")
        if sep:
            args = args[1:]
        elif len(args) >= 2:
            value, args = args[1], args[2:]
        else:
            return None
        if name in options:
            return None
        options[name] = value
    port = options.get("--port")
    if port is not None and not (port.isdigit() and 1 <= int(port) <= 65535):
        return None
    return options.get("--workspace"), port, args


def parse(argv: list[str]) -> tuple[str | None, str, str, str | None] | None:
    """(workspace, event, harness, port) when argv is a plain hook call, else None. The
    workspace stays a string: pathlib is an import the hook process does without."""
    found = global_options(argv)
    if found is None:
        return None
    workspace, port, args = found
    if len(args) < 2 or args[0] != "hook" or args[1] not in EVENTS:
        return None
    rest, harness = args[2:], "generic"
    if rest[:1] == ["--harness"] and len(rest) == 2:
        harness = rest[1]
    elif len(rest) == 1 and rest[0].startswith("--harness="):
        harness = rest[0].split("=", 1)[1]
    elif rest:
        return None
    return (workspace, args[1], harness, port) if harness in HARNESSES else None


def run_fast(workspace: str | None, event: str, harness: str, port: str | None = None) -> int:
    from signet.hooks.runner import emit, exit_now_if_abandoned, run

    env = os.environ if port is None else {**os.environ, "SIGNET_PORT": port}
    out = run(event, harness, sys.stdin.buffer, workspace=workspace, env=env)
    emit(out)
    exit_now_if_abandoned()
    return 0
