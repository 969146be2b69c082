"""Starting, stopping and finding the daemon of a workspace. The daemon holds an exclusive `flock`
on `.daemon/pid` while it runs; the lock, not the pid, says whether one is alive, since the
kernel drops it however the process dies, and two daemons never serve one workspace.
`start_background` spawns `signet daemon start --foreground` in its own session and waits for
`/health` to answer with the child's pid; `stop` sends SIGTERM and waits for the lock.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from signet.config import Config
from signet.daemon import logfile
from signet.daemon.tokens import auth_headers
from signet.errors import Conflict, SignetError

try:
    import fcntl
except ImportError:  # Windows: fall back to asking whether the pid is alive
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)

START_TIMEOUT_S = 20.0
# A daemon answers /health as soon as its store is open and /api/status once its API is built
# behind it (daemon/startup.py): a status asked right after a start waits for that.
STATUS_TIMEOUT_S = 10.0
STARTUP_OUTPUT = "startup.log"  # the spawned daemon's stdout/stderr, read when it fails to start


# --- the daemon process ------------------------------------------------------------------------


def run_foreground(cfg: Config) -> None:
    """Run the daemon in this process until SIGTERM/SIGINT. Raises SignetError when it cannot
    start: Conflict if a daemon already serves the workspace or the port is taken, StoreError
    if the database cannot be opened. Nothing is written to the database in either case."""
    from signet.daemon import startup  # uvicorn and the store; the API is built later

    _make_dirs(cfg)
    logfile.configure(cfg.log_dir)
    try:
        with PidLock(cfg.pid_path) as lock:
            sock = startup.bind_socket(cfg.bind, cfg.port)
            lock.write(os.getpid())
            log.info("starting", extra={"pid": os.getpid(), "port": cfg.port, "bind": cfg.bind,
                                        "workspace": str(cfg.workspace)})
            startup.run(cfg, sock, ready=lambda: _announce(cfg))
    except SignetError as exc:
        log.error("cannot start: %s", exc)
        raise


def _make_dirs(cfg: Config) -> None:
    try:
        cfg.log_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SignetError(
            f"cannot create the daemon's directory {cfg.log_dir}: {exc.strerror}",
            code="daemon_dir_unwritable",
        ) from exc


def _announce(cfg: Config) -> None:
    print(f"signet daemon (pid {os.getpid()}) listening on {listen_url(cfg)}", file=sys.stderr,
          flush=True)


class PidLock:
    """The pid file, locked for the daemon's lifetime; removed again when the daemon ends."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def __enter__(self) -> PidLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        if not _try_lock(fd, exclusive=True):
            pid = _read_pid(fd)
            os.close(fd)
            raise Conflict(
                f"a signet daemon is already running for this workspace (pid {pid})",
                code="daemon_running",
            )
        self._fd = fd
        return self

    def write(self, pid: int) -> None:
        assert self._fd is not None
        os.ftruncate(self._fd, 0)
        os.lseek(self._fd, 0, os.SEEK_SET)
        os.write(self._fd, f"{pid}\n".encode())
        os.fsync(self._fd)

    def __exit__(self, *_exc: object) -> None:
        assert self._fd is not None
        # Unlink while still holding the lock: whatever the file says is ours or stale.
        self.path.unlink(missing_ok=True)
        os.close(self._fd)
        self._fd = None


# --- controlling it from another process ------------------------------------------------------


def url(cfg: Config) -> str:
    """Where this machine reaches the daemon: over loopback when it listens on every interface
    (asking `http://0.0.0.0:port` is refused by the Host guard, so `daemon start` reported a
    failure for a daemon that was serving)."""
    from signet.client.remote import daemon_url  # httpx: not on a foreground start's path

    return daemon_url(cfg)


def listen_url(cfg: Config) -> str:
    host = f"[{cfg.bind}]" if ":" in cfg.bind else cfg.bind
    return f"http://{host}:{cfg.port}"


def running_pid(cfg: Config) -> int | None:
    """The pid of the daemon serving this workspace, or None when none runs."""
    try:
        fd = os.open(cfg.pid_path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        if _try_lock(fd, exclusive=False):
            return None  # nobody holds the lock: a stale file from a crashed daemon
        return _read_pid(fd)
    finally:
        os.close(fd)


def start_background(cfg: Config, timeout_s: float = START_TIMEOUT_S) -> int:
    """Spawn `signet daemon start --foreground` detached; return its pid once /health answers."""
    pid = running_pid(cfg)
    if pid is not None:
        raise Conflict(f"a signet daemon is already running for this workspace (pid {pid})",
                       code="daemon_running")
    from signet.daemon.startup import bind_socket  # a busy port fails here, not in the child

    bind_socket(cfg.bind, cfg.port).close()
    cfg.daemon_dir.mkdir(parents=True, exist_ok=True)
    output = cfg.daemon_dir / STARTUP_OUTPUT
    with open(output, "wb") as out:
        child = subprocess.Popen(
            [sys.executable, "-m", "signet", "daemon", "start", "--foreground"],
            stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            env=_child_env(cfg), cwd=cfg.workspace, start_new_session=True,
        )
    _wait_healthy(cfg, child, output, timeout_s)
    return child.pid


# How long `stop` waits after SIGTERM before it kills. Longer than the daemon's own shutdown
# budgets added up (uvicorn's graceful 5 s for requests in flight, daemon/server.py; the
# workers' 5 s for a running tick, daemon/background.py; then the leases released, the accesses
# written, the WAL checkpointed): a kill inside them loses the buffered accesses and leaves
# jobs leased until the next start's reaper.
STOP_WAIT_S = 30.0


def stop(cfg: Config, timeout_s: float = STOP_WAIT_S) -> bool:
    """Stop the workspace's daemon: SIGTERM, then SIGKILL after `timeout_s`. False if none ran."""
    pid = running_pid(cfg)
    if pid is None:
        return False
    os.kill(pid, signal.SIGTERM)
    if not _wait_stopped(cfg, pid, timeout_s):
        log.warning("daemon %d ignored SIGTERM for %.1f s; killing it", pid, timeout_s)
        os.kill(pid, signal.SIGKILL)
        _wait_stopped(cfg, pid, 5)
    return True


def status(cfg: Config) -> dict[str, Any]:
    """What a `signet daemon status` shows: running or not, and the daemon's own status."""
    pid = running_pid(cfg)
    info: dict[str, Any] = {
        "running": pid is not None, "pid": pid, "url": url(cfg), "healthy": False,
        "pid_file": str(cfg.pid_path), "log_file": str(logfile.log_path(cfg.log_dir,
                                                                         logfile.utc_today())),
    }
    if pid is None:
        return info
    import httpx  # only the controlling process asks

    try:
        reply = httpx.get(f"{url(cfg)}/api/status", timeout=STATUS_TIMEOUT_S,
                          headers=auth_headers(cfg))
        body = reply.json()
    except (httpx.HTTPError, ValueError):
        return info
    if reply.status_code == 200 and body.get("daemon", {}).get("pid") == pid:
        info.update(healthy=True, status=body)
    return info


def log_files(cfg: Config) -> list[Path]:
    """The daemon's daily log files, oldest first (the last one is today's, if it logged)."""
    return sorted(cfg.log_dir.glob("daemon-????-??-??.log"))


# --- helpers ----------------------------------------------------------------------------------


def _try_lock(fd: int, *, exclusive: bool) -> bool:
    if fcntl is None:
        from signet.client.remote import process_exists  # only where there is no flock

        pid = _read_pid(fd)
        return pid is None or not process_exists(pid)
    try:
        fcntl.flock(fd, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _read_pid(fd: int) -> int | None:
    os.lseek(fd, 0, os.SEEK_SET)
    text = os.read(fd, 32).decode("ascii", "replace").strip()
    return int(text) if text.isdigit() else None


def _child_env(cfg: Config) -> dict[str, str]:
    env = dict(os.environ)
    env.update(SIGNET_WORKSPACE=str(cfg.workspace), SIGNET_PORT=str(cfg.port),
               SIGNET_BIND=cfg.bind)
    for name in ("HF_HUB_OFFLINE", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env.setdefault(name, "1")
    return env


def _wait_healthy(cfg: Config, child: subprocess.Popen[bytes], output: Path, timeout_s: float) -> None:
    import httpx  # only the controlling process asks

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if child.poll() is not None:
            raise SignetError(f"the daemon did not start: {_last_line(output)}",
                              code="daemon_start_failed")
        try:
            reply = httpx.get(f"{url(cfg)}/health", timeout=0.5)
            body = reply.json()
            # /health says `starting` until the API is built (daemon/startup.py): `daemon
            # start` returns once the whole API answers.
            if reply.status_code == 200 and body.get("pid") == child.pid and not body.get("starting"):
                return
        except (httpx.HTTPError, ValueError):
            pass
        time.sleep(0.1)
    raise SignetError(
        f"the daemon (pid {child.pid}) did not answer on {url(cfg)} within {timeout_s:.0f} s;"
        f" see {output} and {cfg.log_dir}", code="daemon_start_failed",
    )


def _wait_stopped(cfg: Config, pid: int, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        _reap(pid)
        if running_pid(cfg) != pid:
            return True
        time.sleep(0.05)
    return False


def _reap(pid: int) -> None:
    """Collect the exit status when the daemon is our own child (tests), so it leaves no zombie."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def _last_line(path: Path) -> str:
    try:
        lines = [ln for ln in path.read_text("utf-8", "replace").splitlines() if ln.strip()]
    except OSError:
        lines = []
    return lines[-1].strip() if lines else "no output"
