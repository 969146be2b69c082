"""The SQLite backend: one workspace file, one writer (WAL), every seam over the same `Store`."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

from signet.store.backend import SqliteCore
from signet.store.db import Store
from signet.store.document_store import SqliteDocuments
from signet.store.graph_store import SqliteGraph
from signet.store.injections import SqliteInjections
from signet.store.operations import OpsStore, SqliteOps
from signet.store.pipeline import SqlitePipeline
from signet.store.portable import SqlitePortable
from signet.store.projection import SqliteProjection
from signet.store.recall_reads import NearestVectors, SqliteRecallReads
from signet.store.search_telemetry import Ledger
from signet.store.session_store import SqliteSessions
from signet.types import RememberResult


class SqliteBackend:
    name = "sqlite"
    local_vectors = True

    def __init__(self, store: Store, key_path: Path | None = None) -> None:
        self.store = store
        self.core = SqliteCore(store, key_path)

    @classmethod
    def open(cls, path: Path, key_path: Path) -> SqliteBackend:
        return cls(Store.open(path), key_path)

    def graph(self) -> SqliteGraph:
        return SqliteGraph(self.store)

    def recall_reads(self, model: str | None, vectors: NearestVectors | None) -> SqliteRecallReads:
        return SqliteRecallReads(self.store, vectors)

    def sessions(self) -> SqliteSessions:
        return SqliteSessions(self.store)

    def documents(self, write_chunk: Callable[[Any], RememberResult]) -> SqliteDocuments:
        return SqliteDocuments(self.core, write_chunk)

    def pipeline(self) -> SqlitePipeline:
        return SqlitePipeline(self.core, self.store)

    def operations(self) -> SqliteOps:
        return SqliteOps(self.store)

    def ledger(self) -> Ledger:
        return Ledger(self.core)

    def portable(self) -> SqlitePortable:
        return SqlitePortable(self.store)

    def projection(self) -> SqliteProjection:
        return SqliteProjection(self.store)

    def injections(self) -> SqliteInjections:
        return SqliteInjections(self.store)

    def sqlite_store(self) -> Store:
        return self.store

    def database(self) -> str:
        return str(self.store.path)

    def file(self) -> Path:
        return self.store.path

    def size_bytes(self) -> int:
        self.checkpoint()
        return self.store.path.stat().st_size

    def batch_key(self) -> bytes:
        # One daemon owns the file: a key of this process's lifetime is enough.
        return secrets.token_bytes(32)

    def release_leases(self, ops: OpsStore, now: str) -> int:
        # One daemon owns the file, so every lease still held is this process's.
        return ops.release_leases(now)

    def checkpoint(self) -> None:
        """Fold the WAL back into the database file."""
        self.store.checkpoint()

    def close(self) -> None:
        self.store.close()
