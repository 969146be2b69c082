"""What `signet store migrate` copies between SQLite and PostgreSQL (store/postgres/copy.py runs
it): each table with its columns, paging key and fingerprint, in the order their references
need; and what it does not copy, with why. Every table of either schema is one or the other
(tests/store/test_store_migrate.py holds both schemas to it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from signet.store import search_telemetry
from signet.store.connection import Connection


@dataclass(frozen=True, slots=True)
class TableCopy:
    """One table: the columns copied, how a row becomes PostgreSQL parameters, and its
    fingerprint (the same text computed from either side)."""

    name: str
    columns: tuple[str, ...]
    order: str = "seq"  # the PostgreSQL column that gives insertion order (for copying back)
    casts: dict[str, str] = field(default_factory=dict)  # column -> SQL cast on insert
    fingerprint_sql: tuple[str, str] = ("", "")  # (sqlite select, postgres select)
    # Paged by these columns on both sides instead (rowid / `order`): a unique key.
    key: tuple[str, ...] = ()
    # An integer `id` PostgreSQL generates (GENERATED ALWAYS AS IDENTITY) that other rows cite
    # (history's coldId): copied as it is, then the identity moves past the highest.
    identity: bool = False
    # A table SQLite creates only while its feature is on: absent there it reads as empty, and
    # copying rows back creates it with this.
    sqlite_create: Callable[[Connection], None] | None = None


def _same(sql: str) -> tuple[str, str]:
    """A fingerprint select that reads the same on both sides."""
    return sql, sql


_MEMORY_COLUMNS = (
    "id", "content", "type", "category", "content_hash", "normalized_content", "confidence",
    "importance", "source_id", "source_type", "tags", "who", "why", "project", "agent_id",
    "session_id", "created_at", "updated_at", "event_at", "is_deleted", "deleted_at",
    "extraction_status", "embedding_model", "extraction_model", "update_count", "version",
    "last_accessed", "access_count", "pinned", "hints", "superseded_by",
)

TABLES: tuple[TableCopy, ...] = (
    TableCopy(
        "memories", _MEMORY_COLUMNS,
        casts={"tags": "jsonb", "is_deleted": "boolean", "pinned": "boolean"},
        fingerprint_sql=(
            "SELECT id, version, is_deleted, content FROM memories",
            "SELECT id, version, is_deleted::int, content FROM memories",
        ),
    ),
    TableCopy(
        "memory_history",
        ("id", "memory_id", "event", "old_content", "new_content", "changed_by", "reason",
         "metadata", "actor_type", "session_id", "request_id", "created_at", "token_id"),
        fingerprint_sql=_same("SELECT id, memory_id, event, new_content FROM memory_history"),
    ),
    TableCopy(
        "embeddings",
        ("content_hash", "vector", "dimensions", "model", "source_type", "source_id",
         "created_at", "stale"),
        order="id",
        casts={"vector": "vector", "stale": "boolean"},
        fingerprint_sql=(
            "SELECT content_hash, model, stale, vector FROM embeddings",
            "SELECT content_hash, model, stale::int, vector::text FROM embeddings",
        ),
    ),
    TableCopy(
        "memory_jobs",
        ("id", "memory_id", "job_type", "status", "payload", "result", "attempts",
         "max_attempts", "leased_at", "completed_at", "failed_at", "error", "document_id",
         "created_at", "updated_at", "run_after"),
        fingerprint_sql=_same("SELECT id, status, attempts, job_type FROM memory_jobs"),
    ),
    TableCopy(
        "session_transcripts",
        ("session_key", "content", "harness", "project", "agent_id", "created_at", "session_id",
         "raw_hash", "content_hash", "message_count", "started_at", "last_event_at", "ended_at",
         "path", "raw_path", "summary_status", "updated_at"),
        fingerprint_sql=_same(
            "SELECT session_key, content_hash, message_count, ended_at, summary_status"
            " FROM session_transcripts"
        ),
    ),
    TableCopy(
        "summary_jobs",
        ("id", "session_key", "session_id", "trigger", "harness", "project", "agent_id",
         "transcript", "status", "attempts", "max_attempts", "result", "error", "captured_at",
         "started_at", "ended_at", "leased_at", "completed_at", "created_at", "updated_at"),
        fingerprint_sql=_same("SELECT id, session_key, status, attempts FROM summary_jobs"),
    ),
    # The artifacts' index (derived from the markdown files, which stay in the workspace) and
    # the tombstones that keep a re-index from bringing a forgotten session back. Their key is
    # (agent, path|token): copied back in that order.
    TableCopy(
        "memory_artifacts",
        ("agent_id", "source_path", "source_sha256", "source_kind", "session_id", "session_key",
         "session_token", "project", "harness", "captured_at", "started_at", "ended_at",
         "manifest_path", "memory_sentence", "memory_sentence_quality", "content", "updated_at",
         "artifact_id", "thread_key", "condenses", "parent_path"),
        order="(agent_id || chr(31) || source_path)",
        fingerprint_sql=_same(
            "SELECT agent_id, source_path, source_sha256, parent_path FROM memory_artifacts"
        ),
    ),
    TableCopy(
        "memory_artifact_tombstones",
        ("agent_id", "session_token", "removed_at", "reason", "removed_paths"),
        order="(agent_id || chr(31) || session_token)",
        fingerprint_sql=_same(
            "SELECT agent_id, session_token, removed_paths FROM memory_artifact_tombstones"
        ),
    ),
    # Documents, their connectors and chunk links (after the memories they link; connectors
    # before the documents that name them).
    TableCopy(
        "connectors",
        ("id", "provider", "display_name", "config_json", "cursor_json", "status",
         "last_sync_at", "last_error", "created_at", "updated_at", "agent_id", "project"),
        fingerprint_sql=_same("SELECT id, status, cursor_json, updated_at FROM connectors"),
    ),
    TableCopy(
        "documents",
        ("id", "source_url", "source_type", "content_type", "content_hash", "title",
         "raw_content", "status", "error", "connector_id", "chunk_count", "memory_count",
         "metadata_json", "created_at", "updated_at", "completed_at", "agent_id", "project",
         "source_key"),
        fingerprint_sql=_same(
            "SELECT id, status, content_hash, memory_count, updated_at FROM documents"
        ),
    ),
    TableCopy(
        "document_memories",
        ("document_id", "memory_id", "chunk_index"),
        order="(document_id || chr(31) || memory_id)",
        fingerprint_sql=_same("SELECT document_id, memory_id, chunk_index FROM document_memories"),
    ),
    TableCopy(
        "tokens",
        ("id", "name", "role", "permissions", "scope_project", "scope_agent", "key_hash",
         "created_at", "expires_at", "revoked_at", "last_used_at"),
        order="id",
        fingerprint_sql=_same("SELECT id, key_hash, revoked_at, role FROM tokens"),
    ),
    # The knowledge graph (PostgreSQL migration 002_graph.sql), parents before children.
    TableCopy(
        "entities",
        ("id", "name", "entity_type", "description", "canonical_name", "mentions", "agent_id",
         "community_id", "created_at", "updated_at"),
        fingerprint_sql=_same(
            "SELECT id, canonical_name, agent_id, mentions, community_id FROM entities"),
    ),
    TableCopy(
        "entity_aliases", ("alias", "canonical_alias", "entity_id", "agent_id", "created_at"),
        key=("canonical_alias", "agent_id", "entity_id"),
        fingerprint_sql=_same("SELECT canonical_alias, agent_id, entity_id FROM entity_aliases"),
    ),
    TableCopy(
        "relations",
        ("id", "source_entity_id", "target_entity_id", "relation_type", "strength", "mentions",
         "confidence", "metadata", "created_at", "updated_at"),
        order="id",
        fingerprint_sql=_same(
            "SELECT id, source_entity_id, target_entity_id, relation_type, mentions FROM relations"),
    ),
    TableCopy(
        "memory_entity_mentions",
        ("memory_id", "entity_id", "mention_text", "confidence", "created_at"),
        key=("memory_id", "entity_id"),
        fingerprint_sql=_same("SELECT memory_id, entity_id FROM memory_entity_mentions"),
    ),
    TableCopy(
        "entity_aspects",
        ("id", "entity_id", "aspect_name", "description", "confidence", "weight", "agent_id",
         "created_at", "updated_at"),
        order="id",
        fingerprint_sql=_same("SELECT id, entity_id, aspect_name FROM entity_aspects"),
    ),
    TableCopy(
        "entity_attributes",
        ("id", "aspect_id", "entity_id", "kind", "attribute_key", "attribute_value",
         "confidence", "source_memory_id", "agent_id", "created_at", "updated_at"),
        order="id",
        fingerprint_sql=_same(
            "SELECT id, aspect_id, attribute_key, attribute_value FROM entity_attributes"),
    ),
    TableCopy(
        "entity_dependencies",
        ("id", "source_entity_id", "target_entity_id", "dependency_type", "strength",
         "traversal_weight", "metadata", "agent_id", "created_at", "updated_at"),
        order="id",
        fingerprint_sql=_same(
            "SELECT id, source_entity_id, target_entity_id, dependency_type"
            " FROM entity_dependencies"),
    ),
    TableCopy(
        "entity_pinning",
        ("entity_id", "agent_id", "pinned_by", "reason", "pinned_at", "pin_type",
         "weight_override"),
        key=("entity_id", "agent_id"),
        fingerprint_sql=_same("SELECT entity_id, agent_id, pin_type FROM entity_pinning"),
    ),
    TableCopy(
        "entity_communities",
        ("id", "agent_id", "label", "size", "modularity", "quality", "member_ids", "created_at"),
        order="id",
        fingerprint_sql=_same("SELECT id, agent_id, label, member_ids FROM entity_communities"),
    ),
    # The pipeline (PostgreSQL migration 003_pipeline.sql): the cold tier and the review queue.
    TableCopy(
        "memories_cold",
        ("id", "memory_id", "content", "content_hash", "type", "tags", "importance", "snapshot",
         "reason", "archived_by", "archived_at"),
        order="id", identity=True,
        fingerprint_sql=_same("SELECT id, memory_id, content, archived_at FROM memories_cold"),
    ),
    TableCopy(
        "memory_review_queue",
        ("id", "memory_id", "source_memory_id", "action", "old_content", "new_content",
         "proposal", "verdict", "reason", "status", "created_at", "resolved_at", "resolved_by",
         "target_version"),
        order="id",
        fingerprint_sql=_same(
            "SELECT id, memory_id, status, new_content, target_version FROM memory_review_queue"),
    ),
    # The hooks' injection ledger per caller and session (PostgreSQL migrations 010, 011).
    TableCopy(
        "hook_injections", ("caller", "session_id", "memory_id", "event", "injected_at"),
        key=("caller", "session_id", "memory_id"),
        fingerprint_sql=_same(
            "SELECT caller, session_id, memory_id, event FROM hook_injections"),
    ),
    # The memory service's own tables (PostgreSQL migration 007): feedback (after the memories
    # it cites), the skills' use and decay, and idempotency keys, so a retry after the move
    # still gets the first answer. A key's namespace may be NULL: paged by the unique key
    # spelled so that NULL and '' stay apart.
    TableCopy(
        "agent_feedback",
        ("id", "memory_id", "session_id", "feedback_type", "correction_text", "actor",
         "agent_id", "created_at"),
        fingerprint_sql=_same(
            "SELECT id, memory_id, feedback_type, correction_text, created_at FROM agent_feedback"),
    ),
    TableCopy(
        "skill_meta",
        ("id", "skill_name", "agent_id", "decay_rate", "use_count", "last_used_at",
         "role_classification", "filesystem_path", "created_at", "updated_at"),
        order="id",
        fingerprint_sql=_same(
            "SELECT id, skill_name, agent_id, use_count, last_used_at, filesystem_path"
            " FROM skill_meta"),
    ),
    TableCopy(
        "idempotency_scoped_keys",
        ("key", "scope_agent", "scope_project", "content_hash", "memory_id", "response",
         "created_at"),
        key=("key", "scope_agent IS NULL", "coalesce(scope_agent, '')", "scope_project IS NULL",
             "coalesce(scope_project, '')"),
        fingerprint_sql=_same(
            "SELECT key, scope_agent, scope_project, content_hash, memory_id, response"
            " FROM idempotency_scoped_keys"),
    ),
    # Maintenance (PostgreSQL migration 006): the record of runs and repairs, and the dead jobs
    # already requeued once (after the jobs: a job is never requeued twice, before or after).
    TableCopy(
        "maintenance_runs",
        ("id", "started_at", "finished_at", "mode", "trigger", "report_json"),
        fingerprint_sql=_same("SELECT id, started_at, mode, trigger FROM maintenance_runs"),
    ),
    TableCopy(
        "maintenance_actions", ("id", "run_id", "at", "action", "changed_json"),
        order="id", identity=True,
        fingerprint_sql=_same("SELECT id, run_id, at, action FROM maintenance_actions"),
    ),
    TableCopy(
        "maintenance_requeues", ("job_id", "requeued_at"), order="job_id",
        fingerprint_sql=_same("SELECT job_id, requeued_at FROM maintenance_requeues"),
    ),
    # The recall QA ledger (PostgreSQL migration 005; on SQLite only once it was switched on).
    TableCopy(
        "memory_search_telemetry", search_telemetry.COLUMNS,
        casts={"no_hits": "boolean"}, sqlite_create=search_telemetry.ensure,
        fingerprint_sql=(
            "SELECT id, created_at, query, result_count, no_hits FROM memory_search_telemetry",
            "SELECT id, created_at, query, result_count, no_hits::int"
            " FROM memory_search_telemetry",
        ),
    ),
)
# Tables not copied, and why: the report names each that holds rows.
NOT_COPIED: dict[str, str] = {
    "umap_cache": "a cache, computed again when asked for",
    "idempotency_keys": "retired unscoped keys, read by nothing",
}
# Bookkeeping, and indexes the target derives from the copied rows: never reported.
NOT_STATE = frozenset({
    "schema_migrations", "schema_migrations_audit", "sqlite_sequence", "memories_fts_vocab",
    "lexical_log",  # SQLite: what the in-memory lexical index catches up on
    "memory_sources",  # both: kept by triggers on memories as they are copied
    "lexical_totals",  # PostgreSQL: BM25 totals, kept by trigger likewise
    "signing_keys",  # PostgreSQL: the signing key, copied on its own (report: signing_key)
})
