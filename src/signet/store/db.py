"""The Store: one writer connection behind a fair queue, and a reader connection per thread.

SQLite allows one writer at a time. `write_tx()` waits its turn in the write queue
(store/write_queue.py), opens `BEGIN IMMEDIATE` on the single writer connection and commits or rolls
back; nested on the same thread it is a savepoint. Readers use per-thread connections, so under WAL
they never wait for the writer. `in_write_tx` lets tests prove no LLM or embedding call runs inside
a write transaction.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from signet.errors import StoreError
from signet.store import migrate, sources
from signet.store.connection import Connection, DatabaseError, connect
from signet.store.lexical_index import LexicalIndex
from signet.store.write_queue import WriteQueue
from signet.workspace import private_dir, private_file


class Store:
    def __init__(self, path: Path, *, busy_timeout_ms: int = 5000) -> None:
        self.path = Path(path)
        self.busy_timeout_ms = busy_timeout_ms
        self._queue = WriteQueue()
        self._local = threading.local()
        self._readers: list[Connection] = []
        self._readers_lock = threading.Lock()
        self._closed = False
        self._writer = connect(self.path, busy_timeout_ms=busy_timeout_ms)
        # The lexical channel's postings in memory, shared by the reader threads.
        self.lexical = LexicalIndex()

    @classmethod
    def open(cls, path: Path, *, busy_timeout_ms: int = 5000) -> Store:
        """Open (creating if needed) and migrate the database at `path`."""
        path = Path(path)
        _private(path)
        store = cls(path, busy_timeout_ms=busy_timeout_ms)
        try:
            with store._queue.turn():
                migrate.migrate(store._writer)
            if sources.pending(store._writer):
                with store.write_tx():
                    pass  # the commit indexes the sources a migration marked dirty
        except DatabaseError as exc:
            store.close()
            raise StoreError(f"cannot migrate database {path}: {exc}") from exc
        except BaseException:
            store.close()
            raise
        return store

    @property
    def in_write_tx(self) -> bool:
        return getattr(self._local, "depth", 0) > 0

    @contextmanager
    def write_tx(self) -> Iterator[Connection]:
        """A write transaction on the single writer; nested calls become savepoints."""
        with self._queue.turn():
            depth = getattr(self._local, "depth", 0)
            conn = self._writer
            name = f"sp{depth}"
            conn.execute("BEGIN IMMEDIATE" if depth == 0 else f"SAVEPOINT {name}")
            self._local.depth = depth + 1
            try:
                yield conn
                if depth == 0:
                    # Derived indexes catch up inside the transaction that changed their
                    # inputs, so no reader ever sees a committed write they lack.
                    sources.flush(conn)
            except BaseException:
                _undo(conn, depth, name)
                raise
            else:
                _finish(conn, depth, name)
            finally:
                self._local.depth = depth

    def write_stats(self) -> dict[str, dict[str, float]]:
        """The write queue's turns, seconds waited and seconds held, per lane (write_queue.py)."""
        return self._queue.stats()

    def reader(self) -> Connection:
        """This thread's read connection (inside a write transaction: the writer, to see it)."""
        if self.in_write_tx:
            return self._writer
        conn = getattr(self._local, "reader", None)
        if conn is None:
            if self._closed:
                raise StoreError("store is closed")
            conn = connect(self.path, busy_timeout_ms=self.busy_timeout_ms)
            self._local.reader = conn
            with self._readers_lock:
                self._readers.append(conn)
        return conn

    def checkpoint(self) -> None:
        with self._queue.turn():
            self._writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def close(self) -> None:
        self._closed = True
        with self._readers_lock:
            for conn in self._readers:
                try:
                    conn.close()
                except DatabaseError:
                    pass
            self._readers.clear()
        with self._queue.turn():
            try:
                self._writer.close()
            except DatabaseError:
                pass


def _undo(conn: Connection, depth: int, name: str) -> None:
    """Roll back after a failure, keeping the original error.

    SQLite may already have rolled the transaction back itself (a full disk, an I/O error):
    a second ROLLBACK would then raise "no transaction is active" and hide the real cause.
    """
    if not conn.in_transaction:
        return
    try:
        conn.execute("ROLLBACK" if depth == 0 else f"ROLLBACK TO {name}")
        if depth:
            conn.execute(f"RELEASE {name}")
    except DatabaseError:
        pass  # the error being raised already says what went wrong


def _finish(conn: Connection, depth: int, name: str) -> None:
    """Commit (or release the savepoint); a failed COMMIT leaves no transaction open."""
    try:
        conn.execute("COMMIT" if depth == 0 else f"RELEASE {name}")
    except BaseException:
        if depth == 0 and conn.in_transaction:
            try:
                conn.execute("ROLLBACK")
            except DatabaseError:
                pass
        raise


def _private(path: Path) -> None:
    """The database is the user's alone, whatever the umask: its folder 0700 when created here,
    the file 0600 before SQLite opens it (SQLite gives -wal and -shm the database file's mode),
    and a file an older version left readable by others tightened."""
    private_dir(path.parent)
    private_file(path)
    for side in (path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        if side.is_file() and not side.is_symlink() and side.stat().st_mode & 0o077:
            side.chmod(0o600)
