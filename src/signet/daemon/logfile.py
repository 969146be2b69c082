"""The daemon's log: one JSON object per line, one file per UTC day (`.daemon/logs/daemon-YYYY-MM-
DD.log`).

The handler picks the file name when it writes, so there is no rotation thread and no file is
renamed under a reader. Request lines never carry a query string or body: those hold memory content,
which stays in the database.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from datetime import UTC, date, datetime
from pathlib import Path
from typing import IO

from signet.types import format_ts

# Attributes callers may pass with `extra=` that become fields of the JSON line.
FIELDS = ("method", "path", "status", "ms", "request_id", "pid", "port", "bind", "workspace")


def log_path(log_dir: Path, day: date) -> Path:
    return log_dir / f"daemon-{day.isoformat()}.log"


def utc_today() -> date:
    return datetime.now(UTC).date()


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "ts": format_ts(datetime.fromtimestamp(record.created, UTC)),
            "level": record.levelname.lower(),
            "msg": record.getMessage(),
            "logger": record.name,
        }
        for name in FIELDS:
            if name in record.__dict__:
                line[name] = record.__dict__[name]
        if record.exc_info:
            line["exc"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False, default=str)


class DailyFileHandler(logging.Handler):
    """Appends to the file of the current day; `today` is injectable so tests can turn the clock."""

    def __init__(self, log_dir: Path, today: Callable[[], date] = utc_today) -> None:
        super().__init__()
        self.log_dir = Path(log_dir)
        self.today = today
        self._day: date | None = None
        self._stream: IO[str] | None = None
        self.setFormatter(JsonFormatter())

    @property
    def current_path(self) -> Path:
        return log_path(self.log_dir, self.today())

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = self.format(record)
            stream = self._stream_for(self.today())
            stream.write(line + "\n")
            stream.flush()
        except Exception:  # logging must never take the daemon down
            self.handleError(record)

    def _stream_for(self, day: date) -> IO[str]:
        if self._stream is None or day != self._day:
            if self._stream is not None:
                self._stream.close()
            self.log_dir.mkdir(parents=True, exist_ok=True)
            # 0600 whatever the umask: log lines name paths, routes and errors of private data.
            self._stream = open(
                log_path(self.log_dir, day), "a", encoding="utf-8", opener=_private
            )
            self._day = day
        return self._stream

    def close(self) -> None:
        self.acquire()
        try:
            if self._stream is not None:
                self._stream.close()
                self._stream = None
        finally:
            self.release()
        super().close()


def _private(path: str, flags: int) -> int:
    fd = os.open(path, flags, 0o600)
    os.fchmod(fd, 0o600)  # a file made earlier under a looser umask is tightened too
    return fd


def configure(log_dir: Path, level: int = logging.INFO) -> DailyFileHandler:
    """Send the root logger (ours, uvicorn's, everyone's) to the daily file, replacing an
    earlier daily handler so a second call does not write every line twice."""
    root = logging.getLogger()
    for old in [h for h in root.handlers if isinstance(h, DailyFileHandler)]:
        root.removeHandler(old)
        old.close()
    handler = DailyFileHandler(log_dir)
    root.addHandler(handler)
    root.setLevel(level)
    return handler
