"""The CPU a PostgreSQL server on this machine spends for the bench, read from /proc.

On SQLite the whole store works inside the bench's process, so `time.process_time` counts it.
On PostgreSQL most of the work (planning, the GIN and HNSW walks, the index updates, WAL) runs
in the server's processes, which the client's CPU leaves out. So the bench asks one pooled
connection for its backend's pid (psycopg's `info.backend_pid`, no statement), takes that
process's parent as the postmaster, and sums the user and system time of the postmaster and
every child it has (the pool's backends, the WAL writer, the checkpointer), plus the time of the
children it already reaped. The clock ticks at 1/100 s, so one query's share is not resolved:
the bench reports a mode's mean over all its queries, never a percentile.

A server on another machine (or a /proc without `children`) gives None: the figure is then
left out rather than guessed.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stat(pid: int) -> list[str]:
    text = Path(f"/proc/{pid}/stat").read_text()
    return text[text.rindex(")") + 2 :].split()  # the fields after the command's name


def _seconds(pid: int, *, reaped: bool) -> float:
    fields = _stat(pid)  # field 3 (state) is fields[0]: utime is field 14, stime 15, cu/cs 16/17
    ticks = int(fields[11]) + int(fields[12])
    if reaped:
        ticks += int(fields[13]) + int(fields[14])
    return ticks / _TICK


def postgres_cpu(app: Any) -> Callable[[], float] | None:
    """A clock of the PostgreSQL server's CPU seconds behind `app` (a CoreApp on PgCore), or
    None when the server's processes cannot be read here."""
    pool = getattr(getattr(app, "core", None), "pool", None)
    if pool is None:
        return None
    try:
        with pool.connection() as conn:
            backend = int(conn.info.backend_pid)
        postmaster = int(_stat(backend)[1])
        children = Path(f"/proc/{postmaster}/task/{postmaster}/children")
        children.read_text()
    except (OSError, ValueError, IndexError):
        return None

    def clock() -> float:
        total = _seconds(postmaster, reaped=True)
        for pid in children.read_text().split():
            try:
                total += _seconds(int(pid), reaped=False)
            except (OSError, ValueError, IndexError):
                continue  # ended between the listing and the read: its time is in `reaped`
        return total

    return clock
