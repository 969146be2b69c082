"""What SQLite's SQL and PostgreSQL's differ by, for the statements both stores share. A shared
statement is written once in the SQLite module, taking a `dialect` (`SQLITE` by default; the
PostgreSQL store passes `POSTGRES`): `?` placeholders go through `sql`, and anything more
(booleans, NULL-safe equality, lists, the insertion-order column, row locks, a few functions) is
a fragment of the dialect. SQLAlchemy Core was not taken (docs/decisions.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol


class Executes(Protocol):
    """A connection or cursor of either driver: runs one statement, returns a cursor."""

    def execute(self, query: Any, params: Any = ..., /) -> Any: ...


class Database(Protocol):
    """A backend's database as the seams written once for both reach it (its CoreStore)."""

    backend: str
    dialect: Dialect

    def transaction(self) -> AbstractContextManager[Any]:
        """A write transaction; one opened inside another joins it (as a savepoint)."""
        ...

    def reading(self) -> AbstractContextManager[Any]:
        """A read outside any transaction, its rows read by column name."""
        ...


@dataclass(frozen=True, slots=True)
class Dialect:
    name: str
    mark: str  # one placeholder
    true: str  # a WHERE fragment that holds for every row
    insertion_order: str  # the column that orders rows as they were inserted
    text_mark: str  # a placeholder for text that may be NULL (`? IS NULL` needs its type)
    claim: str  # after a subquery picking a row to claim: skip rows others hold (one writer: none)
    row_address: str  # the hidden column that addresses a row of a table with no key of its own
    row_lock: str  # after a SELECT: hold the rows read until the transaction ends (one writer: none)

    def sql(self, text: str) -> str:
        """`text`, written with `?` placeholders, in this dialect. Shared text holds no `%`
        (psycopg would read it as a placeholder): a LIKE pattern is bound as a value."""
        if self.mark == "?":
            return text
        if "%" in text:
            raise ValueError(f"a shared statement holds a '%': {text!r}")
        return text.replace("?", self.mark)

    def yes(self, column: str) -> str:
        """`column` (a boolean) is true."""
        return f"{column} = 1" if self.name == "sqlite" else column

    def no(self, column: str) -> str:
        """`column` (a boolean) is false."""
        return f"{column} = 0" if self.name == "sqlite" else f"NOT {column}"

    def literal(self, value: bool) -> str:
        """A boolean written into the statement."""
        return str(int(value)) if self.name == "sqlite" else str(value).lower()

    def flag(self, value: bool) -> int | bool:
        """A boolean as this dialect binds it."""
        return int(value) if self.name == "sqlite" else bool(value)

    def same(self, left: str, right: str) -> str:
        """`left` equals `right`, NULL equal to NULL."""
        return f"{left} IS {right}" if self.name == "sqlite" else (
            f"{left} IS NOT DISTINCT FROM {right}")

    def differs(self, left: str, right: str) -> str:
        """`left` differs from `right`, NULL equal to NULL."""
        return f"{left} IS NOT {right}" if self.name == "sqlite" else (
            f"{left} IS DISTINCT FROM {right}")

    def same_key(self, column: str) -> str:
        """`column` equals the bound value, NULL equal to NULL, in the form the scope's unique
        index is searched by (SQLite's indexes the coalesced value)."""
        if self.name == "sqlite":
            return f"IFNULL({column}, x'') = IFNULL(?, x'')"
        return f"{column} IS NOT DISTINCT FROM %s"

    def equals_nocase(self, column: str) -> str:
        """`column` equals the bound text in any case."""
        return f"{column} = ? COLLATE NOCASE" if self.name == "sqlite" else (
            f"lower({column}) = lower(%s)")

    def like_nocase(self, column: str) -> str:
        """`column` matches the bound LIKE pattern in any ASCII case."""
        return f"{column} LIKE ?" if self.name == "sqlite" else f"{column} ILIKE %s"

    def one_of(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        """`column` is one of `values` (non-empty), with its parameters."""
        if self.name == "sqlite":
            return f"{column} IN ({', '.join('?' * len(values))})", list(values)
        return f"{column} = ANY({self.mark})", [list(values)]

    def greatest(self, left: str, right: str) -> str:
        """The larger of two values."""
        return f"max({left}, {right})" if self.name == "sqlite" else f"GREATEST({left}, {right})"

    def least(self, left: str, right: str) -> str:
        """The smaller of two values."""
        return f"min({left}, {right})" if self.name == "sqlite" else f"LEAST({left}, {right})"

    def char(self, code: int) -> str:
        """The character of this code point, as an expression."""
        return f"char({code})" if self.name == "sqlite" else f"chr({code})"

    def json_int(self, column: str, key: str) -> str:
        """The integer under `key` of the JSON object in the text `column`."""
        if self.name == "sqlite":
            return f"CAST(json_extract({column}, '$.{key}') AS INTEGER)"
        return f"({column}::jsonb ->> '{key}')::integer"

    def has_tag(self, tags: str) -> str:
        """The JSON array `tags` holds the bound text."""
        if self.name == "sqlite":
            return f"EXISTS (SELECT 1 FROM json_each({tags}) WHERE json_each.value = ?)"
        return f"{tags} @> jsonb_build_array(%s::text)"


SQLITE = Dialect(
    name="sqlite", mark="?", true="1", insertion_order="rowid", text_mark="?", claim="",
    row_address="rowid", row_lock="")
POSTGRES = Dialect(
    name="postgres", mark="%s", true="TRUE", insertion_order="seq", text_mark="%s::text",
    claim=" FOR UPDATE SKIP LOCKED", row_address="ctid", row_lock=" FOR UPDATE")
