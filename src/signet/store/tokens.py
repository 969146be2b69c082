"""SQL for the `tokens` table: API tokens and one-time login codes, stored only as the sha256 of the
string handed out, so a copy of the database lets no one in. Revocation (`revoked_at`) is read on
every request, so it takes effect at once; a login code is revoked in the transaction that checks
it, so it works exactly once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from signet.store.connection import Connection

LOGIN_ROLE = "login"

_COLUMNS = (
    "id, name, role, permissions, scope_project, scope_agent, key_hash, created_at,"
    " expires_at, revoked_at, last_used_at"
)


@dataclass(frozen=True, slots=True)
class TokenRow:
    id: str
    name: str
    role: str
    permissions: tuple[str, ...]
    scope_project: str | None
    scope_agent: str | None
    key_hash: str
    created_at: str
    expires_at: str | None
    revoked_at: str | None
    last_used_at: str | None


def insert(conn: Connection, row: TokenRow) -> None:
    conn.execute(
        f"INSERT INTO tokens ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (row.id, row.name, row.role, json.dumps(list(row.permissions)), row.scope_project,
         row.scope_agent, row.key_hash, row.created_at, row.expires_at, row.revoked_at,
         row.last_used_at),
    )


def get(conn: Connection, token_id: str) -> TokenRow | None:
    found = conn.execute(f"SELECT {_COLUMNS} FROM tokens WHERE id = ?", (token_id,)).fetchone()
    return _row(found) if found else None


def list_tokens(conn: Connection, *, include_revoked: bool = True) -> list[TokenRow]:
    """Every API token (login codes left out), oldest first."""
    where = "role != ?" + ("" if include_revoked else " AND revoked_at IS NULL")
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM tokens WHERE {where} ORDER BY created_at, id", (LOGIN_ROLE,)
    ).fetchall()
    return [_row(r) for r in rows]


def revoke(conn: Connection, token_id: str, now: str) -> bool:
    """Mark a token revoked; False when there is no such live token."""
    cursor = conn.execute(
        "UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL AND role != ?",
        (now, token_id, LOGIN_ROLE),
    )
    return cursor.rowcount > 0


def touch(conn: Connection, token_id: str, now: str) -> None:
    conn.execute("UPDATE tokens SET last_used_at = ? WHERE id = ?", (now, token_id))


def consume_login_code(conn: Connection, key_hash: str, now: str) -> TokenRow | None:
    """The live, unexpired login code with this hash, revoked in the same statement's
    transaction; None when there is none (unknown, used or expired)."""
    found = conn.execute(
        f"SELECT {_COLUMNS} FROM tokens WHERE key_hash = ? AND role = ? AND revoked_at IS NULL"
        " AND (expires_at IS NULL OR expires_at > ?)",
        (key_hash, LOGIN_ROLE, now),
    ).fetchone()
    if found is None:
        return None
    conn.execute("UPDATE tokens SET revoked_at = ?, last_used_at = ? WHERE id = ?",
                 (now, now, found[0]))
    return _row(found)


def purge_login_codes(conn: Connection, now: str) -> int:
    """Delete used or expired login codes (they are worth nothing once spent)."""
    cursor = conn.execute(
        "DELETE FROM tokens WHERE role = ? AND (revoked_at IS NOT NULL OR expires_at <= ?)",
        (LOGIN_ROLE, now),
    )
    return cursor.rowcount


def _row(values: tuple[object, ...]) -> TokenRow:
    (id_, name, role, perms, project, agent, key_hash, created, expires, revoked, used) = values
    return TokenRow(
        id=str(id_), name=str(name), role=str(role),
        permissions=tuple(json.loads(str(perms or "[]"))),
        scope_project=_opt(project), scope_agent=_opt(agent), key_hash=str(key_hash),
        created_at=str(created), expires_at=_opt(expires), revoked_at=_opt(revoked),
        last_used_at=_opt(used),
    )


def _opt(value: object) -> str | None:
    return None if value is None else str(value)
