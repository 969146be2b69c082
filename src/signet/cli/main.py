"""The `signet` command: a click group whose commands parse, make one client call and format.

`SignetGroup.invoke` turns a `SignetError` (or a path's `OSError`) into its message on stderr and
exit code 1 (click keeps 2 for usage errors), or `{"error", "code"}` JSON with `--json`.
`COMMANDS` maps each command to the module defining it, imported only when it runs, so `signet
--help` stays fast; adding a command is one line there.
"""

from __future__ import annotations

import importlib
import json
import os
from pathlib import Path
from typing import Any

import click

from signet.version import __version__

__all__ = ["COMMANDS", "cli", "main"]

# name -> ("module:attribute", short help for `signet --help`). One line per command; the
# short help is here so listing the commands needs no import (a test checks it matches).
COMMANDS: dict[str, tuple[str, str]] = {
    "init": ("signet.cli.workspace_commands:init", "Create the workspace (directories, agent.yaml, identity files, database) if missing."),
    "setup": ("signet.cli.setup_command:setup", "Set up Signet in one step: init, connect the harnesses found, install the daemon's user service."),
    "doctor": ("signet.cli.doctor:doctor", "Check that the memory is on: daemon, version, port, hooks per harness, MCP, model, spool and recent hook failures; each problem with the command that fixes it."),
    "status": ("signet.cli.workspace_commands:status", "Show the workspace, the database, the embedder and whether a daemon serves them."),
    "remember": ("signet.cli.memory_commands:remember", 'Store CONTENT as a memory ("-" reads it from stdin).'),
    "recall": ("signet.cli.memory_commands:recall", "Find the memories that answer QUERY, with each channel's evidence."),
    "get": ("signet.cli.memory_commands:get", "Show one memory by its full id."),
    "list": ("signet.cli.memory_commands:list_memories", "List memories, newest first."),
    "modify": ("signet.cli.memory_commands:modify", "Change fields of memory ID (a new version; the old content stays in its history)."),
    "forget": ("signet.cli.memory_commands:forget", "Forget memory ID (soft delete: `signet recover` brings it back within the window)."),
    "recover": ("signet.cli.memory_commands:recover", "Bring back a forgotten memory."),
    "history": ("signet.cli.memory_commands:history", "Show every change to memory ID, oldest first."),
    "bench": ("signet.cli.bench_commands:bench", "Benchmarks: retrieval quality (locomo, memaware) and speed (write, recall, scale, cli)."),
    "daemon": ("signet.cli.daemon_commands:daemon", "Run and inspect the background daemon that owns the database."),
    "api": ("signet.cli.api_command:api", "The HTTP API: print its OpenAPI spec (the daemon also serves /docs to a logged-in browser)."),
    "mcp": ("signet.cli.mcp_command:mcp", "Serve the memory tools (memory_search, memory_store, ...) to an MCP client on stdio."),
    "token": ("signet.cli.token_commands:token", "Create, list and revoke API tokens for the daemon."),
    "connect": ("signet.cli.connect_command:connect", "Register Signet's MCP server and hooks in HARNESS's config (claude-code, codex, opencode, cursor)."),
    "hook": ("signet.hooks.command:hook", "Run a harness hook: payload on stdin, context for the agent on stdout."),
    "dashboard": ("signet.cli.dashboard_command:dashboard", "Open the dashboard in a browser, logged in by a one-time link."),
    "jobs": ("signet.cli.pipeline_commands:jobs", "Inspect the pipeline's job queue and requeue dead jobs."),
    "pipeline": ("signet.cli.pipeline_commands:pipeline", "Run the background pipeline's workers in this process."),
    "graph": ("signet.cli.graph_commands:graph", "Inspect the knowledge graph: entities, communities, pins."),
    "embed": ("signet.cli.embed_commands:embed", "Audit and backfill the stored vectors."),
    "secret": ("signet.cli.secret_commands:secret", "Store API keys and URLs encrypted; reference them in agent.yaml as secret:NAME."),
    "session": ("signet.cli.session_commands:session", "Import harness transcripts; list, show, search and forget sessions."),
    "threads": ("signet.cli.lineage_commands:threads", "Thread heads: per-topic summaries rolled into arcs and epochs."),
    "lineage": ("signet.cli.lineage_commands:lineage", "Where memory, session or artifact ID comes from and what condenses it."),
    "memory": ("signet.cli.lineage_commands:memory", "The global head: MEMORY.md, rendered from the memory database."),
    "artifacts": ("signet.cli.lineage_commands:artifacts", "The markdown artifacts (session summaries, arcs, epochs) and their index."),
    "skill": ("signet.cli.skill_commands:skill", "Install and inspect skills (folders under skills/ with a SKILL.md)."),
    "maintenance": ("signet.cli.maintenance_commands:maintenance", "Check the store's health and repair it (indexes, embeddings, jobs, graph, WAL)."),
    "retention": ("signet.cli.retention_commands:retention", "Purge expired tombstones, history, finished jobs, cold rows and idempotency keys."),
    "documents": ("signet.cli.document_commands:documents", "List, show and delete ingested documents."),
    "ingest": ("signet.cli.document_commands:ingest", "Ingest a file, a folder (recursively), a URL or stdin as document chunks."),
    "export": ("signet.cli.portable_commands:export", "Write a portable bundle (memories with history, graph, documents, sessions, identity files, config without secrets) to the folder PATH."),
    "import": ("signet.cli.portable_commands:import_", "Import a Signet export folder, a mem0 JSON export, or a folder of markdown notes."),
    "connector": ("signet.cli.connector_commands:connector", "Keep folders of notes (an Obsidian vault, say) in sync as documents."),
    "store": ("signet.cli.store_commands:store", "Move the store between backends (SQLite <-> PostgreSQL)."),
    "completion": ("signet.cli.completion_command:completion", "Print the shell completion script for SHELL (bash, zsh or fish)."),
    "backup": ("signet.cli.portable_commands:backup", "Copy the database consistently while the daemon runs (default: <workspace>/backups/memories-<time>.db)."),
}


def load_command(name: str) -> click.Command:
    """Import the module that defines command `name` and return the command."""
    module_name, _, attribute = COMMANDS[name][0].partition(":")
    command = getattr(importlib.import_module(module_name), attribute)
    if not isinstance(command, click.Command):
        raise TypeError(f"{COMMANDS[name][0]} is not a click command")
    return command


JSON_FLAG = "signet.json"  # ctx.meta key: `--json` was on the command line


class JsonFailure(click.ClickException):
    """An error printed as `{"error", "code"}` on stderr, keeping its exit code."""

    def __init__(self, message: str, code: str, exit_code: int) -> None:
        super().__init__(message)
        self.code = code
        # click types exit_code as a class constant; this one keeps the failure's own code.
        self.exit_code = exit_code  # type: ignore[misc]

    def show(self, file: Any = None) -> None:
        click.echo(json.dumps({"error": self.message, "code": self.code}), err=True)


class SignetGroup(click.Group):
    """Loads commands from `COMMANDS` on demand; the edge where errors become exit codes."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.commands:
            return self.commands[cmd_name]
        if cmd_name not in COMMANDS:
            return None
        command = load_command(cmd_name)
        self.commands[cmd_name] = command
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # The listing reads the table, so `--help` imports no command module.
        limit = formatter.width - 6 - max(len(name) for name in self.list_commands(ctx))
        rows = [(name, self._short_help(name, limit)) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def _short_help(self, name: str, limit: int) -> str:
        if name in self.commands:
            return self.commands[name].get_short_help_str(limit)
        # The listing's one-line help, as click makes it, without importing the command.
        return click.Command(name, help=COMMANDS[name][1]).get_short_help_str(limit)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        # Seen before any parsing, so a usage error in the command's own arguments (raised
        # before its `--json` option is processed) is still reported as JSON.
        ctx.meta[JSON_FLAG] = "--json" in args
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        from signet.errors import SignetError

        try:
            return super().invoke(ctx)
        except SignetError as exc:
            if _wants_json(ctx):
                raise JsonFailure(exc.message, exc.code, 1) from exc
            raise click.ClickException(exc.message) from exc
        except OSError as exc:
            # The machine's answer (no such folder, permission denied, disk full) about a path
            # the user named: a message, not a traceback; JSON too under --json.
            message = f"{exc.strerror or exc}" + (f": {exc.filename}" if exc.filename else "")
            if _wants_json(ctx):
                raise JsonFailure(message, "os_error", 1) from exc
            raise click.ClickException(message) from exc
        except UnicodeEncodeError as exc:
            # An argument that is not UTF-8 (the shell passes bytes; Python keeps the bad ones
            # as lone surrogates) reaches a store or a request that must encode it: name it.
            message = (f"not valid UTF-8 text: '{_bytes_shown(exc.object)}' (an argument holds"
                       " bytes that are not UTF-8)")
            if _wants_json(ctx):
                raise JsonFailure(message, "invalid_input", 1) from exc
            raise click.ClickException(message) from exc
        except click.ClickException as exc:
            if not _wants_json(ctx) or isinstance(exc, JsonFailure):
                raise
            code = "usage_error" if isinstance(exc, click.UsageError) else "error"
            raise JsonFailure(exc.format_message(), code, exc.exit_code) from exc


def _bytes_shown(text: str) -> str:
    """`text` as the bytes the user typed (a bad byte as \\xff), cut to 80 characters."""
    try:
        raw = text[:80].encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate no byte maps to
        return text[:80].encode("utf-8", "backslashreplace").decode("ascii", "replace")
    return repr(raw)[2:-1]


def _wants_json(ctx: click.Context) -> bool:
    return bool(ctx.meta.get(JSON_FLAG) or getattr(ctx.obj, "json", False))


@click.group(cls=SignetGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--workspace", type=click.Path(path_type=Path), default=None,
    help="Workspace directory (default: $SIGNET_WORKSPACE, else ~/.agents).",
)
@click.option(
    "--port", type=click.IntRange(1, 65535), default=None,
    help="The daemon's port (default: $SIGNET_PORT, else agent.yaml's, else 3850).",
)
@click.option("--json", "json_output", is_flag=True, help="Print JSON instead of tables.")
@click.version_option(__version__, prog_name="signet")
@click.pass_context
def cli(ctx: click.Context, workspace: Path | None, port: int | None, json_output: bool) -> None:
    """Signet: local-first long-term memory for AI agents.

    Commands talk to the running daemon, or open the store in-process when none runs.
    """
    from signet.cli.state import CliState

    if port is not None:
        # The same as SIGNET_PORT for this process and what it starts (a daemon, a hook).
        os.environ["SIGNET_PORT"] = str(port)

    ctx.obj = CliState(workspace=workspace, json=json_output)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point (`signet`, `python -m signet`)."""
    cli.main(args=argv, prog_name="signet")
