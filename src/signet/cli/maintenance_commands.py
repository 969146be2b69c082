"""`signet maintenance run [--execute]|report`: the store's health, through the daemon or in-
process. `--execute` repairs what failed within `autonomous.maxRepairsPerRun` unless
`autonomous.frozen`; it exits 0 either way, as a problem found is a result, not an error.
"""

from __future__ import annotations

from typing import Any

import click

from signet.cli.output import print_mapping
from signet.cli.state import CliState, json_and_state

__all__ = ["maintenance"]


@click.group()
def maintenance() -> None:
    """Check the store's health and repair it (indexes, embeddings, jobs, graph, WAL)."""


@maintenance.command("run")
@click.option("--execute", is_flag=True, help="Repair what the checks find (default: only report).")
@json_and_state
def run(state: CliState, execute: bool) -> None:
    """Run every health check now; with --execute, repair too. The run is recorded."""
    state.call(lambda c: c.run_maintenance(execute=execute), _print_run)


@maintenance.command("report")
@json_and_state
def report(state: CliState) -> None:
    """The health now, the settings, and the last recorded runs and repairs."""
    state.call(lambda c: c.maintenance_report(), _print_report)


def _check_line(check: dict[str, Any]) -> str:
    counts = ", ".join(f"{k} {v}" for k, v in check.items() if k not in ("ok",))
    return f"{'ok' if check['ok'] else 'PROBLEM'}: {counts}"


def _print_run(r: dict[str, Any]) -> None:
    rows: dict[str, Any] = {"mode": r["mode"] + (" (frozen)" if r["frozen"] else "")}
    rows.update({f"check {name}": _check_line(c) for name, c in r["checks"].items()})
    for a in r["actions"]:
        rows[f"repair {a['action']}"] = ", ".join(f"{k} {v}" for k, v in a["changed"].items())
    if r["skipped"]:
        rows["skipped (frozen)"] = ", ".join(r["skipped"])
    rows["result"] = "healthy" if r["ok"] else "problems remain"
    print_mapping(rows)


def _print_report(r: dict[str, Any]) -> None:
    rows: dict[str, Any] = {
        "scheduled": f"{'on' if r['enabled'] else 'off'}, {r['mode']}, every {r['interval_ms']} ms"
        + (", frozen" if r["frozen"] else ""),
    }
    rows.update({f"check {name}": _check_line(c) for name, c in r["checks"].items()})
    for run in r["runs"]:
        rep = run["report"]
        rows[f"run {run['started_at'][:19]}"] = (
            f"{rep['mode']} ({rep['trigger']}): "
            + ("healthy" if not rep["problems"] else "problems " + ", ".join(rep["problems"]))
            + f", {len(rep['actions'])} repairs"
        )
    print_mapping(rows)
