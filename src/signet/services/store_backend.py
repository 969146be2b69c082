"""The configured store backend for callers above the store layer (CLI tools, benchmarks):
`store/choose.py` with the workspace's database file and signing-key file filled in."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from signet.config import Config
from signet.store.backend import Backend, CoreStore
from signet.store.choose import open_backend
from signet.store.signing_key import workspace_key_path

__all__ = ["Backend", "CoreStore", "open_workspace_backend", "scratch_store_url"]


@contextmanager
def scratch_store_url(url: str) -> Iterator[str]:
    """A fresh PostgreSQL database on `url`'s server for one benchmark store, dropped after
    (store/postgres/scratch.py)."""
    from signet.store.postgres.scratch import scratch_database

    with scratch_database(url) as scratch:
        yield scratch


def open_workspace_backend(config: Config) -> Backend:
    return open_backend(config.store, sqlite_path=config.db_path,
                        key_path=workspace_key_path(config.workspace))
