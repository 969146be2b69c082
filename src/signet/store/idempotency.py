"""SQL for idempotency keys: a client-chosen key remembered with the response it got.

A client that retries a write (a hook whose first request timed out, say) sends the same
`idempotency_key`; the second call finds the key and gets the first response back instead of
writing again. Both functions run on the connection of the caller's write transaction, so the
check and the record commit (or roll back) together with the write they guard.
"""

from __future__ import annotations

from signet.store.connection import Connection


def get(conn: Connection, key: str) -> str | None:
    """The response JSON recorded under `key`, or None when the key is new."""
    row = conn.execute("SELECT response FROM idempotency_keys WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def put(conn: Connection, key: str, memory_id: str | None, response: str, now: str) -> None:
    """Record the response for `key`; the first record of a key wins."""
    conn.execute(
        "INSERT OR IGNORE INTO idempotency_keys (key, memory_id, response, created_at)"
        " VALUES (?, ?, ?, ?)",
        (key, memory_id, response, now),
    )
