"""`signet completion SHELL` prints click's completion script, and the script completes: bash
sources it and asks for the words after `signet rem`, through the real `signet` console
script, as a shell does on Tab. Real subprocesses."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


def signet_env(tmp_path: Path) -> dict[str, str]:
    # The console script beside this interpreter is the one the completion script calls back.
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    return {**os.environ, "PATH": path, "HOME": str(tmp_path),
            "SIGNET_WORKSPACE": str(tmp_path / "ws")}


@pytest.mark.parametrize(("shell", "marker"), [
    ("bash", "complete -o nosort -F _signet_completion signet"),
    ("zsh", "#compdef signet"),
    ("fish", "complete --no-files --command signet"),
])
def test_completion_prints_the_shells_script(shell: str, marker: str, tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "signet", "completion", shell],
                          env=signet_env(tmp_path), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert marker in done.stdout and "_SIGNET_COMPLETE" in done.stdout
    assert not (tmp_path / "ws").exists()  # nothing of a workspace is created or read


def test_an_unknown_shell_is_a_usage_error(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "signet", "completion", "tcsh"],
                          env=signet_env(tmp_path), capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "'tcsh' is not one of" in done.stderr


def test_bash_completes_commands_and_options_from_the_script(tmp_path: Path) -> None:
    assert shutil.which("signet", path=signet_env(tmp_path)["PATH"]), "no signet console script"
    script = tmp_path / "signet.bash"
    script.write_text(subprocess.run(
        [sys.executable, "-m", "signet", "completion", "bash"], env=signet_env(tmp_path),
        capture_output=True, text=True, timeout=60, check=True).stdout, encoding="utf-8")
    ask = f"""
source {script}
complete -p signet
COMP_WORDS=(signet rem); COMP_CWORD=1; COMPREPLY=(); _signet_completion signet
echo "commands: ${{COMPREPLY[*]}}"
COMP_WORDS=(signet remember --pro); COMP_CWORD=2; COMPREPLY=(); _signet_completion signet
echo "options: ${{COMPREPLY[*]}}"
"""
    done = subprocess.run(["bash", "-c", ask], env=signet_env(tmp_path), capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "complete -o nosort -F _signet_completion signet" in done.stdout
    assert "commands: remember" in done.stdout.splitlines()
    assert "options: --project" in done.stdout.splitlines()
