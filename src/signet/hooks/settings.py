"""The few settings a hook process needs, without loading the whole configuration.

`Config.load` would be most of a hook's CPU time on every prompt, so the hook keeps what it resolved
in `.daemon/hook-settings.json`, keyed by agent.yaml's stat, the stat of signet/config.py (an
upgrade that changes a default is seen) and SIGNET_PORT / SIGNET_BIND. On any doubt the full
`Config.load` runs and the cache is rewritten, only into an existing `.daemon` folder.
"""

from __future__ import annotations

import json
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

__all__ = ["CACHE_NAME", "HookSettings", "load_settings", "resolve_workspace"]

CACHE_NAME = "hook-settings.json"
EVENT_BUDGET_KEYS = {
    "session-start": "session_start_timeout_ms",
    "user-prompt-submit": "prompt_submit_timeout_ms",
    "pre-compaction": "session_end_timeout_ms",
    "session-end": "session_end_timeout_ms",
}
_SCHEMA_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "config.py")


class HookSettings:
    """Where the daemon is, where its token is, and each event's time budget in ms."""

    __slots__ = ("bind", "budgets_ms", "port", "workspace")

    def __init__(self, workspace: str, bind: str, port: int, budgets_ms: dict[str, int]) -> None:
        self.workspace, self.bind, self.port, self.budgets_ms = workspace, bind, port, budgets_ms

    @property
    def daemon_dir(self) -> str:
        return os.path.join(self.workspace, ".daemon")

    @property
    def token_path(self) -> str:
        return os.path.join(self.daemon_dir, "token")

    @property
    def log_dir(self) -> str:
        return os.path.join(self.daemon_dir, "logs")


def resolve_workspace(explicit: str | None, env: Mapping[str, str]) -> str:
    """The same answer as signet.config.resolve_workspace, as a string."""
    if explicit:
        chosen = explicit
    elif env.get("SIGNET_WORKSPACE"):
        chosen = env["SIGNET_WORKSPACE"]
    else:
        chosen = os.path.join(env.get("HOME") or os.path.expanduser("~"), ".agents")
    if chosen.startswith("~"):
        home = env.get("HOME")
        chosen = chosen.replace("~", home, 1) if home else os.path.expanduser(chosen)
    return os.path.abspath(chosen)


def load_settings(workspace: str | None, env: Mapping[str, str]) -> HookSettings:
    """The hook's settings: from the cache when its key still holds, else from Config.load
    (which raises ConfigError for a broken agent.yaml or environment, as every command does)."""
    root = resolve_workspace(workspace, env)
    key = _key(root, env)
    cache = os.path.join(root, ".daemon", CACHE_NAME)
    cached = _read(cache, key)
    if cached is not None:
        return cached
    settings = _from_config(root, env)
    _write(cache, key, settings)
    return settings


def _key(root: str, env: Mapping[str, str]) -> list[Any]:
    return [root, _stat(os.path.join(root, "agent.yaml")), _stat(_SCHEMA_FILE),
            env.get("SIGNET_PORT"), env.get("SIGNET_BIND")]


def _stat(path: str) -> list[int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_mtime_ns, st.st_size, st.st_ino]


def _read(path: str, key: list[Any]) -> HookSettings | None:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        if data["key"] != key:
            return None
        budgets = {event: int(data["budgets_ms"][event]) for event in EVENT_BUDGET_KEYS}
        return HookSettings(str(key[0]), str(data["bind"]), int(data["port"]), budgets)
    except (OSError, ValueError, KeyError, TypeError):
        return None  # no cache, or one this code cannot trust: ask Config.load


def _from_config(root: str, env: Mapping[str, str]) -> HookSettings:
    from signet.config import Config

    cfg = Config.load(root, env)
    budgets = {event: int(getattr(cfg.hooks, name)) for event, name in EVENT_BUDGET_KEYS.items()}
    return HookSettings(root, cfg.bind, cfg.port, budgets)


def _write(path: str, key: list[Any], settings: HookSettings) -> None:
    if not os.path.isdir(os.path.dirname(path)):
        return  # no daemon folder: never create one from a hook
    data = {"key": key, "bind": settings.bind, "port": settings.port, "budgets_ms": settings.budgets_ms}
    temp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(temp, "w", encoding="utf-8") as handle:
            json.dump(data, handle)
        os.replace(temp, path)  # readers see the old file or the new one, never half of one
    except OSError:
        try:
            os.unlink(temp)
        except OSError:
            pass
