"""`signet graph entities|entity|communities|pin|stats`: the knowledge graph from the shell.

Through the running daemon when one serves the workspace (/api/knowledge/*), else in-process
(`state.connect()`, cli/client.py). An entity is named by id, name or alias ("signet graph
entity 'my car'").
"""

from __future__ import annotations

from typing import Any

import click
from rich.table import Table

from signet.cli.output import console, short_id
from signet.cli.state import CliState, json_and_state

__all__ = ["COMMANDS"]


@click.group()
def graph() -> None:
    """Inspect the knowledge graph: entities, communities, pins."""


@graph.command(name="entities")
@click.option("--search", "-q", default=None, help="Only names containing this text.")
@click.option("--limit", type=int, default=50, show_default=True)
@click.option("--offset", type=int, default=0)
@json_and_state
def entities(state: CliState, search: str | None, limit: int, offset: int) -> None:
    """List entities, most mentioned first."""
    state.call(lambda c: c.entities(search=search, limit=limit, offset=offset), print_entities)


@graph.command(name="entity")
@click.argument("ref", metavar="ID|NAME")
@json_and_state
def entity(state: CliState, ref: str) -> None:
    """Show one entity: aliases, aspects with attributes, dependencies, memories."""
    state.call(lambda c: c.entity(ref), print_entity)


@graph.command(name="communities")
@click.option("--detect", is_flag=True, help="Run Louvain community detection first.")
@json_and_state
def communities(state: CliState, detect: bool) -> None:
    """List entity communities (Louvain over dependency weights)."""
    state.call(lambda c: c.detect_communities() if detect else c.communities(),
               print_communities)


@graph.command(name="pin")
@click.argument("ref", metavar="ID|NAME")
@click.option("--suppress", is_flag=True, help="Never focal instead of always focal.")
@click.option("--weight", type=float, default=None, help="Weight of paths through it (0-10].")
@click.option("--reason", default=None)
@click.option("--remove", is_flag=True, help="Clear the pin or suppression.")
@json_and_state
def pin(
    state: CliState, ref: str, suppress: bool, weight: float | None, reason: str | None,
    remove: bool,
) -> None:
    """Pin an entity (always focal in traversal), suppress it, or --remove either."""
    with state.connect() as client:
        if remove:
            data = client.unpin_entity(ref)
        else:
            data = client.pin_entity(ref, suppress=suppress, weight=weight, reason=reason)
    state.show(data, lambda d: click.echo(f"{d['name']}: {d['pinned'] or 'not pinned'}"))


@graph.command(name="stats")
@json_and_state
def stats(state: CliState) -> None:
    """Counts of entities, edges, aspects, attributes, communities and pins."""
    state.call(lambda c: c.graph_stats(), _print_stats)


def _print_stats(data: dict[str, Any]) -> None:
    for key, value in data.items():
        click.echo(f"{key}: {value}")


COMMANDS = [graph]


# --- rendering ----------------------------------------------------------------------------------


def print_entities(data: dict[str, Any]) -> None:
    table = Table(show_header=True, header_style="bold", box=None)
    for column in ("id", "name", "type", "mentions", "community", "pin"):
        table.add_column(column)
    for item in data["items"]:
        table.add_row(
            short_id(item["id"]), item["name"], item["entity_type"], str(item["mentions"]),
            short_id(item["community_id"] or "-"), item["pinned"] or "",
        )
    console().print(table)
    click.echo(f"{len(data['items'])} of {data['total']} entities")


def print_entity(data: dict[str, Any]) -> None:
    click.echo(f"{data['name']} ({data['entity_type']}) {data['id']}")
    if data["aliases"]:
        click.echo("aliases: " + ", ".join(data["aliases"]))
    for aspect in data["aspects"]:
        click.echo(f"aspect {aspect['name']} (weight {aspect['weight']:.2f})")
        for attr in aspect["attributes"]:
            click.echo(f"  {attr['key']}: {attr['value']}")
    for dep in data["dependencies"]:
        arrow = "->" if dep["direction"] == "out" else "<-"
        click.echo(
            f"{arrow} {dep['entity_name']} [{dep['type']}] strength {dep['strength']:.2f}"
            f" weight {dep['traversal_weight']:.2f}"
        )
    for memory in data["memories"]:
        click.echo(f"memory {short_id(memory['id'])}: {memory['content'][:80]}")


def print_communities(data: dict[str, Any]) -> None:
    table = Table(show_header=True, header_style="bold", box=None)
    for column in ("id", "label", "size", "modularity", "quality"):
        table.add_column(column)
    for c in data["communities"]:
        table.add_row(short_id(c["id"]), c["label"] or "", str(c["size"]),
                      f"{c['modularity']:.3f}", c["quality"] or "")
    console().print(table)
