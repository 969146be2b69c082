"""The memories columns as `row_to_memory` reads them, selected from `memories m` (tags come
back as JSON text)."""

from __future__ import annotations

from signet.store.memories import COLUMNS

MEMORY_COLUMNS = ", ".join(
    "m.tags::text AS tags" if c.strip() == "tags" else f"m.{c.strip()}" for c in COLUMNS.split(",")
)
