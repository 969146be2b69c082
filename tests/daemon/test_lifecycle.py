"""The daemon as a process: start, stop, status, logs, refusals, and no lost write on kill -9.

Each daemon here is a real `python -m signet daemon start --foreground` (or the detached one that
`start_background` spawns) on a tmp workspace and a free loopback port. Workspaces use embedding
provider "none" to start fast, except `test_a_daemon_with_default_settings_embeds_locally`, which
proves the defaults (the bundled local model) work.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path

import httpx
import pytest
from daemon_process import DaemonProcess, daemon_env, free_port, make_workspace

from signet.config import Config
from signet.daemon import lifecycle, logfile
from signet.errors import Conflict, SignetError
from signet.store.db import Store

REMEMBER = "/api/memory/remember"


def config_for(workspace: Path, port: int) -> Config:
    return Config.load(workspace, env={"SIGNET_PORT": str(port), "HOME": str(workspace)})


@contextmanager
def opened(workspace: Path) -> Iterator[Store]:
    store = Store.open(workspace / "memory" / "memories.db")
    try:
        yield store
    finally:
        store.close()


def assert_refused(daemon: DaemonProcess, *words: str) -> str:
    code, err = daemon.finish()
    lines = [line for line in err.splitlines() if line.strip()]
    assert code != 0, err
    assert len(lines) == 1, err  # one clear line, no traceback
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- foreground: serve, SIGTERM, logs ---------------------------------------------------------


def test_foreground_daemon_writes_its_pid_and_stops_cleanly_on_sigterm(tmp_path, daemons) -> None:
    ws = make_workspace(tmp_path / "ws")
    daemon = daemons(ws, free_port())
    health = daemon.wait_healthy()
    assert (ws / ".daemon" / "pid").read_text().strip() == str(health["pid"])
    reply = httpx.post(
        f"{daemon.url}{REMEMBER}", json={"content": "kept over a shutdown"}, headers=daemon.headers()
    )
    assert reply.status_code == 200
    memory_id = reply.json()["id"]

    code, err = daemon.terminate()

    assert code == 0, err
    assert not (ws / ".daemon" / "pid").exists()
    wal = ws / "memory" / "memories.db-wal"
    assert not wal.exists() or wal.stat().st_size == 0, "the WAL was not checkpointed"
    with opened(ws) as store:
        row = store.reader().execute("SELECT content FROM memories WHERE id = ?", (memory_id,))
        assert row.fetchone()[0] == "kept over a shutdown"


def test_the_daemon_runs_the_pipeline_workers_in_the_background(tmp_path, daemons) -> None:
    ws = make_workspace(tmp_path / "ws")
    daemon = daemons(ws, free_port())
    daemon.wait_healthy()
    with httpx.Client(base_url=daemon.url, headers=daemon.headers()) as client:
        stored = client.post(REMEMBER, json={"content": "Alice moved to Paris and works at Acme"})
        assert stored.json()["memory"]["extraction_status"] == "pending"
        deadline = time.monotonic() + 20
        status = "pending"
        while status == "pending" and time.monotonic() < deadline:
            time.sleep(0.1)
            status = client.get(f"/api/memory/{stored.json()['id']}").json()["extraction_status"]
    assert status == "completed"
    code, err = daemon.terminate()
    assert code == 0, err


def test_log_lines_are_json_with_request_fields_and_never_memory_content(tmp_path, daemons) -> None:
    ws = make_workspace(tmp_path / "ws")
    port = free_port()
    daemon = daemons(ws, port)
    daemon.wait_healthy()
    secret = "pomegranate-7731"
    with httpx.Client(base_url=daemon.url, headers=daemon.headers()) as client:
        assert client.post(REMEMBER, json={"content": f"the word is {secret}"}).status_code == 200
        assert client.get("/api/memory/search", params={"q": secret}).status_code == 200
        assert client.post(REMEMBER, json={"content": " "}).status_code == 400
    daemon.terminate()

    files = lifecycle.log_files(config_for(ws, port))
    assert [f.name for f in files] == [f"daemon-{logfile.utc_today().isoformat()}.log"]
    text = files[0].read_text()
    assert secret not in text
    lines = [json.loads(line) for line in text.splitlines()]
    assert all({"ts", "level", "msg"} <= set(line) for line in lines)
    requests = [(ln["method"], ln["path"], ln["status"]) for ln in lines if ln["msg"] == "request"]
    assert requests == [
        ("POST", REMEMBER, 200), ("GET", "/api/memory/search", 200), ("POST", REMEMBER, 400),
    ]
    assert all(isinstance(ln["ms"], float) for ln in lines if ln["msg"] == "request")
    assert any(ln["msg"] == "stopped" for ln in lines)


def test_the_daily_log_file_follows_the_date(tmp_path) -> None:
    today = [date(2026, 3, 1)]
    handler = logfile.DailyFileHandler(tmp_path / "logs", today=lambda: today[0])
    logger = logging.getLogger("test.daily")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("first day", extra={"status": 200})
        today[0] = date(2026, 3, 2)
        logger.warning("second day")
    finally:
        logger.removeHandler(handler)
        handler.close()
    cfg = Config.default(tmp_path).replace()
    names = [p.name for p in sorted((tmp_path / "logs").iterdir())]
    assert names == ["daemon-2026-03-01.log", "daemon-2026-03-02.log"]
    first = json.loads((tmp_path / "logs" / names[0]).read_text())
    assert (first["msg"], first["level"], first["status"]) == ("first day", "warning", 200)
    assert lifecycle.log_files(cfg.replace(workspace=tmp_path / "nowhere")) == []


# --- refusals: each leaves everything as it was -----------------------------------------------


def test_a_second_daemon_for_the_same_workspace_is_refused(tmp_path, daemons) -> None:
    ws = make_workspace(tmp_path / "ws")
    first = daemons(ws, free_port())
    pid = first.wait_healthy()["pid"]

    second = daemons(ws, free_port())

    assert_refused(second, "already running", str(pid))
    assert (ws / ".daemon" / "pid").read_text().strip() == str(pid)
    first.wait_healthy()


def test_a_busy_port_is_refused_naming_the_port_and_changes_nothing(tmp_path, daemons) -> None:
    port = free_port()
    first = daemons(make_workspace(tmp_path / "one"), port)
    first.wait_healthy()
    other = make_workspace(tmp_path / "two")

    assert_refused(daemons(other, port), f"port {port}", "in use")

    assert not (other / "memory").exists()
    assert not (other / ".daemon" / "pid").exists()
    first.wait_healthy()


def test_a_port_held_by_another_program_is_refused_too(tmp_path, daemons) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        ws = make_workspace(tmp_path / "ws")
        assert_refused(daemons(ws, port), f"port {port}")
    assert not (ws / "memory").exists()


def test_a_corrupt_database_stops_the_start_with_one_clear_line(tmp_path, daemons) -> None:
    ws = make_workspace(tmp_path / "ws")
    db = ws / "memory" / "memories.db"
    db.parent.mkdir()
    db.write_bytes(os.urandom(8192))
    before = sha256(db)
    port = free_port()

    line = assert_refused(daemons(ws, port), str(db))

    assert "not a database" in line
    assert sha256(db) == before
    assert not listening(port)
    assert not (ws / ".daemon" / "pid").exists()


# Root writes through file modes; without CAP_DAC_OVERRIDE (dropped by util-linux's setpriv)
# it meets them like anyone else, so the read-only test runs for real under root too.
AS_UNPRIVILEGED = (
    ("setpriv", "--inh-caps=-dac_override,-fowner", "--bounding-set=-dac_override,-fowner")
    if os.geteuid() == 0 else ()
)


def test_a_read_only_database_stops_the_start_with_one_clear_line(tmp_path, daemons) -> None:
    ws = make_workspace(tmp_path / "ws")
    db = ws / "memory" / "memories.db"
    Store.open(db).close()
    before = sha256(db)
    db.chmod(0o444)
    db.parent.chmod(0o555)
    try:
        line = assert_refused(daemons(ws, free_port(), AS_UNPRIVILEGED), str(db))
    finally:
        db.parent.chmod(0o755)
    assert "read-only" in line
    assert sha256(db) == before
    assert not (ws / ".daemon" / "pid").exists()


def test_a_read_only_database_file_in_a_writable_directory_is_refused_too(
    tmp_path, daemons
) -> None:
    """SQLite would open this file read-only without a word and fail at the first write."""
    ws = make_workspace(tmp_path / "ws")
    db = ws / "memory" / "memories.db"
    Store.open(db).close()
    before = sha256(db)
    db.chmod(0o444)
    line = assert_refused(daemons(ws, free_port(), AS_UNPRIVILEGED), str(db))
    assert "read-only" in line
    assert sha256(db) == before
    assert sorted(p.name for p in db.parent.iterdir()) == ["memories.db"]


def test_a_directory_where_the_database_should_be_stops_the_start(tmp_path, daemons) -> None:
    ws = make_workspace(tmp_path / "ws")
    db = ws / "memory" / "memories.db"
    db.mkdir(parents=True)
    line = assert_refused(daemons(ws, free_port()), str(db))
    assert "cannot open database" in line


def test_an_unwritable_workspace_stops_the_start_with_one_clear_line(tmp_path, daemons) -> None:
    ws = make_workspace(tmp_path / "ws")
    ws.chmod(0o555)
    try:
        line = assert_refused(daemons(ws, free_port(), AS_UNPRIVILEGED), str(ws / ".daemon"))
    finally:
        ws.chmod(0o755)
    assert "cannot create" in line


def test_a_pid_file_left_by_a_killed_daemon_does_not_block_a_new_start(tmp_path, daemons) -> None:
    ws = make_workspace(tmp_path / "ws")
    port = free_port()
    first = daemons(ws, port)
    first.wait_healthy()
    first.kill()  # SIGKILL: the pid file stays behind, its lock does not
    assert (ws / ".daemon" / "pid").exists()
    assert lifecycle.running_pid(config_for(ws, port)) is None

    second = daemons(ws, port)

    assert second.wait_healthy()["pid"] == second.proc.pid


# --- start_background, status, stop -----------------------------------------------------------


def test_background_start_status_and_stop(tmp_path) -> None:
    ws = make_workspace(tmp_path / "ws")
    cfg = config_for(ws, free_port())
    pid = lifecycle.start_background(cfg)
    try:
        info = lifecycle.status(cfg)
        assert (info["running"], info["healthy"], info["pid"]) == (True, True, pid)
        assert info["status"]["daemon"]["port"] == cfg.port
        assert info["status"]["memories"] == 0
        with pytest.raises(Conflict, match="already running"):
            lifecycle.start_background(cfg)
        # detached: its own session, so a closing terminal does not take it down
        assert os.getsid(pid) == pid
    finally:
        stopped = lifecycle.stop(cfg)
    assert stopped is True
    assert lifecycle.status(cfg)["running"] is False
    assert lifecycle.stop(cfg) is False
    assert lifecycle.log_files(cfg), "the daemon wrote no log"


def test_start_background_reports_why_the_daemon_could_not_start(tmp_path) -> None:
    ws = make_workspace(tmp_path / "ws")
    db = ws / "memory" / "memories.db"
    db.parent.mkdir()
    db.write_bytes(b"this is not sqlite" * 100)
    cfg = config_for(ws, free_port())
    with pytest.raises(SignetError, match="memories.db") as caught:
        lifecycle.start_background(cfg)
    assert caught.value.code == "daemon_start_failed"
    assert lifecycle.status(cfg)["running"] is False


def test_start_background_refuses_a_busy_port_before_spawning(tmp_path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        cfg = config_for(make_workspace(tmp_path / "ws"), holder.getsockname()[1])
        with pytest.raises(Conflict, match=f"port {cfg.port}"):
            lifecycle.start_background(cfg)
    assert not (cfg.daemon_dir / lifecycle.STARTUP_OUTPUT).exists()


STUBBORN = """
import fcntl, os, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
fcntl.flock(fd, fcntl.LOCK_EX)
os.write(fd, str(os.getpid()).encode())
print("ready", flush=True)
time.sleep(60)
"""


def test_stop_kills_a_daemon_that_ignores_sigterm(tmp_path, caplog) -> None:
    cfg = config_for(make_workspace(tmp_path / "ws"), free_port())
    cfg.daemon_dir.mkdir()
    proc = subprocess.Popen([sys.executable, "-c", STUBBORN, str(cfg.pid_path)],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        assert lifecycle.running_pid(cfg) == proc.pid
        with caplog.at_level(logging.WARNING, logger="signet.daemon.lifecycle"):
            assert lifecycle.stop(cfg, timeout_s=0.5) is True
        proc.wait(timeout=10)  # stop() reaped it already (it is our child): no status left
        assert lifecycle.running_pid(cfg) is None
        assert "ignored SIGTERM" in caplog.text
    finally:
        if proc.poll() is None:
            proc.kill()


def test_stop_waits_out_the_daemons_own_shutdown_before_killing_it() -> None:
    """`signet daemon stop` kills only after the daemon's shutdown budgets have all run out
    (requests in flight, then a running worker tick, then leases released, accesses written
    and the WAL checkpointed): a kill at 10 s landed exactly at the end of the first two."""
    from signet.cli.daemon_commands import stop as stop_command
    from signet.daemon.background import STOP_TIMEOUT_S
    from signet.daemon.startup import GRACEFUL_SHUTDOWN_S

    budgets = GRACEFUL_SHUTDOWN_S + STOP_TIMEOUT_S
    (timeout,) = [p for p in stop_command.params if p.name == "timeout"]
    assert lifecycle.STOP_WAIT_S >= budgets + 10
    assert timeout.default == lifecycle.STOP_WAIT_S


# --- durability and defaults ------------------------------------------------------------------


def test_kill_9_during_a_burst_of_remembers_loses_no_acknowledged_write(tmp_path, daemons) -> None:
    ws = make_workspace(tmp_path / "ws")
    daemon = daemons(ws, free_port())
    daemon.wait_healthy()
    acked: dict[str, str] = {}
    lock = threading.Lock()
    errors: list[str] = []

    def burst(worker: int) -> None:
        with httpx.Client(base_url=daemon.url, timeout=10, headers=daemon.headers()) as client:
            for n in range(100_000):
                content = f"burst write {worker}-{n} of the kill test"
                try:
                    reply = client.post(REMEMBER, json={"content": content})
                except httpx.HTTPError as exc:
                    errors.append(type(exc).__name__)
                    return
                if reply.status_code == 200:
                    with lock:
                        acked[reply.json()["id"]] = content

    threads = [threading.Thread(target=burst, args=(w,)) for w in range(3)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 60
    while len(acked) < 300 and time.monotonic() < deadline:
        time.sleep(0.01)
    daemon.proc.send_signal(signal.SIGKILL)
    for thread in threads:
        thread.join(30)
    daemon.proc.wait(10)

    assert len(acked) >= 300 and len(errors) == 3, (len(acked), errors)
    with opened(ws) as store:
        rows = dict(store.reader().execute("SELECT id, content FROM memories").fetchall())
    lost = {i: c for i, c in acked.items() if rows.get(i) != c}
    assert not lost, f"{len(lost)} acknowledged writes lost"


def test_a_daemon_with_default_settings_embeds_locally(tmp_path, daemons) -> None:
    ws = make_workspace(tmp_path / "ws", agent_yaml=None)  # no agent.yaml: every default
    daemon = daemons(ws, free_port())
    daemon.wait_healthy(timeout_s=120)
    with httpx.Client(base_url=daemon.url, timeout=60, headers=daemon.headers()) as client:
        # Nothing embedded yet: the model loads on the first embed (`signet doctor` says so).
        assert client.get("/api/status").json()["embedder"]["loaded"] is False
        stored = client.post(REMEMBER, json={"content": "The cat sleeps on the warm windowsill"})
        # The default write path is deferred: remember returns before the model runs and the
        # daemon's embed worker stores the vector moments later.
        assert stored.status_code == 200 and stored.json()["embedded"] is False
        client.post(REMEMBER, json={"content": "Quarterly taxes are due in April"})
        query = {"query": "where does the kitten nap", "mode": "vector"}
        deadline = time.monotonic() + 60  # against hanging, not a speed target
        # Both writes are embedded (the cat found, the taxes' vector stored) before judging.
        while not ((found := client.post("/api/memory/recall", json=query).json())["results"]
                   and client.get("/api/status").json()["embeddings"]["missing"] == 0):
            assert time.monotonic() < deadline, "the embed worker never embedded the memories"
            time.sleep(0.1)
        status = client.get("/api/status").json()
    assert found["results"][0]["id"] == stored.json()["id"]
    assert (status["embedder"]["provider"], status["embedder"]["loaded"]) == ("local", True)


def test_daemon_env_names_the_workspace_and_port(tmp_path) -> None:
    """The helper the other tests rely on really points a daemon at the test's workspace."""
    env = daemon_env(tmp_path, 4321)
    assert Config.load(env=env).workspace == tmp_path and Config.load(env=env).port == 4321
