"""What `signet status` says about the harness hooks: their failures of the last 24 hours
(the lines of `<workspace>/.daemon/logs/hooks.log`, one per failure, each stamped in UTC) and
the spool's backlog (captures waiting for the daemon, and those set aside as unimportable)."""

from __future__ import annotations

from collections import deque
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from signet import spool

__all__ = ["hook_health"]

WINDOW = timedelta(hours=24)
TAIL_LINES = 5000  # the log only grows by failures; its tail holds any day's worth


def hook_health(workspace: Path, now: datetime | None = None) -> dict[str, Any]:
    at = now or datetime.now(UTC)
    recent = [line for line in _tail(workspace / ".daemon" / "logs" / "hooks.log")
              if (stamp := _stamp(line)) is not None and at - stamp <= WINDOW]
    failed = Path(spool.spool_dir(str(workspace))) / spool.FAILED
    return {
        "failures_24h": len(recent),
        "last_failure": recent[-1] if recent else None,
        "spool_backlog": len(spool.pending(str(workspace))),
        "spool_failed": len(list(failed.glob(f"*{spool.SUFFIX}"))) if failed.is_dir() else 0,
    }


def _tail(path: Path) -> list[str]:
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            return [line.rstrip("\n") for line in deque(handle, maxlen=TAIL_LINES)]
    except OSError:
        return []


def _stamp(line: str) -> datetime | None:
    head = line.split(" ", 1)[0]
    try:
        return datetime.strptime(head, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return None


def describe(health: dict[str, Any]) -> str:
    """One line for the status table."""
    parts = [f"{health['failures_24h']} failures in 24 h"]
    if health.get("last_failure"):
        parts[0] += f" (last: {str(health['last_failure'])[:160]})"
    parts.append(f"spool: {health['spool_backlog']} waiting for the daemon")
    if health.get("spool_failed"):
        parts.append(f"{health['spool_failed']} set aside in memory/spool/failed")
    return "; ".join(parts)
