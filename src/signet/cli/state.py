"""What the global options decided, handed to every command as click's context object
(`@json_and_state`; `@click.pass_obj` where a command takes no --json).

`CliState` loads the configuration lazily (so `signet init` can create the workspace before
anything reads it), opens the client, and decides between tables and JSON in one place.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from signet.cli.client import Client, connect, require_workspace
from signet.cli.output import print_json
from signet.config import Config

__all__ = ["CliState", "json_and_state"]


@dataclass
class CliState:
    workspace: Path | None = None
    json: bool = False
    _config: Config | None = field(default=None, repr=False)

    def config(self) -> Config:
        """The workspace's configuration, loaded once on first use."""
        if self._config is None:
            self._config = Config.load(self.workspace, os.environ)
            for warning in self._config.warnings:
                click.echo(f"warning: {warning}", err=True)
        return self._config

    def existing_config(self) -> Config:
        """The configuration of a workspace that exists (see `client.require_workspace`)."""
        config = self.config()
        require_workspace(config)
        return config

    def connect(self) -> Client:
        """The running daemon, or the store in-process (see `client.connect`)."""
        return connect(self.config())

    def call(self, operation: Callable[[Client], Any], render: Callable[[Any], None]) -> None:
        """One client operation, its answer shown once the client is closed."""
        with self.connect() as client:
            data = operation(client)
        self.show(data, render)

    def show(self, data: Any, render: Callable[[Any], None]) -> None:
        if self.json:
            print_json(data)
        else:
            render(data)


def json_and_state(command: Callable[..., Any]) -> Callable[..., Any]:
    """The CliState as the command's first argument, and `--json` after its name too (`signet
    get ID --json`), same as the global flag: what every command showing an answer takes."""

    def set_json(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
        if value:
            ctx.ensure_object(CliState).json = True

    return click.option(
        "--json", "json_output", is_flag=True, expose_value=False, callback=set_json,
        help="Print the HTTP contract's JSON instead of tables.",
    )(click.pass_obj(command))
