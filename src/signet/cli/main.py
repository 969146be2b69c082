"""The `signet` command: a click group whose commands parse, make one client call and format.

Global options choose the workspace (`--workspace`, else $SIGNET_WORKSPACE, else ~/.agents) and
the output (`--json`, also accepted after any command). Errors are translated in one place,
`SignetGroup.invoke`: a `SignetError` from any command becomes its message on stderr and exit
code 1; click keeps exit code 2 for usage errors. The commands live in modules named after what
they act on (memories, the workspace, the daemon); this module only wires them together.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from signet import __version__
from signet.cli import (
    bench_commands,
    daemon_commands,
    embed_commands,
    graph_commands,
    mcp_command,
    memory_commands,
    pipeline_commands,
    retention_commands,
    secret_commands,
    token_commands,
    workspace_commands,
)
from signet.cli.state import CliState
from signet.errors import SignetError

__all__ = ["cli", "main"]


class SignetGroup(click.Group):
    """The edge where errors become exit codes: SignetError -> stderr message, exit 1."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except SignetError as exc:
            raise click.ClickException(exc.message) from exc


@click.group(cls=SignetGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--workspace", type=click.Path(path_type=Path), default=None,
    help="Workspace directory (default: $SIGNET_WORKSPACE, else ~/.agents).",
)
@click.option("--json", "json_output", is_flag=True, help="Print JSON instead of tables.")
@click.version_option(__version__, prog_name="signet")
@click.pass_context
def cli(ctx: click.Context, workspace: Path | None, json_output: bool) -> None:
    """Signet: local-first long-term memory for AI agents.

    Commands talk to the running daemon, or open the store in-process when none runs.
    """
    ctx.obj = CliState(workspace=workspace, json=json_output)


for _command in (
    *workspace_commands.COMMANDS, *memory_commands.COMMANDS, *bench_commands.COMMANDS
):
    cli.add_command(_command)
cli.add_command(daemon_commands.daemon)
cli.add_command(mcp_command.mcp)
cli.add_command(token_commands.token)
cli.add_command(secret_commands.secret)
for _command in (
    *pipeline_commands.COMMANDS, *graph_commands.COMMANDS, *embed_commands.COMMANDS,
    *retention_commands.COMMANDS,
):
    cli.add_command(_command)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point (`signet`, `python -m signet`)."""
    cli.main(args=argv, prog_name="signet")
