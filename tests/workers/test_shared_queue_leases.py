"""A daemon on a shared PostgreSQL store hands back its own leased jobs when it stops while a
tick still runs (SignetApp.release_worker_leases), and no other daemon's.

Two real apps on one real database; the embedder is the hash embedder held at its `embed` call
(a provider that hangs), so the tick is cut off by the stop with its jobs leased.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np

from signet.app import SignetApp
from signet.config import Config, StoreConfig
from signet.daemon.background import BackgroundWorkers
from signet.providers.hash_embedder import HashEmbedder
from signet.types import utc_now


class HangingEmbedder(HashEmbedder):
    """The hash embedder, held inside `embed` until `release` is set."""

    def __init__(self) -> None:
        super().__init__(16)
        self.entered = threading.Event()
        self.release = threading.Event()

    def embed(self, texts: list[str]) -> np.ndarray:
        self.entered.set()
        self.release.wait(30)
        return super().embed(texts)


def test_a_stopping_daemon_releases_only_its_own_leases(tmp_path: Path, pg_url: str) -> None:
    store = StoreConfig(backend="postgres", url=pg_url)
    hanging = HangingEmbedder()
    mine = SignetApp.open(Config.default(tmp_path / "a").replace(store=store), embedder=hanging)
    other = SignetApp.open(Config.default(tmp_path / "b").replace(store=store),
                           embedder=HashEmbedder(16))
    try:
        first = mine.remember("a memory the stopping daemon is embedding").id
        workers = BackgroundWorkers(mine)
        workers.start()
        assert hanging.entered.wait(30)  # its tick holds the job, inside the provider call
        second = other.remember("a memory another daemon is embedding").id
        theirs = other.backend.core.lease(utc_now(), job_types=["embed"])
        assert theirs is not None and theirs.memory_id == second
        released = workers.stop(timeout_s=0.2)
        assert released == 1
        # The embed jobs (a remember on postgres queues extraction and hints too, which the
        # stopping daemon's other workers may finish meanwhile).
        jobs = {j.memory_id: j for j in mine.jobs() if j.job_type == "embed"}
        assert (jobs[first].status, jobs[first].attempts) == ("pending", 0)
        assert jobs[second].status == "leased"  # the other daemon's lease stays
    finally:
        hanging.release.set()
        time.sleep(0.1)
        mine.close()
        other.close()
