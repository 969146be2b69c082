"""The memory commands: remember, recall, get, list, modify, forget, recover, history. Values are
validated by the core, so every surface rejects the same things with the same messages.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from signet.cli import output
from signet.cli.state import CliState, json_and_state
from signet.types import MEMORY_TYPES

__all__ = ["COMMANDS"]

MODES = ("hybrid", "keyword", "vector", "full")
TYPE_HELP = f"Memory type: {', '.join(MEMORY_TYPES)}."


def split_tags(_ctx: click.Context, _param: click.Parameter, value: str | None) -> list[str] | None:
    """`--tags a,b` -> ["a", "b"]; an empty string clears (for modify); absent stays None."""
    if value is None:
        return None
    return [tag.strip() for tag in value.split(",") if tag.strip()]


def present(**values: Any) -> dict[str, Any]:
    """Only the options the user gave: absent ones must not override core defaults."""
    return {name: value for name, value in values.items() if value is not None}


def tags_option(command: Any) -> Any:
    return click.option("--tags", callback=split_tags, help="Comma-separated tags.")(command)


def type_option(command: Any) -> Any:
    return click.option("--type", "type_", metavar="TYPE", help=TYPE_HELP)(command)


@click.command()
@click.argument("content")
@type_option
@tags_option
@click.option("--importance", type=float,
              help="0 to 1 (default: memory.defaultImportance in agent.yaml, 0.5).")
@click.option("--pinned", is_flag=True, help="Pin it: always kept, forget needs --force.")
@click.option("--who", help="Whom the memory is about or from.")
@click.option("--project", help="Project the memory belongs to.")
@click.option("--category", help="Free-form category.")
@json_and_state
def remember(
    state: CliState, content: str, type_: str | None, tags: list[str] | None,
    importance: float | None, pinned: bool, who: str | None, project: str | None,
    category: str | None,
) -> None:
    """Store CONTENT as a memory ("-" reads it from stdin).

    \b
    Two prefixes of CONTENT set fields, in either order, and are not stored:
      critical:   pins the memory (importance 1; forgetting it then needs --force)
      [a,b]:      tags it a and b (as --tags a,b; both given, the tags add up)
    For example: signet remember "critical: [deploy]: production deploys only on weekdays"
    """
    text = sys.stdin.read() if content == "-" else content
    fields = present(
        type=type_, tags=tags, importance=importance, pinned=pinned or None, who=who,
        project=project, category=category,
    )
    state.call(lambda c: c.remember(text, fields), output.print_remembered)


@click.command()
@click.argument("query")
@click.option("--limit", type=int, default=10, show_default=True, help="Most results.")
@click.option("--mode", type=click.Choice(MODES), default=None,
              help="Default: search.default_mode (full: every channel, the graph included).")
@type_option
@tags_option
@click.option("--who", help="Only memories about or from this person.")
@click.option("--project", help="Only memories of this project.")
@click.option("--since", help="Only memories created at or after this ISO date.")
@click.option("--until", help="Only memories created before this ISO date.")
@click.option("--community", help="Only memories mentioning an entity of this community (id or name).")
@click.option("--expand", is_flag=True, help="Show the transcript around memories from a session.")
@click.option("--min-confidence", "min_confidence", type=click.FloatRange(0, 1), default=None,
              help="Drop results less confident than this (0-1; docs/api.md).")
@json_and_state
def recall(
    state: CliState, query: str, limit: int, mode: str | None, type_: str | None,
    tags: list[str] | None, who: str | None, project: str | None, since: str | None,
    until: str | None, community: str | None, expand: bool, min_confidence: float | None,
) -> None:
    """Find the memories that answer QUERY, with each channel's evidence."""
    filters = present(
        type=type_, tags=tags, who=who, project=project, since=since, until=until,
        community=community,
    )
    with state.connect() as client:
        response = client.recall(
            query, limit=limit, mode=mode, filters=filters, expand=expand,
            min_confidence=min_confidence,
        )
        state.show(response, output.print_recall)


@click.command()
@click.argument("memory_id", metavar="ID")
@json_and_state
def get(state: CliState, memory_id: str) -> None:
    """Show one memory by its full id."""
    state.call(lambda c: c.get(memory_id), output.print_memory)


@click.command(name="list")
@click.option("--limit", type=int, default=50, show_default=True)
@click.option("--offset", type=int, default=0, show_default=True)
@type_option
@tags_option
@click.option("--who", help="Only memories about or from this person.")
@click.option("--project", help="Only memories of this project.")
@click.option("--deleted", is_flag=True, help="Include forgotten (soft-deleted) memories.")
@json_and_state
def list_memories(
    state: CliState, limit: int, offset: int, type_: str | None, tags: list[str] | None,
    who: str | None, project: str | None, deleted: bool,
) -> None:
    """List memories, newest first."""
    filters = present(
        type=type_, tags=tags, who=who, project=project, include_deleted=deleted or None
    )
    state.call(lambda c: c.list(limit=limit, offset=offset, filters=filters), output.print_page)


@click.command()
@click.argument("memory_id", metavar="ID")
@click.option("--content", help="New content.")
@type_option
@click.option("--tags", callback=split_tags, help='Comma-separated tags; "" clears them.')
@click.option("--importance", type=float, help="0 to 1.")
@click.option("--pinned/--unpinned", default=None, help="Pin or unpin.")
@click.option("--who", help="Whom the memory is about or from.")
@click.option("--project", help="Project the memory belongs to.")
@click.option("--category", help="Free-form category.")
@click.option("--version", "version", type=int, help="Fail unless the memory is at this version.")
@click.option("--reason", help="Why, recorded in the history.")
@json_and_state
def modify(
    state: CliState, memory_id: str, content: str | None, type_: str | None,
    tags: list[str] | None, importance: float | None, pinned: bool | None, who: str | None,
    project: str | None, category: str | None, version: int | None, reason: str | None,
) -> None:
    """Change fields of memory ID (a new version; the old content stays in its history)."""
    changes = present(
        content=content, type=type_, tags=tags, importance=importance, pinned=pinned, who=who,
        project=project, category=category,
    )
    state.call(lambda c: c.modify(memory_id, changes, version=version, reason=reason),
               output.print_changed("Updated"))


@click.command()
@click.argument("memory_id", metavar="ID")
@click.option("--force", is_flag=True, help="Forget it even when pinned.")
@click.option("--reason", help="Why, recorded in the history.")
@json_and_state
def forget(state: CliState, memory_id: str, force: bool, reason: str | None) -> None:
    """Forget memory ID (soft delete: `signet recover` brings it back within the window)."""
    state.call(lambda c: c.forget(memory_id, force=force, reason=reason), output.print_forgotten)


@click.command()
@click.argument("memory_id", metavar="ID")
@click.option("--reason", help="Why, recorded in the history.")
@json_and_state
def recover(state: CliState, memory_id: str, reason: str | None) -> None:
    """Bring back a forgotten memory."""
    state.call(lambda c: c.recover(memory_id, reason=reason), output.print_changed("Recovered"))


@click.command()
@click.argument("memory_id", metavar="ID")
@json_and_state
def history(state: CliState, memory_id: str) -> None:
    """Show every change to memory ID, oldest first."""
    state.call(lambda c: c.history(memory_id), output.print_history)


COMMANDS: tuple[click.Command, ...] = (
    remember, recall, get, list_memories, modify, forget, recover, history,
)
