"""Data for the dashboard tests, written the way the pipeline would leave it.

`map_points` writes n memories with vectors in a few clusters straight through the store's
insert functions in one transaction (remember() embeds and enqueues jobs per memory, ~1.5 ms
each: 15 s for the map's 10k points; this takes about a second). `review_item` parks a
contradiction as the pipeline does; `dead_job` fails jobs until they are dead.
"""

from __future__ import annotations

import hashlib

import numpy as np

from signet.app import SignetApp
from signet.store import embeddings as emb_sql
from signet.store import jobs as jobs_sql
from signet.store import memories as mem_sql
from signet.store import review as review_sql
from signet.types import NewMemory, utc_now

TYPES = ("fact", "preference", "decision", "episodic")


def map_points(app: SignetApp, n: int, clusters: int = 4, seed: int = 3) -> list[str]:
    """n memories whose vectors sit around `clusters` centres; type = cluster's type."""
    assert app.embedder is not None
    rng = np.random.default_rng(seed)
    dims = app.embedder.dimensions
    centres = rng.normal(size=(clusters, dims)) * 3
    now = utc_now()
    ids = []
    with app.store.write_tx() as conn:
        for i in range(n):
            group = i % clusters
            content = f"map point {i} of cluster {group}"
            digest = hashlib.sha256(content.encode()).hexdigest()
            vector = (centres[group] + rng.normal(size=dims)).astype(np.float32)
            vector /= np.linalg.norm(vector)
            memory_id, _ = mem_sql.insert(
                conn, NewMemory(content=content, type=TYPES[group % len(TYPES)],
                                project=f"cluster-{group}"),
                storage=content, normalized=content, content_hash=digest, now=now,
                embedding_model=app.embedder.model,
            )
            emb_sql.upsert(conn, digest, vector, model=app.embedder.model, now=now)
            ids.append(memory_id)
    return ids


def review_item(app: SignetApp, memory_id: str, old: str, new: str) -> str:
    with app.store.write_tx() as conn:
        return review_sql.add(
            conn, memory_id=memory_id, source_memory_id=None, action="update",
            old_content=old, new_content=new, proposal={"action": "update", "content": new},
            verdict=None, reason="contradiction: the new fact negates the stored one", now=utc_now(),
        )


def dead_job(app: SignetApp, memory_id: str, error: str = "extraction failed: boom") -> str:
    """Fail every pending extract job until it is dead (as a broken LLM would); the id of
    `memory_id`'s job (remember enqueued it)."""
    job_id = next(j.id for j in app.jobs(job_type="extract", limit=500) if j.memory_id == memory_id)
    with app.store.write_tx() as conn:
        while (leased := jobs_sql.lease(conn, utc_now(), job_types=["extract"])) is not None:
            jobs_sql.fail(conn, leased.id, error, utc_now())
    assert app.job(job_id).status == "dead"
    return job_id
