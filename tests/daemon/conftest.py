"""Real daemons for the daemon tests.

`serve` (tests/conftest.py) runs the FastAPI app under uvicorn in a thread, on a socket bound to
a free loopback port, around a SignetApp opened on a tmp workspace with the hash embedder: a
real server spoken to over real HTTP. `daemons` starts the whole daemon as a subprocess (see
daemon_process.py) and kills any still running at the end.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest
from daemon_process import DaemonProcess


@pytest.fixture
def daemons() -> Iterator[Callable[..., DaemonProcess]]:
    """daemons(workspace, port[, wrapper]) -> a started DaemonProcess; any still running is
    killed after the test."""
    started: list[DaemonProcess] = []

    def start(workspace: Path, port: int, wrapper: Sequence[str] = ()) -> DaemonProcess:
        started.append(DaemonProcess(workspace, port, wrapper))
        return started[-1]

    yield start
    for daemon in started:
        daemon.kill()
