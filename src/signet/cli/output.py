"""What the CLI prints: rich tables for people, the HTTP contract's JSON for scripts. Renderers take
the `Client`'s wire-shape dict, so the two views never disagree; user text goes into `Text`
objects, never markup, so `[bold]` in a memory prints as written.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

__all__ = [
    "SHORT_ID",
    "print_changed",
    "print_daemon_status",
    "print_forgotten",
    "print_history",
    "print_init",
    "print_json",
    "print_memory",
    "print_page",
    "print_recall",
    "print_remembered",
    "print_mapping",
    "print_status",
    "short_id",
]

JSON = dict[str, Any]
SHORT_ID = 8
CONTENT_WIDTH = 60
CHANNELS = ("lexical", "semantic", "hint", "traversal", "source", "source_semantic", "context")


def print_json(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2))


def short_id(memory_id: str) -> str:
    return memory_id[:SHORT_ID]


def console() -> Console:
    # Built per call so tests and pipes see the stream click currently writes to.
    return Console(highlight=False, soft_wrap=False)


# --- one memory -----------------------------------------------------------------------------


def print_memory(memory: JSON) -> None:
    table = _fields_table()
    state = "deleted " + str(memory.get("deleted_at")) if memory.get("is_deleted") else "live"
    rows: list[tuple[str, Any]] = [
        ("id", memory["id"]),
        ("content", memory["content"]),
        ("type", memory["type"]),
        ("tags", ", ".join(memory.get("tags") or []) or "-"),
        ("importance", f"{memory['importance']:.2f}"),
        ("pinned", "yes" if memory.get("pinned") else "no"),
        ("state", state),
        ("version", memory["version"]),
        ("created", memory["created_at"]),
        ("updated", memory["updated_at"]),
    ]
    for optional in ("category", "who", "why", "project", "event_at", "source_id"):
        if memory.get(optional):
            rows.append((optional, memory[optional]))
    for name, value in rows:
        table.add_row(name, Text(str(value)))
    console().print(table)


def print_remembered(result: JSON) -> None:
    if result["deduped"]:
        click.echo(f"Already remembered as {result['id']} (same content)")
        return
    click.echo(f"Remembered {result['id']}")


def print_changed(verb: str) -> Any:
    """A renderer that states what happened to the memory and its version."""

    def render(memory: JSON) -> None:
        click.echo(f"{verb} {memory['id']} (version {memory['version']})")

    return render


def print_forgotten(memory: JSON) -> None:
    click.echo(f"Forgot {memory['id']} (`signet recover {memory['id']}` brings it back)")


# --- many memories ----------------------------------------------------------------------------


def print_page(page: JSON) -> None:
    table = Table(show_edge=False, header_style="bold")
    for column in ("id", "type", "content", "tags", "imp", "updated"):
        table.add_column(column, no_wrap=column != "content")
    for memory in page["items"]:
        table.add_row(
            _short_cell(memory),
            memory["type"],
            Text(_clip(memory["content"])),
            Text(", ".join(memory.get("tags") or [])),
            f"{memory['importance']:.2f}",
            memory["updated_at"][:16].replace("T", " "),
        )
    out = console()
    out.print(table)
    shown = len(page["items"])
    if not shown:  # past the end: "6-5 of 1" would read as a range
        out.print(f"none from {page['offset'] + 1} on ({page['total']} in all)")
        return
    out.print(f"{page['offset'] + 1}-{page['offset'] + shown} of {page['total']}")


def print_recall(response: JSON) -> None:
    table = Table(show_edge=False, header_style="bold")
    table.add_column("#", justify="right")
    table.add_column("score", justify="right")
    table.add_column("conf", justify="right")
    table.add_column("id", no_wrap=True)
    table.add_column("content", ratio=1)
    table.add_column("evidence", no_wrap=True)
    for rank, hit in enumerate(response["results"], start=1):
        table.add_row(
            str(rank),
            f"{hit['score']:.3f}",
            f"{hit.get('confidence', 0.0):.2f}",
            _short_cell(hit),
            Text(_clip(hit["content"])),
            _evidence(hit.get("evidence") or {}),
        )
    out = console()
    out.print(table)
    for rank, hit in enumerate(response["results"], start=1):
        if hit.get("transcript"):  # recall --expand: where in its session the memory came from
            out.print(Text(f"#{rank} in its session:\n{hit['transcript']}\n"))
    meta = response.get("meta") or {}
    total_ms = (meta.get("timings") or {}).get("total")
    line = f"{meta.get('count', len(response['results']))} result(s), method {response['method']}"
    if total_ms is not None:
        line += f", {total_ms:.1f} ms"
    if meta.get("degraded"):
        line += f"; degraded: {', '.join(meta['degraded'])}"
    out.print(Text(line))


def print_history(data: JSON) -> None:
    table = Table(show_edge=False, header_style="bold")
    for column in ("when", "event", "by", "reason", "content"):
        table.add_column(column, no_wrap=column in ("when", "event"))
    for event in data["history"]:
        content = event.get("new_content") or event.get("old_content") or ""
        table.add_row(
            event["created_at"][:19].replace("T", " "),
            event["event"],
            Text(event.get("changed_by") or ""),
            Text(event.get("reason") or ""),
            Text(_clip(content)),
        )
    console().print(table)


# --- workspace and status ---------------------------------------------------------------------


def print_status(status: JSON) -> None:
    daemon = status.get("daemon")
    embedder = status.get("embedder")
    rows: dict[str, Any] = {
        "workspace": status.get("workspace"),
        "database": status.get("database"),
        "memories": status.get("memories"),
        "embedder": (
            f"{embedder['provider']} {embedder['model']} ({embedder['dimensions']}d)"
            if embedder else "none"
        ),
        "pipeline": _pipeline_line(status.get("pipeline") or {}),
        "llm": _llm_line(status.get("llm")),
        "daemon": (
            f"pid {daemon.get('pid')}, port {daemon.get('port')}, up {daemon.get('uptime_s')} s"
            if daemon else "not running (store opened in-process)"
        ),
    }
    if status.get("telemetry"):
        rows["telemetry"] = _telemetry_line(status["telemetry"])
    if status.get("maintenance"):
        rows["maintenance"] = _maintenance_line(status["maintenance"])
    if status.get("hooks"):
        from signet.cli.hook_health import describe

        rows["hooks"] = describe(status["hooks"])
    print_mapping(rows)


def _llm_line(llm: JSON | None) -> str:
    """The pipeline's LLM in one line: provider, model and its newest error, if it is newer
    than its newest success."""
    if not llm:
        return "none (no LLM: names and extractive summaries only)"
    line = f"{llm['provider']} {llm['model']}"
    error, at, ok = llm.get("last_error"), llm.get("last_error_at"), llm.get("last_success_at")
    if error and (ok is None or str(at) >= str(ok)):
        line += f"; last error {str(at)[:19]}: {error}"
    elif ok:
        line += f"; last answer {str(ok)[:19]}"
    return line


def _maintenance_line(m: JSON) -> str:
    """The maintenance worker in one line: its settings and what its last run found."""
    state = f"{'on' if m['enabled'] else 'off'}, {m['mode']}" + (", frozen" if m["frozen"] else "")
    last = m.get("last_run")
    if not last:
        return f"{state}; no run yet"
    found = "healthy" if not last["problems"] else "problems: " + ", ".join(last["problems"])
    return f"{state}; last run {last['at'][:16]} ({last['mode']}): {found}, {last['actions']} repairs"


def _telemetry_line(summary: JSON) -> str:
    """The daemon's telemetry in one line: requests, errors, LLM use, the slowest route."""
    parts = [f"{summary.get('requests', 0)} requests", f"{summary.get('errors', 0)} errors"]
    if summary.get("llm_calls"):
        parts.append(f"{summary['llm_calls']} LLM calls, {summary.get('llm_tokens', 0)} tokens")
    slowest = summary.get("slowest") or []
    if slowest:
        parts.append(f"slowest p95 {slowest[0]['p95_ms']} ms ({slowest[0]['operation']})")
    return ", ".join(parts)


def print_daemon_status(info: JSON) -> None:
    """`signet daemon status`: the lifecycle's answer, with the app status reduced to a count."""
    status = info.get("status") or {}
    daemon = status.get("daemon") or {}
    rows: JSON = {
        "running": f"yes (pid {info['pid']})" if info.get("running") else "no",
        "url": info.get("url"),
        "healthy": "yes" if info.get("healthy") else "no",
    }
    if status:
        rows.update(memories=status.get("memories"), uptime=f"{daemon.get('uptime_s')} s")
    rows.update(pid_file=info.get("pid_file"), log_file=info.get("log_file"))
    print_mapping(rows)


def print_mapping(rows: JSON) -> None:
    table = _fields_table()
    for name, value in rows.items():
        table.add_row(name, Text(_plain(value)))
    console().print(table)


def print_init(report: JSON) -> None:
    out = console()
    out.print(Text(f"Workspace {report['workspace']}"))
    for path in report["created"]:
        out.print(Text(f"  created {path}"))
    out.print(f"{len(report['created'])} created, {len(report['kept'])} kept")


# --- helpers ----------------------------------------------------------------------------------


def _fields_table() -> Table:
    table = Table(show_header=False, show_edge=False, box=None, pad_edge=False)
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    return table


def _short_cell(memory: JSON) -> Text:
    cell = Text(short_id(memory["id"]))
    if memory.get("pinned"):
        cell.append("*")
    if memory.get("is_deleted"):
        cell.append(" (deleted)")
    return cell


def _clip(text: str, width: int = CONTENT_WIDTH) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _evidence(evidence: JSON) -> str:
    """The channels that found the memory, one per line, each with its score."""
    found = [
        f"{channel} {evidence[channel]:.3f}" for channel in CHANNELS
        if evidence.get(channel) is not None
    ]
    return "\n".join(found) or "-"


def _pipeline_line(pipeline: JSON) -> str:
    parts = ["enabled" if pipeline.get("enabled") else "disabled"]
    if pipeline.get("mutationsFrozen"):
        parts.append("mutations frozen")
    if pipeline.get("enabled") and pipeline.get("extraction"):
        extraction = str(pipeline["extraction"])
        parts.append(EXTRACTION_LINES.get(extraction, extraction))
    return ", ".join(parts)


EXTRACTION_LINES = {
    "llm": "extraction: facts and entities (LLM)",
    "rules": "extraction: rule facts and names (no LLM, lowered write gate)",
    "entities": "extraction: names only, for the graph (facts need an LLM: llm.provider)",
}


def _plain(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}={_plain(v)}" for k, v in value.items())
    if isinstance(value, Iterable) and not isinstance(value, str):
        return ", ".join(_plain(v) for v in value)
    return "-" if value is None else str(value)
