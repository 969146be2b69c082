"""The `signet` entry point starts light: `--version` and `--help` import no command module,
and a command imports only its own module. Checked on real subprocesses, which report every module
they loaded; the time itself is measured by `signet bench
cli`, never asserted here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

from signet.cli.main import COMMANDS, cli, load_command

HEAVY = ("signet.app", "signet.bench", "signet.store", "signet.recall", "signet.graph",
         "signet.providers", "networkx", "numpy", "onnxruntime", "tokenizers")


# Runs the real entry point in a fresh interpreter and reports, at exit, every module loaded.
PROBE = """
import atexit, json, sys
atexit.register(lambda: sys.stderr.write("MODULES " + json.dumps(sorted(sys.modules)) + "\\n"))
from signet.cli.main import main
main()
"""


def imported(*args: str, tmp_path: Path) -> set[str]:
    env = {**os.environ, "SIGNET_WORKSPACE": str(tmp_path / "ws"), "HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args], env=env, capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stderr.splitlines() if x.startswith("MODULES "))
    return set(json.loads(line.removeprefix("MODULES ")))


def heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m in HEAVY or m.startswith(tuple(f"{h}." for h in HEAVY)))


@pytest.mark.parametrize("flag", ["--version", "--help"])
def test_version_and_help_import_no_command_module(flag: str, tmp_path: Path) -> None:
    modules = imported(flag, tmp_path=tmp_path)
    assert heavy(modules) == []
    assert "rich" not in modules and "httpx" not in modules
    assert not [m for m in modules if m.startswith("signet.cli.") and m != "signet.cli.main"]


def test_a_command_imports_only_its_own_module(tmp_path: Path) -> None:
    modules = imported("recall", "--help", tmp_path=tmp_path)
    assert "signet.cli.memory_commands" in modules
    assert heavy(modules) == []
    assert "httpx" not in modules  # the daemon is reached through http.client
    assert "signet.cli.bench_commands" not in modules


def test_help_lists_every_command_of_the_table(tmp_path: Path) -> None:
    env = {**os.environ, "SIGNET_WORKSPACE": str(tmp_path / "ws"), "COLUMNS": "200"}
    done = subprocess.run([sys.executable, "-m", "signet", "--help"], env=env,
                          capture_output=True, text=True, timeout=60)
    listed = done.stdout.split("Commands:")[1]
    for name, (_target, short_help) in COMMANDS.items():
        # Click clips each line to the terminal; the start of the table's text must be there.
        assert f"  {name} " in listed and short_help[:30] in listed


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_tables_short_help_is_the_commands_own(name: str) -> None:
    command = load_command(name)
    assert isinstance(command, click.Command)
    assert command.get_short_help_str(1000) == COMMANDS[name][1]


def test_an_unknown_command_is_a_usage_error(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "signet", "remembr", "x"],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "SIGNET_WORKSPACE": str(tmp_path / "ws")})
    assert done.returncode == 2 and "No such command 'remembr'" in done.stderr
    assert cli.get_command(click.Context(cli), "remembr") is None


def test_bench_cli_times_version_and_recall_through_a_daemon(tmp_path: Path) -> None:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "TMPDIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "signet", "bench", "cli", "--runs", "2", "--embedder", "none",
         "--json"], env=env, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["runs"] == 2 and len(result["load_average"]) == 3
    for name, target in (("version", 150.0), ("recall", 300.0)):
        row = result[name]
        assert 0 < row["p50_ms"] <= row["p95_ms"] and row["target_ms"] == target
        assert 0 < row["cpu_p50_ms"] <= row["cpu_p95_ms"]
    assert "cli: 2 x `signet recall QUERY` against it" in done.stderr
