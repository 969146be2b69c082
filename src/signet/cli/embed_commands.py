"""`signet embed audit|backfill`: how many live memories lack a current vector of the configured
model, and filling the gaps, through the daemon's embed worker when one serves the workspace,
else in-process.
"""

from __future__ import annotations

import time
from typing import Any

import click
from rich.progress import Progress

from signet.cli.client import Client, LocalClient
from signet.cli.output import console
from signet.cli.state import CliState, json_and_state

__all__ = ["COMMANDS"]

POLL_S = 0.2


@click.group()
def embed() -> None:
    """Audit and backfill the stored vectors."""


@embed.command()
@json_and_state
def audit(state: CliState) -> None:
    """Memories with and without a current vector of the configured model."""
    state.call(lambda c: c.embeddings_status(), _print_audit)


@embed.command()
@json_and_state
def backfill(state: CliState) -> None:
    """Embed every live memory that has no current vector, with a progress bar."""
    with state.connect() as client:
        queued = client.re_embed()
        total = int(client.embeddings_status()["audit"]["missing"])
        with Progress(console=console(), disable=state.json or total == 0) as bar:
            task = bar.add_task("embedding", total=total)
            while _embedding(client):
                missing = int(client.embeddings_status()["audit"]["missing"])
                bar.update(task, completed=total - missing)
        status = client.embeddings_status()
        state.show({"queued": queued, "audit": status["audit"]}, _print_backfill)


def _embedding(client: Client) -> bool:
    """Whether the embed jobs are still being worked on: in-process, one tick of the embed
    worker here; with a daemon, whether its queue still holds embed jobs (asked every POLL_S)."""
    if isinstance(client, LocalClient):
        return client.work("embed")
    jobs = client.embeddings_status()["jobs"]
    if not (jobs.get("pending", 0) or jobs.get("leased", 0)):
        return False
    time.sleep(POLL_S)
    return True


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
