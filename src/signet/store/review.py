"""SQL for the review queue (memory_review_queue, migration 003).

A pipeline proposal that must not apply on its own — an update whose new fact contradicts the
memory it would replace — is parked here as `pending`. An operator approves (the change is then
applied, with the cold-tier archive first) or rejects it; either way the row keeps who decided
and when. Writes run inside `Store.write_tx()`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from signet.errors import InvalidInput
from signet.store.connection import Row
from signet.store.dialect import SQLITE, Dialect, Executes
from signet.store.memories import new_id
from signet.types import dumps

REVIEW_STATUSES: tuple[str, ...] = ("pending", "approved", "rejected")


@dataclass(frozen=True, slots=True)
class ReviewItem:
    id: str
    memory_id: str
    source_memory_id: str | None
    action: str
    old_content: str
    new_content: str | None
    proposal: dict[str, Any]
    verdict: dict[str, Any] | None
    reason: str
    status: str
    created_at: str
    resolved_at: str | None
    resolved_by: str | None
    target_version: int | None = None  # the memory's version when the item was parked

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def item_from_row(row: Row | dict[str, Any]) -> ReviewItem:
    """A review item from its row (SQLite's Row, or a column -> value mapping)."""
    return ReviewItem(
        id=row["id"], memory_id=row["memory_id"], source_memory_id=row["source_memory_id"],
        action=row["action"], old_content=row["old_content"], new_content=row["new_content"],
        proposal=json.loads(row["proposal"]),
        verdict=json.loads(row["verdict"]) if row["verdict"] else None,
        reason=row["reason"], status=row["status"], created_at=row["created_at"],
        resolved_at=row["resolved_at"], resolved_by=row["resolved_by"],
        target_version=row["target_version"],
    )


def add(
    conn: Executes,
    *,
    memory_id: str,
    source_memory_id: str | None,
    action: str,
    old_content: str,
    new_content: str | None,
    proposal: dict[str, Any],
    verdict: dict[str, Any] | None,
    reason: str,
    now: str,
    target_version: int | None = None,
    dialect: Dialect = SQLITE,
) -> str:
    """Park a proposal for review; return the new item's id."""
    item_id = new_id()
    conn.execute(dialect.sql(
        "INSERT INTO memory_review_queue (id, memory_id, source_memory_id, action, old_content,"
        " new_content, proposal, verdict, reason, status, created_at, target_version)"
        " VALUES (?,?,?,?,?,?,?,?,?,'pending',?,?)"),
        (
            item_id, memory_id, source_memory_id, action, old_content, new_content,
            dumps(proposal), dumps(verdict) if verdict is not None else None, reason, now,
            target_version,
        ),
    )
    return item_id


def get(conn: Executes, item_id: str, dialect: Dialect = SQLITE) -> ReviewItem | None:
    """The item, its row held for the transaction where the dialect locks rows."""
    row = conn.execute(
        f"SELECT * FROM memory_review_queue WHERE id = {dialect.mark}{dialect.row_lock}",
        (item_id,),
    ).fetchone()
    return item_from_row(row) if row else None


def list_items(
    conn: Executes, status: str | None = "pending", *, limit: int = 100, offset: int = 0,
    dialect: Dialect = SQLITE,
) -> list[ReviewItem]:
    """Items of one status (or all with None), oldest first: a queue is worked in order."""
    if status is not None and status not in REVIEW_STATUSES:
        raise InvalidInput(f"unknown review status {status!r} (one of {', '.join(REVIEW_STATUSES)})")
    where, params = ("WHERE status = ?", [status]) if status else ("", [])
    # PostgreSQL's queue keeps no insertion order: its ties go by id.
    tiebreak = "rowid" if dialect is SQLITE else "id"
    rows = conn.execute(dialect.sql(
        f"SELECT * FROM memory_review_queue {where} ORDER BY created_at, {tiebreak}"
        " LIMIT ? OFFSET ?"), (*params, max(limit, 0), max(offset, 0)),
    ).fetchall()
    return [item_from_row(r) for r in rows]


def resolve(
    conn: Executes, item_id: str, status: str, resolved_by: str, now: str,
    dialect: Dialect = SQLITE,
) -> bool:
    """Close a pending item as approved or rejected; False when it is not pending."""
    if status not in ("approved", "rejected"):
        raise InvalidInput(f"a review is resolved as approved or rejected, not {status!r}")
    cursor = conn.execute(dialect.sql(
        "UPDATE memory_review_queue SET status = ?, resolved_at = ?, resolved_by = ?"
        " WHERE id = ? AND status = 'pending'"),
        (status, now, resolved_by, item_id),
    )
    return cursor.rowcount == 1
