"""Scratch databases on a PostgreSQL server, for benchmarks that need a fresh store per run.

`signet bench locomo --backend postgres` ranks each conversation in a store of its own, as on
SQLite (a temporary workspace per group): given the URL of any database on a server whose
role may create databases, `scratch_database` creates an empty one beside it and drops it
(with any connection still open to it) when the block ends.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo

from signet.errors import StoreError
from signet.store.postgres.core import redact


@contextmanager
def scratch_database(url: str, prefix: str = "signet_bench") -> Iterator[str]:
    """The conninfo of a new empty database on `url`'s server, dropped after the block."""
    name = f"{prefix}_{secrets.token_hex(6)}"
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    except psycopg.Error as exc:
        raise StoreError(f"cannot create a scratch database on {redact(url)}: {exc}") from exc
    try:
        yield make_conninfo(url, dbname=name)
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )
