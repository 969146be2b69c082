"""The configured backend's core store for callers above the store layer (benchmarks, tools).

A thin door: adapters never import the store, so they ask here for `store.backend.open_core`
with the workspace's database file and signing-key file filled in.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from signet.config import Config
from signet.store.backend import CoreStore, open_core
from signet.store.signing_key import workspace_key_path

__all__ = ["CoreStore", "open_core_store", "scratch_store_url"]


@contextmanager
def scratch_store_url(url: str) -> Iterator[str]:
    """A fresh PostgreSQL database on `url`'s server for one benchmark store, dropped after
    (store/postgres/scratch.py)."""
    from signet.store.postgres.scratch import scratch_database

    with scratch_database(url) as scratch:
        yield scratch


def open_core_store(config: Config) -> CoreStore:
    return open_core(config.store, sqlite_path=config.db_path,
                     key_path=workspace_key_path(config.workspace))
