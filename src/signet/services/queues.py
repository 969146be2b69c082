"""The two queues an operator looks into: `JobQueue` (list, show by id or short id, count, requeue)
and `ReviewQueue` (list, resolve through pipeline/writes.py `resolve_review`, approving through
the memory service), each over its store seam on either backend.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from signet.clock import Clock, stamp
from signet.config import Config
from signet.errors import InvalidInput, NotFound
from signet.pipeline.writes import MemoryWriter, resolve_review
from signet.services.write_policy import pipeline_on
from signet.store.jobs import Job
from signet.store.operations import JobAdmin
from signet.store.pipeline import PipelineStore
from signet.store.review import ReviewItem
from signet.types import MAX_OFFSET, Actor

__all__ = ["JobQueue", "ReviewQueue"]


@dataclass(frozen=True, slots=True)
class JobQueue:
    """The job queue as an operator sees it, on either store backend (store/operations.py
    `JobAdmin`: `SqliteOps` or `PostgresOps`)."""

    store: JobAdmin
    clock: Clock

    def list(
        self, *, status: str | None = None, job_type: str | None = None, limit: int = 50,
        offset: int = 0,
    ) -> list[Job]:
        """A page of jobs, newest first; the bounds the HTTP route holds to, for every caller
        (a negative limit would mean no limit to SQLite)."""
        if not 1 <= limit <= 500 or not 0 <= offset <= MAX_OFFSET:
            raise InvalidInput(f"limit must be between 1 and 500 and offset between 0 and"
                               f" {MAX_OFFSET}")
        return self.store.list_jobs(status=status, job_type=job_type, limit=limit, offset=offset)

    def get(self, job_id: str) -> Job:
        found = self.store.find_job(job_id)
        if found is None:
            raise NotFound(f"job {job_id} not found")
        return found

    def depths(self) -> dict[str, dict[str, int]]:
        """Queue depth: job type -> status -> count."""
        return self.store.job_depths()

    def requeue_dead(self, job_ids: Sequence[str] | None = None) -> int:
        return self.store.requeue_dead(stamp(self.clock), job_ids)


class ReviewWriter(MemoryWriter, Protocol):
    """The memory service as the review queue uses it: its write path and its frozen check."""

    def check_mutable(self) -> None: ...


@dataclass(frozen=True, slots=True)
class ReviewQueue:
    config: Config
    memory: ReviewWriter
    pipeline: PipelineStore
    embedder_model: str | None
    clock: Clock

    def items(self, status: str | None = "pending", *, limit: int = 100) -> list[ReviewItem]:
        return self.pipeline.review_items(status, limit=limit)

    def resolve(self, review_id: str, approve: bool, actor: Actor = Actor()) -> ReviewItem:
        """Approve (apply the blocked update, cold archive first) or reject a review item."""
        self.memory.check_mutable()
        return resolve_review(
            self.pipeline, self.memory, review_id, approve=approve, actor=actor,
            embedder_model=self.embedder_model,
            hints=pipeline_on(self.config.pipeline) and self.config.pipeline.hints.enabled,
            now=stamp(self.clock),
        )
