"""`signet connect <harness>`: wire the memory into a harness (its MCP server and hooks), or take it
out (`--uninstall`). Only the harness named is touched, each file through harness_files.py
(idempotent, backed up, reversible); `--dry-run` prints the diff; `--extract` also makes the
harness's CLI the pipeline's LLM (extract_setting.py).
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from signet.cli import harness_files
from signet.cli.extract_setting import extract_edit
from signet.cli.harness_targets import HARNESSES, edits_for, signet_argv, travelling_port
from signet.cli.state import CliState
from signet.config import CONFIG_FILE

__all__ = ["connect", "connect_harness"]


@click.command()
@click.argument("harness", type=click.Choice(HARNESSES))
@click.option("--project", type=click.Path(file_okay=False, path_type=Path),
              help="Write the project's config in DIR instead of the user's.")
@click.option("--allow-tools", is_flag=True,
              help="claude-code: also allow the signet MCP tools without asking (`claude -p` "
                   "denies them otherwise); --uninstall removes the rule.")
@click.option("--extract", is_flag=True,
              help="claude-code, codex, opencode: also run the harness's CLI as the pipeline's "
                   "LLM (llm.provider in agent.yaml; it uses your subscription); --uninstall "
                   "undoes it.")
@click.option("--uninstall", is_flag=True, help="Take Signet out again (restores the original bytes).")
@click.option("--dry-run", is_flag=True, help="Print the diff of what would change; write nothing.")
@click.pass_obj
def connect(
    state: CliState, harness: str, project: Path | None, allow_tools: bool, extract: bool,
    uninstall: bool, dry_run: bool,
) -> None:
    """Register Signet's MCP server and hooks in HARNESS's config (claude-code, codex,
    opencode, cursor)."""
    for line in connect_harness(state, harness, project=project, allow_tools=allow_tools,
                                extract=extract, uninstall=uninstall, dry_run=dry_run):
        click.echo(line)


def connect_harness(
    state: CliState, harness: str, *, project: Path | None = None, allow_tools: bool = False,
    extract: bool = False, uninstall: bool = False, dry_run: bool = False,
) -> list[str]:
    """Edit the harness's files; the report, one line per file (and the diffs of a dry run)."""
    cfg = state.config()
    argv = signet_argv(cfg.workspace, travelling_port(cfg.port, os.environ))
    edits = edits_for(harness, argv, project=project.absolute() if project else None,
                      env=os.environ, allow_tools=allow_tools or uninstall)
    manifest = harness_files.Manifest(cfg.workspace / "connect" / "manifest.json")
    config_file = cfg.workspace / CONFIG_FILE
    # On uninstall, agent.yaml is put back only when connect --extract made this harness the LLM.
    if extract or (uninstall and manifest.get(config_file) is not None
                   and cfg.llm.provider == harness):
        edits.append(extract_edit(config_file, harness, os.environ))
    harness_files.check(edits, removing=uninstall)
    step = harness_files.uninstall if uninstall else harness_files.install
    changes = [step(edit, manifest, dry_run=dry_run) for edit in edits]
    if not dry_run:
        manifest.save()
    lines = []
    for change in changes:
        lines.append(f"{harness}: {change.line()}")
        if dry_run and change.diff:
            lines.append(change.diff.rstrip("\n"))
    if any(c.path == config_file and c.action != "unchanged" and c.action != "absent"
           for c in changes) and not dry_run:
        lines.append(f"{harness}: a running daemon reads agent.yaml when it starts again "
                     "(`signet daemon stop`, then `signet daemon start`)")
    if not uninstall and not dry_run and harness == "codex":
        lines.append("codex: Codex versions before hooks were on by default need `[features] codex_hooks = true` in config.toml")
    return lines
