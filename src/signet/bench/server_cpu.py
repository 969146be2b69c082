"""The CPU a local PostgreSQL server spends for the bench, from /proc: the user and system time of
the postmaster's children serving this database (a lower bound), since the client's
`process_time` leaves it out. Ticks are 1/100 s, so only means over queries are reported; a
remote server gives None.
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


def _seconds(pid: int) -> float:
    fields = _stat(pid)  # field 3 (state) is fields[0]: utime is field 14, stime field 15
    return (int(fields[11]) + int(fields[12])) / _TICK


def _serves(pid: int, database: str) -> bool:
    """Whether the server process `pid` works for `database`: its title is 'postgres: USER
    DATABASE HOST STATE' for a client backend, 'postgres: autovacuum worker DATABASE'."""
    words = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(
        "utf-8", "replace").split()
    if words[1:3] == ["autovacuum", "worker"]:
        return words[3:4] == [database]
    return len(words) > 2 and words[0] == "postgres:" and words[2] == database


def postgres_cpu(app: Any) -> Callable[[], float] | None:
    """A clock of the PostgreSQL server's CPU seconds behind `app` (an app on PostgresCore), or
    None when the server's processes cannot be read here."""
    pool = getattr(getattr(getattr(app, "backend", None), "core", None), "pool", None)
    if pool is None:
        return None
    try:
        with pool.connection() as conn:
            backend, database = int(conn.info.backend_pid), str(conn.info.dbname)
        postmaster = int(_stat(backend)[1])
        children = Path(f"/proc/{postmaster}/task/{postmaster}/children")
        if not _serves(backend, database) or str(backend) not in children.read_text().split():
            return None
    except (OSError, ValueError, IndexError):
        return None

    def clock() -> float:
        total = 0.0
        for pid in children.read_text().split():
            try:
                if _serves(int(pid), database):
                    total += _seconds(int(pid))
            except (OSError, ValueError, IndexError):
                continue  # ended between the listing and the read
        return total

    return clock
