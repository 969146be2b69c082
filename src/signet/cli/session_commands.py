"""`signet session import|list|show|search`: harness transcripts and the sessions they made. Through
the client like the memory commands, so an import is summarised by the daemon's workers at once.
The session id is the one the transcript names, else the file's stem, unless `--session-id` says
otherwise.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.table import Table
from rich.text import Text

from signet.cli.output import console
from signet.cli.state import CliState, json_and_state
from signet.errors import InvalidInput

__all__ = ["COMMANDS"]

HARNESSES = ("claude-code", "codex", "opencode", "cursor", "generic")


@click.group()
def session() -> None:
    """Import harness transcripts; list, show, search and forget sessions."""


@session.command(name="import")
@click.argument("path", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--harness", type=click.Choice(HARNESSES), required=True, help="Who wrote the file.")
@click.option("--session-id", help="Default: the id the transcript names, else the file's stem.")
@click.option("--project", help="Project the session belongs to.")
@click.option("--open", "still_open", is_flag=True,
              help="The session goes on: do not close it or queue its summary yet.")
@json_and_state
def import_(
    state: CliState, path: Path, harness: str, session_id: str | None, project: str | None,
    still_open: bool,
) -> None:
    """Import the transcript at PATH (idempotent; a longer version appends)."""
    sid = session_id or _named_session(path, harness)
    body: dict[str, Any] = {"harness": harness, "path": str(path.absolute()), "ended": not still_open}
    if project:
        body["project"] = project
    with state.connect() as client:
        state.show(client.import_transcript(sid, body), _print_import)


def _named_session(path: Path, harness: str) -> str:
    """The session id inside the transcript (read here, so the route's path can carry it)."""
    from signet.lineage.formats import parse

    try:
        return parse(harness, path.read_text("utf-8")).session_id or path.stem
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"{path}: cannot read: {exc}") from None


@session.command(name="list")
@click.option("--project", help="Only sessions of this project.")
@click.option("--harness", type=click.Choice(HARNESSES), default=None)
@click.option("--limit", type=int, default=50, show_default=True)
@click.option("--offset", type=int, default=0, show_default=True)
@json_and_state
def list_sessions(
    state: CliState, project: str | None, harness: str | None, limit: int, offset: int
) -> None:
    """Sessions, most recent first (--json: {"items": [...], "total", ...})."""
    filters = {k: v for k, v in {"project": project, "harness": harness}.items() if v}
    with state.connect() as client:
        state.show(client.sessions(limit=limit, offset=offset, filters=filters), _print_sessions)


@session.command(name="show")
@click.argument("session_id")
@click.option("--project", help="The session's project, when one id exists in several.")
@json_and_state
def show(state: CliState, session_id: str, project: str | None) -> None:
    """One session: its fields and cleaned conversation."""
    with state.connect() as client:
        state.show(client.session(session_id, project=project), _print_session)


@session.command(name="search")
@click.argument("query")
@click.option("--project", help="Only sessions of this project.")
@click.option("--limit", type=int, default=10, show_default=True)
@json_and_state
def search(state: CliState, query: str, project: str | None, limit: int) -> None:
    """Sessions whose conversation matches QUERY, best first."""
    with state.connect() as client:
        state.show(client.session_search(query, limit=limit, project=project), _print_sessions)


@session.command(name="forget")
@click.argument("session_id")
@click.option("--project", help="The session's project, when one id exists in several.")
@click.option("--reason", help="Why, kept on the tombstone.")
@json_and_state
def forget(state: CliState, session_id: str, project: str | None, reason: str | None) -> None:
    """Remove SESSION_ID for privacy: transcript, summaries; re-indexing will not restore them."""
    state.call(lambda c: c.forget_session(session_id, project=project, reason=reason),
               lambda d: console().print(Text(
                   f"removed session {d['session_id']} ({len(d['removed_paths'])} files)")))


def _print_import(result: dict[str, Any]) -> None:
    s = result["session"]
    line = f"{result['status']}: session {s['session_id']} ({s['message_count']} messages"
    line += f", {result['added']} new)" if result["status"] != "created" else ")"
    if result.get("summary_job"):
        line += "; summary queued"
    console().print(Text(line))


def _print_sessions(data: dict[str, Any]) -> None:
    table = Table(show_edge=False, header_style="bold")
    for column in ("session", "harness", "project", "messages", "last event", "summary"):
        table.add_column(column, no_wrap=True)
    for s in data["items"]:
        table.add_row(
            Text(s["session_id"]), s.get("harness") or "", Text(s.get("project") or ""),
            str(s["message_count"]), (s.get("last_event_at") or "")[:16].replace("T", " "),
            s.get("summary_status") or "",
        )
    out = console()
    out.print(table)
    if "total" in data:
        out.print(f"{len(data['items'])} of {data['total']}")


def _print_session(s: dict[str, Any]) -> None:
    out = console()
    out.print(Text(f"session {s['session_id']} ({s.get('harness')}, project {s.get('project')})"))
    out.print(Text(f"started {s.get('started_at')}, ended {s.get('ended_at')}"))
    for message in s.get("messages", []):
        out.print(Text(f"{message['role']}: {message['text']}"))


COMMANDS: tuple[click.Command, ...] = (session,)
