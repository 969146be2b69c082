"""The fast path of `signet hook ...`: argv parsed by hand, no click, no CLI modules.

A harness starts the hook on every prompt, so its process start is part of the agent's
latency. `signet.__main__` hands an argv of the exact form `[--workspace DIR] hook EVENT
[--harness NAME]` here before importing the CLI; anything else (help, a typo, another option)
returns None and the full click CLI handles it, with its usual messages.
"""

from __future__ import annotations

import os
import sys

__all__ = ["parse", "run_fast"]

EVENTS = ("session-start", "user-prompt-submit", "pre-compaction", "session-end")
HARNESSES = ("claude-code", "codex", "opencode", "generic")


def parse(argv: list[str]) -> tuple[str | None, str, str] | None:
    """(workspace, event, harness) when argv is a plain hook call, else None. The workspace
    stays a string: pathlib is an import the hook process does without."""
    args = list(argv)
    workspace: str | None = None
    if args[:1] == ["--workspace"] and len(args) >= 2:
        workspace, args = args[1], args[2:]
    elif args and args[0].startswith("--workspace="):
        workspace, args = args[0].split("=", 1)[1], args[1:]
    if len(args) < 2 or args[0] != "hook" or args[1] not in EVENTS:
        return None
    rest, harness = args[2:], "generic"
    if rest[:1] == ["--harness"] and len(rest) == 2:
        harness = rest[1]
    elif len(rest) == 1 and rest[0].startswith("--harness="):
        harness = rest[0].split("=", 1)[1]
    elif rest:
        return None
    return (workspace, args[1], harness) if harness in HARNESSES else None


def run_fast(workspace: str | None, event: str, harness: str) -> int:
    from signet.hooks.runner import exit_now_if_abandoned, run

    out = run(event, harness, sys.stdin.buffer, workspace=workspace, env=os.environ)
    if out:
        sys.stdout.write(out + "\n")
        sys.stdout.flush()
    exit_now_if_abandoned()
    return 0
