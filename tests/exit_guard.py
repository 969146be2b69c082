"""A pytest plugin (tests/conftest.py loads it): the test process exits once the run is over,
even when a failed test left a non-daemon thread blocked.

Python joins every non-daemon thread before it exits, so one writer still waiting for a turn
that never comes keeps the process alive after pytest has printed its summary, and a CI run
never ends. When the session is over this starts a daemon watchdog: if the process is still
there `SIGNET_TEST_EXIT_GRACE_S` seconds later (30 by default), it names the threads still
running and ends the process with the session's exit status. A process that exits normally
takes the watchdog with it.

A test that runs past its timeout is pytest-timeout's `thread` method (pyproject.toml): it
dumps every thread's stack and ends the process, which a hung main thread cannot prevent.
"""

from __future__ import annotations

import os
import sys
import threading
import time

import pytest

DEFAULT_GRACE_S = 30.0


def _grace_s() -> float:
    return float(os.environ.get("SIGNET_TEST_EXIT_GRACE_S", DEFAULT_GRACE_S))


def _stuck_threads() -> list[threading.Thread]:
    main = threading.main_thread()
    return [t for t in threading.enumerate() if t is not main and t.is_alive() and not t.daemon]


def _watch(status: int, grace_s: float) -> None:
    time.sleep(grace_s)
    names = ", ".join(t.name for t in _stuck_threads()) or "none left"
    sys.stderr.write(
        f"\npytest: the run is over but the process is still alive after {grace_s:.0f} s"
        f" (non-daemon threads: {names}); exiting with status {status}\n")
    sys.stderr.flush()
    sys.stdout.flush()
    os._exit(status)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    status = int(getattr(config, "_signet_exit_status", 0))
    watchdog = threading.Thread(target=_watch, args=(status, _grace_s()),
                                name="exit-guard", daemon=True)
    watchdog.start()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    session.config._signet_exit_status = int(exitstatus)  # type: ignore[attr-defined]
