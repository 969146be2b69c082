"""The test process always ends: a failed test that leaves a non-daemon thread blocked does not
keep pytest alive after its summary (tests/exit_guard.py), and a test past its timeout ends
the run (pytest-timeout's thread method, pyproject.toml). Each runs a small test file in a
real pytest subprocess with the repository's configuration."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

LEAVES_A_THREAD_BLOCKED = '''
import threading

def test_fails_with_a_writer_still_waiting():
    threading.Thread(target=threading.Event().wait, name="blocked-writer").start()
    assert False, "failed while a thread still waits"
'''

HANGS = '''
import threading

def test_waits_for_ever():
    threading.Thread(target=threading.Event().wait, name="blocked-writer").start()
    threading.Event().wait()
'''


def run_pytest(tmp_path: Path, source: str, grace_s: float, *args: str) -> subprocess.CompletedProcess[str]:
    test_file = tmp_path / "test_case.py"
    test_file.write_text(source)
    env = {**os.environ, "PYTHONPATH": str(REPO / "tests"), "SIGNET_TEST_EXIT_GRACE_S": str(grace_s)}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-c", str(REPO / "pyproject.toml"), "--rootdir", str(tmp_path),
         "-p", "exit_guard", "-p", "no:cacheprovider", *args, str(test_file)],
        env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )


def test_a_failed_test_whose_thread_still_waits_does_not_keep_the_run_alive(tmp_path: Path) -> None:
    done = run_pytest(tmp_path, LEAVES_A_THREAD_BLOCKED, 1)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 failed" in done.stdout
    assert "non-daemon threads: blocked-writer" in done.stderr
    assert "exiting with status 1" in done.stderr


def test_a_test_past_its_timeout_ends_the_process(tmp_path: Path) -> None:
    # A grace far beyond the subprocess's own timeout: only the per-test timeout can end it.
    done = run_pytest(tmp_path, HANGS, 600, "--timeout", "2")
    assert done.returncode != 0
    assert "Timeout" in done.stdout + done.stderr
    assert "test_waits_for_ever" in done.stdout + done.stderr
