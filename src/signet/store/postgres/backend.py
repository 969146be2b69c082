"""The PostgreSQL backend: every seam over one `PostgresCore` and its connection pool, shared by
every daemon on the database."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable
from typing import Any

from signet.errors import NotOnBackend
from signet.store.db import Store
from signet.store.operations import OpsStore
from signet.store.postgres.core import PostgresCore, redact
from signet.store.postgres.documents import PostgresDocuments
from signet.store.postgres.graph import PostgresGraph
from signet.store.postgres.injections import PostgresInjections
from signet.store.postgres.operations import PostgresOps
from signet.store.postgres.pipeline import PostgresPipeline
from signet.store.postgres.portable import PostgresPortable
from signet.store.postgres.projection import PostgresProjection
from signet.store.postgres.recall_reads import PostgresRecallReads
from signet.store.postgres.sessions import PostgresSessions
from signet.store.recall_reads import NearestVectors
from signet.store.search_telemetry import Ledger
from signet.types import RememberResult


class PostgresBackend:
    name = "postgres"
    local_vectors = False  # every vector search is a statement on the shared database

    def __init__(self, core: PostgresCore, url: str) -> None:
        self.core = core
        self.url = url

    @classmethod
    def open(cls, url: str) -> PostgresBackend:
        return cls(PostgresCore.open(url), url)

    def graph(self) -> PostgresGraph:
        return self.core.graph()

    def recall_reads(self, model: str | None, vectors: NearestVectors | None) -> PostgresRecallReads:
        return PostgresRecallReads(self.core.pool, model)

    def sessions(self) -> PostgresSessions:
        return PostgresSessions(self.core)

    def documents(self, write_chunk: Callable[[Any], RememberResult]) -> PostgresDocuments:
        return PostgresDocuments(self.core, write_chunk)

    def pipeline(self) -> PostgresPipeline:
        return PostgresPipeline(self.core)

    def operations(self) -> PostgresOps:
        return PostgresOps(self.core.pool)

    def ledger(self) -> Ledger:
        return Ledger(self.core)

    def portable(self) -> PostgresPortable:
        return PostgresPortable(self.core.pool)

    def projection(self) -> PostgresProjection:
        return PostgresProjection(self.core.pool)

    def injections(self) -> PostgresInjections:
        return PostgresInjections(self.core.pool)

    def sqlite_store(self) -> Store:
        raise NotOnBackend("the SQLite store", self.name)

    def database(self) -> str:
        return redact(self.url)

    def file(self) -> None:
        return None

    def size_bytes(self) -> int:
        return self.core.size_bytes()

    def batch_key(self) -> bytes:
        # Derived from the shared signing key: a confirm token verifies on every daemon.
        return hmac.new(self.core.signing_key(), b"signet batch confirm", hashlib.sha256).digest()

    def release_leases(self, ops: OpsStore, now: str) -> int:
        # Only this daemon's own leases, each while still at that lease: other daemons' jobs
        # on the shared queue stay theirs.
        held = self.core.held_leases()
        return ops.release_leases(now, held) if held else 0

    def checkpoint(self) -> None:
        return None  # the server keeps its own write-ahead log

    def close(self) -> None:
        self.core.close()
