"""A hook that finds no daemon starts one in the background, so memory does not stay off: only when
the port refuses the connection, only for an initialised workspace, and one at a time (a `flock`
on `.daemon/autostart.lock`, not again within BACKOFF_S), so twenty hooks start one daemon and a
failing one is not retried on every prompt. The daemon's pid lock prevents two daemons even if
this races. The hook does not wait. `SIGNET_AUTOSTART=0` turns it off.
"""

from __future__ import annotations

import os
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from signet.hooks.settings import HookSettings

__all__ = ["BACKOFF_S", "LOCK_NAME", "enabled", "start_daemon"]

BACKOFF_S = 30.0
LOCK_NAME = "autostart.lock"
PID_NAME = "pid"
STARTUP_OUTPUT = "startup.log"


def enabled(env: Mapping[str, str]) -> bool:
    return env.get("SIGNET_AUTOSTART", "").strip().lower() not in ("0", "false", "no", "off")


def start_daemon(cfg: HookSettings, env: Mapping[str, str]) -> str | None:
    """Start the workspace's daemon unless that is not for this hook to do; what was done, for
    the log line (None: nothing)."""
    if not enabled(env) or not os.path.isfile(os.path.join(cfg.workspace, "agent.yaml")):
        return None
    try:
        import fcntl
    except ImportError:  # no flock (Windows): start the daemon by hand or as a service
        return None

    os.makedirs(cfg.daemon_dir, mode=0o700, exist_ok=True)
    fd = os.open(os.path.join(cfg.daemon_dir, LOCK_NAME), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return None  # another hook is starting it right now
        if time.time() - _last_attempt(fd) < BACKOFF_S or _daemon_holds_pid_lock(cfg):
            return None
        pid = _spawn(cfg, env)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{time.time():.3f} {pid}\n".encode("ascii"), 0)
        return f"started the daemon in the background (pid {pid})"
    finally:
        os.close(fd)  # closing drops the flock


def _last_attempt(fd: int) -> float:
    try:
        return float(os.pread(fd, 64, 0).split()[0])
    except (OSError, ValueError, IndexError):
        return 0.0


def _daemon_holds_pid_lock(cfg: HookSettings) -> bool:
    """A daemon holds the pid file's lock from its first moment (before it binds the port)."""
    import fcntl

    try:
        fd = os.open(os.path.join(cfg.daemon_dir, PID_NAME), os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def _spawn(cfg: HookSettings, env: Mapping[str, str]) -> int:
    import subprocess

    child_env = dict(env)
    child_env.update(SIGNET_WORKSPACE=cfg.workspace, SIGNET_PORT=str(cfg.port), SIGNET_BIND=cfg.bind)
    for name in ("HF_HUB_OFFLINE", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        child_env.setdefault(name, "1")
    with open(os.path.join(cfg.daemon_dir, STARTUP_OUTPUT), "ab") as out:
        child = subprocess.Popen(
            [sys.executable, "-m", "signet", "--workspace", cfg.workspace, "daemon", "start",
             "--foreground"],
            stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=child_env,
            cwd=cfg.workspace, start_new_session=True, close_fds=True,
        )
    return child.pid
