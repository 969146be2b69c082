"""README.md gives a new user exactly two commands (install and start; install the test tools
and run the suite), and CI runs the second one verbatim, so the README cannot drift from what
is actually tested."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _setup_commands() -> list[str]:
    text = (ROOT / "README.md").read_text("utf-8")
    setup = text.split("## Set up", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```[a-z]*\n(.*?)```", setup, flags=re.S)
    return [line.strip() for block in blocks for line in block.splitlines() if line.strip()]


def test_the_readme_set_up_has_exactly_the_start_and_the_test_command() -> None:
    commands = _setup_commands()
    assert len(commands) == 2, commands
    start, test = commands
    assert start.startswith("bash scripts/start")
    assert test.startswith("bash scripts/test")
    for command in commands:
        assert (ROOT / command.split()[1]).is_file(), command


def test_ci_runs_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text("utf-8")
    assert 'grep -m1 -E "^bash scripts/test" README.md' in ci
    assert 'bash -c "$test_command"' in ci
