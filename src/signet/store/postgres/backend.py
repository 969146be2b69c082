"""The PostgreSQL backend: every seam over one `PgCore` and its connection pool, shared by
every daemon on the database."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable
from typing import Any

from signet.errors import NotOnBackend
from signet.store.db import Store
from signet.store.operations import OpsStore
from signet.store.postgres.core import PgCore, redact
from signet.store.postgres.documents import PgDocuments
from signet.store.postgres.graph import PgGraph
from signet.store.postgres.injections import PgInjections
from signet.store.postgres.operations import PgOps
from signet.store.postgres.pipeline import PgPipeline
from signet.store.postgres.portable import PgPortable
from signet.store.postgres.projection import PgProjection
from signet.store.postgres.recall_reads import PgRecallReads
from signet.store.postgres.search_telemetry import PgLedger
from signet.store.postgres.sessions import PgSessions
from signet.store.recall_reads import NearestVectors
from signet.types import RememberResult


class PostgresBackend:
    name = "postgres"
    local_vectors = False  # every vector search is a statement on the shared database

    def __init__(self, core: PgCore, url: str) -> None:
        self.core = core
        self.url = url

    @classmethod
    def open(cls, url: str) -> PostgresBackend:
        return cls(PgCore.open(url), url)

    def graph(self) -> PgGraph:
        return self.core.graph()

    def recall_reads(self, model: str | None, vectors: NearestVectors | None) -> PgRecallReads:
        return PgRecallReads(self.core.pool, model)

    def sessions(self) -> PgSessions:
        return PgSessions(self.core)

    def documents(self, write_chunk: Callable[[Any], RememberResult]) -> PgDocuments:
        return PgDocuments(self.core, write_chunk)

    def pipeline(self) -> PgPipeline:
        return PgPipeline(self.core)

    def operations(self) -> PgOps:
        return PgOps(self.core.pool)

    def ledger(self) -> PgLedger:
        return PgLedger(self.core)

    def portable(self) -> PgPortable:
        return PgPortable(self.core.pool)

    def projection(self) -> PgProjection:
        return PgProjection(self.core.pool)

    def injections(self) -> PgInjections:
        return PgInjections(self.core.pool)

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
