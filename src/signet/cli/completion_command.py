"""`signet completion bash|zsh|fish`: print click's completion script for the shell. Completing
imports only the module of the command being completed; nothing of the workspace is read.
"""

from __future__ import annotations

import click
from click.shell_completion import get_completion_class

__all__ = ["completion"]

SHELLS = ("bash", "zsh", "fish")


@click.command()
@click.argument("shell", type=click.Choice(SHELLS))
def completion(shell: str) -> None:
    """Print the shell completion script for SHELL (bash, zsh or fish)."""
    from signet.cli.main import cli

    complete = get_completion_class(shell)
    assert complete is not None  # every name in SHELLS is one click ships
    click.echo(complete(cli, {}, "signet", "_SIGNET_COMPLETE").source())
