"""The store's files are the user's alone whatever the umask: a real daemon started under
umask 022 makes memory/ 0700 and memories.db, its -wal and -shm 0600; `signet backup` and
`signet export` (subprocesses, under the same umask) write 0600 files in 0700 folders; a
database left readable by an older version is tightened when opened. The SQLite file is what
these are about: a PostgreSQL store has none (its export is the same code as SQLite's)."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from pathlib import Path

import httpx
from daemon_process import daemon_env, free_port, make_workspace

from signet.workspace import init_workspace

UMASK_022 = ("sh", "-c", 'umask 022; exec "$@"', "sh")


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def signet(ws: Path, *args: str) -> dict:
    done = subprocess.run([*UMASK_022, sys.executable, "-m", "signet", *args, "--json"],
                          env=daemon_env(ws, 1), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def test_the_database_backups_and_exports_are_private_under_umask_022(
    tmp_path: Path, daemons
) -> None:
    ws = make_workspace(tmp_path / "ws")
    daemon = daemons(ws, free_port(), UMASK_022)
    daemon.wait_healthy(60)
    reply = httpx.post(f"{daemon.url}/api/memory/remember", headers=daemon.headers(),
                       json={"content": "the spare key is under the blue pot"}, timeout=30)
    assert reply.status_code == 200, reply.text
    db = ws / "memory" / "memories.db"
    assert mode(ws / "memory") == 0o700
    for path in (db, db.with_name("memories.db-wal"), db.with_name("memories.db-shm")):
        assert path.exists() and mode(path) == 0o600, (path.name, oct(mode(path)))

    backup = signet(ws, "backup")
    assert mode(Path(backup["path"])) == 0o600 and mode(Path(backup["path"]).parent) == 0o700
    exported = tmp_path / "out" / "bundle"
    signet(ws, "export", str(exported))
    assert mode(exported) == 0o700 and mode(exported.parent) == 0o700
    inside = list(exported.rglob("*"))
    assert any(p.name == "memories.jsonl" for p in inside)
    for path in inside:
        assert mode(path) == (0o700 if path.is_dir() else 0o600), (path, oct(mode(path)))
    assert daemon.terminate()[0] == 0

    # A database an older version left readable by others is tightened when next opened.
    for path in (db, ws / "memory"):
        path.chmod(0o644 if path.is_file() else 0o755)
    signet(ws, "backup", str(tmp_path / "second.db"))
    assert mode(db) == 0o600 and mode(tmp_path / "second.db") == 0o600


def test_an_open_memory_folder_is_warned_about(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    init_workspace(root)
    assert init_workspace(root).warnings == ()
    (root / "memory").chmod(0o755)
    [warning] = init_workspace(root).warnings
    assert str(root / "memory") in warning and "chmod 700" in warning
