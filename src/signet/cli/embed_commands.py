"""`signet embed audit|backfill`: how many live memories have a current vector of the configured
model, and filling the gaps (after a model change, or memories written while the embedder was
down) with a progress bar. In-process on the workspace, like `signet pipeline run`: embed jobs
are leased atomically, so running this next to a daemon is safe."""

from __future__ import annotations

from typing import Any

import click
from rich.progress import Progress

from signet.cli.output import console
from signet.cli.pipeline_commands import open_app
from signet.cli.state import CliState, json_option

__all__ = ["COMMANDS"]


@click.group()
def embed() -> None:
    """Audit and backfill the stored vectors."""


@embed.command()
@json_option
@click.pass_obj
def audit(state: CliState) -> None:
    """Memories with and without a current vector of the configured model."""
    with open_app(state, providers=True, existing=True) as app:
        state.show(app.embeddings_status(), _print_audit)


@embed.command()
@json_option
@click.pass_obj
def backfill(state: CliState) -> None:
    """Embed every live memory that has no current vector, with a progress bar."""
    with open_app(state, providers=True) as app:
        queued = app.re_embed()
        worker = next(w for w in app.workers() if w.name == "embed")
        total = int(app.embeddings_status()["audit"]["missing"])
        with Progress(console=console(), disable=state.json or total == 0) as bar:
            task = bar.add_task("embedding", total=total)
            while worker.tick(app.clock.now()):
                missing = int(app.embeddings_status()["audit"]["missing"])
                bar.update(task, completed=total - missing)
        status = app.embeddings_status()
        state.show({"queued": queued, "audit": status["audit"]}, _print_backfill)


def _print_audit(data: dict[str, Any]) -> None:
    audit = data.get("audit") or {}
    console().print(
        f"{data['provider']} {data.get('model') or ''}: {audit.get('embedded', 0)} of "
        f"{audit.get('memories', 0)} memories embedded, {audit.get('missing', 0)} missing, "
        f"{audit.get('stale', 0)} stale vectors"
    )


def _print_backfill(data: dict[str, Any]) -> None:
    audit = data["audit"]
    console().print(
        f"backfill done: {audit['embedded']} of {audit['memories']} embedded, "
        f"{audit['missing']} missing"
    )


COMMANDS = [embed]
