"""`signet hook <event> [--harness NAME]`: the click command the harnesses run.

Registered in the CLI by signet/cli/main.py; it reads nothing but its own options and the
global `--workspace` (from the click context, without importing the CLI), and prints only
what runner.run returns.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from signet.hooks.runner import EVENTS, HARNESSES, emit, exit_now_if_abandoned, run

__all__ = ["hook"]


class _HookUsageError(click.UsageError):
    exit_code = 1


class _HookCommand(click.Command):
    """Usage errors exit 1, not click's 2: Claude Code reads exit 2 from a hook as "block this
    prompt" (and erases it), so a stale or mistyped hook line must not cost the user every
    prompt; any other code shows the message and lets the session go on."""

    def make_context(self, info_name: str | None, args: list[str],
                     parent: click.Context | None = None, **extra: object) -> click.Context:
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.UsageError as exc:
            raise _HookUsageError(exc.format_message(), exc.ctx) from exc


@click.command("hook", cls=_HookCommand)
@click.argument("event", type=click.Choice(EVENTS))
@click.option(
    "--harness", type=click.Choice(HARNESSES), default="generic", show_default=True,
    help="Whose payload is on stdin and whose output format to print.",
)
@click.pass_context
def hook(ctx: click.Context, event: str, harness: str) -> None:
    """Run a harness hook: payload on stdin, context for the agent on stdout.

    Talks to the workspace's daemon; never fails the agent (empty output, exit 0, one line in
    .daemon/logs/hooks.log when anything goes wrong)."""
    workspace = getattr(ctx.obj, "workspace", None)
    out = run(
        event, harness, sys.stdin.buffer, workspace=Path(workspace) if workspace else None,
        env=os.environ,
    )
    emit(out)
    exit_now_if_abandoned()
