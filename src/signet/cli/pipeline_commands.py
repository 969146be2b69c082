"""`signet jobs list|show|requeue-dead` (through the daemon, or in-process) and `signet pipeline
run`, which runs the workers in this process, daemon or not: leases are atomic across processes,
so that is safe. `--until-idle` ticks every worker until none has work, the way scripts and tests
drain the queue.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click
from rich.table import Table
from rich.text import Text

from signet.cli.output import console, short_id
from signet.cli.state import CliState, json_and_state
from signet.types import JOB_STATUSES, JOB_TYPES

if TYPE_CHECKING:
    from signet.app import SignetApp

__all__ = ["COMMANDS"]

WORKER_NAMES = ("extract", "hints", "embed", "reaper", "summary", "session-timeout", "synthesis")
ERROR_WIDTH = 60


@contextmanager
def open_app(
    state: CliState, *, providers: bool, existing: bool = False, llm: bool = True
) -> Iterator[SignetApp]:
    """The workspace's app in this process; `existing` for read-only commands, which must not
    create a workspace (see `client.require_workspace`); `llm=False` opens the configured
    embedder without the LLM (maintenance audits vectors, skills index, neither asks an LLM)."""
    # Imported here: `signet --help` must not load the store, numpy or the providers.
    from signet.app import SignetApp
    from signet.client import without_workers

    # No embed worker runs in this process: what it writes embeds on the write path.
    config = without_workers(state.existing_config() if existing else state.config())
    if providers and llm:
        app = SignetApp.open(config)
    elif providers:
        app = SignetApp.open(config, llm=None)
    else:
        app = SignetApp.open(config, embedder=None, llm=None)
    try:
        yield app
    finally:
        app.close()


@click.group()
def jobs() -> None:
    """Inspect the pipeline's job queue and requeue dead jobs."""


@jobs.command(name="list")
@click.option("--status", type=click.Choice(JOB_STATUSES), help="Only jobs in this state.")
@click.option("--type", "job_type", type=click.Choice(JOB_TYPES), help="Only jobs of this type.")
@click.option("--limit", type=int, default=50, show_default=True)
@json_and_state
def list_jobs(state: CliState, status: str | None, job_type: str | None, limit: int) -> None:
    """List jobs, newest first, with the queue's depth per type and state."""
    with state.connect() as client:
        reply = client.jobs(status=status, job_type=job_type, limit=limit)
    data = {"jobs": reply["items"], "depths": reply["depths"]}
    state.show(data, print_jobs)


@jobs.command(name="show")
@click.argument("job_id", metavar="ID")
@json_and_state
def show_job(state: CliState, job_id: str) -> None:
    """Show one job: payload, result, attempts and its last error."""
    state.call(lambda c: c.job(job_id), print_job)


@jobs.command(name="requeue-dead")
@click.argument("job_ids", nargs=-1, metavar="[ID]...")
@json_and_state
def requeue_dead(state: CliState, job_ids: tuple[str, ...]) -> None:
    """Give dead jobs (all, or the IDs given) a fresh set of attempts."""
    state.call(lambda c: c.requeue_dead(list(job_ids) if job_ids else None),
               lambda d: click.echo(f"Requeued {d['requeued']} dead job(s)."))


@click.group()
def pipeline() -> None:
    """Run the background pipeline's workers in this process."""


@pipeline.command(name="run")
@click.option("--until-idle", is_flag=True, help="Stop once no worker has work left.")
@click.option(
    "--only", multiple=True, type=click.Choice(WORKER_NAMES),
    help="Run only this worker (repeatable).",
)
@json_and_state
def run_pipeline(state: CliState, until_idle: bool, only: tuple[str, ...]) -> None:
    """Work through the job queue: extraction, hints, embeddings, the lease reaper."""
    started = time.perf_counter()
    with open_app(state, providers=True) as app:
        if until_idle:
            ticks = app.run_pipeline_until_idle(only=only or None)
        else:
            ticks = _run_forever(app, only)
        data = {
            "ticks": ticks,
            "seconds": round(time.perf_counter() - started, 3),
            "depths": app.job_depths(),
        }
    state.show(data, print_run)


def _run_forever(app: SignetApp, only: tuple[str, ...]) -> int:
    from signet.workers.loop import WorkerLoop

    workers = [w for w in app.workers() if not only or w.name in only]
    interval = app.config.pipeline.worker_poll_ms / 1000
    loop = WorkerLoop(workers, idle_sleep_s=interval)
    stop = threading.Event()
    try:
        loop.run(stop)
    except KeyboardInterrupt:
        stop.set()
    return sum(s["work_done"] for s in loop.state().values())


# --- rendering ----------------------------------------------------------------------------------


def print_jobs(data: dict[str, Any]) -> None:
    table = Table(show_header=True, header_style="bold", box=None)
    for column in ("id", "type", "status", "tries", "memory", "updated", "error"):
        table.add_column(column)
    for job in data["jobs"]:
        table.add_row(
            short_id(job["id"]), job["job_type"], job["status"],
            f"{job['attempts']}/{job['max_attempts']}", short_id(job["memory_id"] or "-"),
            job["updated_at"], Text(_clip(job["error"] or "")),
        )
    out = console()
    out.print(table if data["jobs"] else "No jobs.")
    out.print(Text(_depth_line(data["depths"])))


def print_job(job: dict[str, Any]) -> None:
    table = Table(show_header=False, box=None)
    table.add_column(style="bold")
    table.add_column()
    for name, value in job.items():
        table.add_row(name, Text("" if value is None else str(value)))
    console().print(table)


def print_run(data: dict[str, Any]) -> None:
    click.echo(f"{data['ticks']} unit(s) of work in {data['seconds']} s")
    click.echo(_depth_line(data["depths"]))


def _depth_line(depths: dict[str, dict[str, int]]) -> str:
    if not depths:
        return "Queue: empty."
    parts = [
        f"{job_type} " + ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
        for job_type, counts in sorted(depths.items())
    ]
    return "Queue: " + "; ".join(parts) + "."


def _clip(text: str, width: int = ERROR_WIDTH) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "\u2026"


COMMANDS: tuple[click.Command, ...] = (jobs, pipeline)
