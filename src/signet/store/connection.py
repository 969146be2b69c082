"""Opening SQLite connections: the one place that knows the binding, `sqlean` (sqlite3's API with
FTS5 and extension loading, which many Pythons lack). Autocommit, so transactions are explicit;
WAL, so readers never block the writer; `synchronous=NORMAL` (no committed write lost on a
process crash); 16 KiB pages for a new database, which pack the 1.5 KiB vector rows far tighter.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import sqlean as sqlite3

from signet.errors import StoreError

if TYPE_CHECKING:
    # sqlean ships no type information; its classes are the stdlib's DB-API, so the type
    # checker reads the stdlib's stubs for them.
    from sqlite3 import Connection, DatabaseError, IntegrityError, OperationalError, Row
else:
    Connection = sqlite3.Connection
    IntegrityError = sqlite3.IntegrityError
    OperationalError = sqlite3.OperationalError
    DatabaseError = sqlite3.DatabaseError
    Row = sqlite3.Row

PAGE_SIZE = 16384


def connect(path: Path, *, busy_timeout_ms: int = 5000, read_only: bool = False) -> Connection:
    """Open `path` with our pragmas; raise StoreError naming the file when it is unusable."""
    try:
        if read_only:
            conn = sqlite3.connect(
                f"file:{path}?mode=ro", uri=True, isolation_level=None, check_same_thread=False
            )
        else:
            conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        conn.execute("PRAGMA foreign_keys = ON")
        if not read_only:
            conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise StoreError(f"{path}: could not switch to WAL mode (got {mode})")
            conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return conn
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"cannot open database {path}: {exc}") from exc
