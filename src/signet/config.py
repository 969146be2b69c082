"""The configuration: one frozen value, read once at the composition root and passed down.

Nothing below `app.py` reads a file or `os.environ`, so tests build a `Config` with
`Config.default(tmp_path)` and `dataclasses.replace`. `_schema()` alone knows agent.yaml's
spelling (camelCase sections, the pipeline under `memory.pipelineV2`). Errors name the file, line
and key; unknown keys are warnings, so a newer agent.yaml never stops an older daemon.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import re
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Literal

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from signet.errors import ConfigError

__all__ = [
    "AuthConfig",
    "AutonomousConfig",
    "Config",
    "DampeningConfig",
    "DocumentsConfig",
    "EmbeddingConfig",
    "GraphConfig",
    "HintsConfig",
    "HooksConfig",
    "LlmConfig",
    "MemoryConfig",
    "NetworkConfig",
    "PipelineConfig",
    "PipelineTelemetryConfig",
    "RetentionConfig",
    "SearchConfig",
    "SkillsConfig",
    "SessionsConfig",
    "StoreConfig",
    "TelemetryConfig",
    "TraversalConfig",
    "CONFIG_FILE",
    "DEFAULT_PORT",
    "render_agent_yaml",
    "resolve_workspace",
]

log = logging.getLogger(__name__)

CONFIG_FILE = "agent.yaml"
DEFAULT_PORT = 3850

_HOUR_MS = 3_600_000
_DAY_MS = 24 * _HOUR_MS


def opt(default: Any, doc: str, *, ge: float | None = None, le: float | None = None) -> Any:
    """A config field: its default, a one-line description and optional inclusive bounds."""
    return field(default=default, metadata={"doc": doc, "ge": ge, "le": le})


def section(cls: type) -> Any:
    """A nested config section, defaulting to its own defaults."""
    return field(default_factory=cls)


# --- memory -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MemoryConfig:
    """Limits on what a single memory may hold."""

    max_content_chars: int = opt(100_000, "Longest memory content accepted, in characters.", ge=1)
    default_importance: float = opt(0.5, "Importance given to a memory that names none (0-1).", ge=0, le=1)
    max_tags: int = opt(50, "Most tags one memory may carry.", ge=0)


@dataclass(frozen=True, slots=True)
class GraphConfig:
    """The knowledge graph (entities, relations, mentions)."""

    enabled: bool = opt(True, "Enable graph reads, traversal and recall boosting.")


@dataclass(frozen=True, slots=True)
class TraversalConfig:
    """Graph traversal as a recall channel."""

    enabled: bool = opt(True, "Walk the graph from entities named in the query.")
    primary: bool = opt(True, "Treat traversal as a primary channel (not only a boost).")
    max_aspects_per_entity: int = opt(5, "Aspects followed per entity.", ge=1)
    max_attributes_per_aspect: int = opt(10, "Attributes read per aspect.", ge=1)
    max_hops: int = opt(2, "Longest path walked, in edges.", ge=0)
    min_dependency_strength: float = opt(0.3, "Weakest relation still followed (0-1).", ge=0, le=1)
    max_branching: int = opt(8, "Edges followed out of one node.", ge=1)
    max_paths: int = opt(50, "Paths collected per query.", ge=1)
    timeout_ms: int = opt(50, "Time budget for one traversal, in ms.", ge=1)
    flat_reserve_fraction: float = opt(
        0.4, "Share of results kept for the flat (non-graph) channels (0-1).", ge=0, le=1
    )


@dataclass(frozen=True, slots=True)
class HintsConfig:
    """Prospective hints: likely future questions, indexed for recall."""

    enabled: bool = opt(True, "Generate hints for each new memory at write time.")
    max: int = opt(5, "Most hints kept per memory.", ge=0)
    min: int = opt(3, "Fewest hints the LLM is asked for per memory (the prompt asks for min to max).", ge=0)


@dataclass(frozen=True, slots=True)
class AutonomousConfig:
    """Scheduled maintenance and repair."""

    enabled: bool = opt(False, "Allow scheduled maintenance and repair.")
    frozen: bool = opt(False, "Hard stop on autonomous maintenance actions.")
    allow_update_delete: bool = opt(
        False, "Let the pipeline apply an extracted update or delete to an existing memory (off:"
        " such proposals are recorded, never applied).")
    maintenance_mode: Literal["observe", "execute"] = opt(
        "observe", "observe: report what would change; execute: change it."
    )
    interval_ms: int = opt(
        3_600_000, "How often the scheduled maintenance run happens (1 hour), in ms.", ge=1000
    )
    max_repairs_per_run: int = opt(
        500, "Most rows one repair changes in a run (embed jobs, requeued jobs, orphans).", ge=1
    )
    wal_checkpoint_mb: int = opt(64, "WAL size above which a run checkpoints it, in MiB.", ge=1)


@dataclass(frozen=True, slots=True)
class PipelineTelemetryConfig:
    """Local-only capture for reviewing recall quality."""

    memory_search_qa_enabled: bool = opt(
        False, "Write a local search ledger (query text and results) for manual review."
    )


@dataclass(frozen=True, slots=True)
class PipelineConfig:
    """The background pipeline: extraction, decisions, controlled writes (YAML memory.pipelineV2)."""

    enabled: bool = opt(True, "Master pipeline switch.")
    shadow_mode: bool = opt(False, "Extract and propose, never write (proposals go to history).")
    mutations_frozen: bool = opt(False, "Reads only; the pipeline stays quiet.")
    min_fact_confidence_for_write: float = opt(
        0.7, "Lowest extracted-fact confidence that may be written (0-1).", ge=0, le=1
    )
    lease_timeout_ms: int = opt(300_000, "A leased job older than this goes back to pending, in ms.", ge=1)
    max_attempts: int = opt(3, "Attempts before a job is dead-lettered.", ge=1)
    worker_poll_ms: int = opt(2000, "How often idle workers look for jobs, in ms.", ge=1)
    document_chunk_size: int = opt(2000, "Characters per document chunk.", ge=1)
    document_chunk_overlap: int = opt(200, "Characters shared by neighbouring chunks.", ge=0)
    contradiction_threshold: float = opt(
        0.6, "Confidence (0-1) at which a pipeline update is judged to contradict the memory it"
        " changes; such an update goes to the review queue instead of being applied.", ge=0, le=1
    )
    graph: GraphConfig = section(GraphConfig)
    traversal: TraversalConfig = section(TraversalConfig)
    hints: HintsConfig = section(HintsConfig)
    autonomous: AutonomousConfig = section(AutonomousConfig)
    telemetry: PipelineTelemetryConfig = section(PipelineTelemetryConfig)

    @property
    def running(self) -> bool:
        """Enabled and not frozen: the pipeline's workers run and its jobs are enqueued."""
        return self.enabled and not self.mutations_frozen


# --- retention --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RetentionConfig:
    """How long deleted and finished things are kept before the retention worker purges them."""

    interval_ms: int = opt(6 * _HOUR_MS, "How often the retention sweep runs (6 hours), in ms.", ge=1)
    tombstone_retention_ms: int = opt(30 * _DAY_MS, "Soft-deleted memories kept (30 days), in ms.", ge=0)
    history_retention_ms: int = opt(180 * _DAY_MS, "History events kept (180 days), in ms.", ge=0)
    completed_job_retention_ms: int = opt(14 * _DAY_MS, "Completed jobs kept (14 days), in ms.", ge=0)
    dead_job_retention_ms: int = opt(30 * _DAY_MS, "Dead-letter jobs kept (30 days), in ms.", ge=0)
    cold_retention_ms: int = opt(180 * _DAY_MS, "Cold-tier archive rows kept (180 days), in ms.", ge=0)
    idempotency_key_retention_ms: int = opt(
        _DAY_MS, "Idempotency keys kept (a client's retries fall well inside 1 day), in ms.", ge=0
    )
    hook_ledger_retention_ms: int = opt(
        7 * _DAY_MS, "Rows of the hooks' per-session injection ledger kept (7 days), in ms.", ge=0
    )
    batch_limit: int = opt(500, "Most rows one purge step deletes per sweep.", ge=1)


# --- documents --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DocumentsConfig:
    """Document ingest: fetching URLs (opt-in) and the size of what is read."""

    url_fetch_enabled: bool = opt(
        False, "Let document ingest fetch http(s) URLs (off: no server-side requests at all)."
    )
    fetch_max_bytes: int = opt(10_000_000, "Largest document fetched from a URL, in bytes.", ge=1)
    fetch_timeout_ms: int = opt(
        15_000, "Deadline for fetching one URL: connect, redirects and body together, in ms.", ge=1
    )
    fetch_max_redirects: int = opt(5, "Redirects followed (each one checked) per URL.", ge=0)
    fetch_allowed_hosts: tuple[str, ...] = opt(
        (), "Host names a URL may name although they resolve to loopback or private addresses."
    )
    max_file_bytes: int = opt(50_000_000, "Largest local file or pasted text ingested, in bytes.", ge=1)
    connector_sync_interval_ms: int = opt(
        300_000, "How often the daemon syncs every connector (a folder walk), in ms.", ge=1
    )


# --- providers --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EmbeddingConfig:
    """The embedding provider that turns text into vectors."""

    provider: Literal["local", "ollama", "openai", "none"] = opt(
        "local", "local (bundled model, offline), ollama, openai (any compatible server) or none."
    )
    model: str = opt(
        "all-MiniLM-L6-v2-int8-dynamic", "Model name as the provider knows it. local serves"
        " all-MiniLM-L6-v2-int8-dynamic (int8 matrix products, ~2x faster) or"
        " all-MiniLM-L6-v2-int8 (the same weights with fp32 products: the vectors stored before"
        " the default changed); changing it re-embeds the store in the background.",
    )
    dimensions: int = opt(384, "Length of the vectors the model returns.", ge=1)
    base_url: str = opt("", "Server URL for ollama/openai; empty = the provider's default.")
    api_key_env: str = opt("OPENAI_API_KEY", "Environment variable holding the API key.")
    batch_size: int = opt(32, "Texts embedded per call.", ge=1)
    threads: int = opt(1, "Threads for the local model.", ge=1)
    write_path: Literal["deferred", "inline"] = opt(
        "deferred", "deferred: remember returns after the raw write and the embed worker adds"
        " the vector a moment later (found lexically meanwhile); inline: a local embedder"
        " embeds before the write transaction, so remember returns with the vector stored.",
    )
    worker_processes: int = opt(
        0, "local: child processes the embed worker runs the model in, each with a core and"
        " an interpreter lock of its own, so embedding never holds the lock the writes need"
        " (ingest on both cores); 0: in the worker's thread. Recall's query embedding stays"
        " in the daemon.", ge=0,
    )
    timeout_ms: int = opt(30_000, "Timeout for one remote embedding call, in ms.", ge=1)
    api_key: str = opt(
        "", "The API key as secret:NAME (the secret store, resolved at start); wins over api_key_env."
    )
    index: Literal["quantized", "exact"] = opt(
        "quantized", "Vector search in RAM: quantized (int8 rows, a quarter of the memory, "
        "shortlist rescored exactly from the stored float32 vectors) or exact (the float32 "
        "matrix); both return the exact top k."
    )
    ann_min_vectors: int = opt(
        0, "From this many stored vectors on, vector search goes through an HNSW graph (saved"
        " beside the database) that reads a few thousand rows instead of every one, its"
        " shortlist rescored exactly, so only the top k's membership is approximate; below it,"
        " the exact `index`. 0 (the default): always exact.", ge=0,
    )
    prefilter_min_vectors: int = opt(
        200_000, "From this many stored vectors on, the quantized index estimates only the"
        " rows nearest the query by one sign bit a dimension (of a randomly rotated vector):"
        " 2% of them, at least a tenth of this threshold; the scan reads an eighth of the"
        " bytes, the shortlist is rescored exactly, so only the top k's membership is"
        " approximate. Below it, and with 0: every row is estimated (exact).", ge=0,
    )


@dataclass(frozen=True, slots=True)
class LlmConfig:
    """The LLM used by the pipeline (extraction, decisions, hints); none = no LLM work."""

    provider: Literal[
        "none", "ollama", "openai", "anthropic", "command", "claude-code", "codex", "opencode"
    ] = opt(
        "none", "none, ollama, openai (any compatible server), anthropic, command, or the"
        " user's agent CLI: claude-code, codex or opencode."
    )
    model: str = opt("", "Model name as the provider knows it.")
    base_url: str = opt("", "Server URL; empty = the provider's default.")
    timeout_ms: int = opt(60_000, "Timeout for one LLM call, in ms.", ge=1)
    max_calls_per_hour: int = opt(600, "Rate limit on LLM calls per hour.", ge=1)
    burst: int = opt(10, "Calls allowed at once above the hourly rate.", ge=1)
    command: tuple[str, ...] = opt(
        (), "For provider command: the argv run with the prompt on stdin. For claude-code, codex"
        " and opencode: the binary (and leading arguments) instead of the one on PATH."
    )
    api_key_env: str = opt("", "Environment variable holding the API key.")
    max_tokens: int = opt(1024, "Most tokens asked for per completion.", ge=1)
    api_key: str = opt(
        "", "The API key as secret:NAME (the secret store, resolved at start); wins over api_key_env."
    )
    concurrency: int = opt(
        1, "For command, claude-code, codex and opencode: runs at once (each is a process).", ge=1
    )


# --- recall -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DampeningConfig:
    """Score adjustments applied after fusion."""

    gravity: bool = opt(True, "Demote results with no query term in common despite a close vector.")
    gravity_factor: float = opt(0.5, "Multiplier for a gravity-dampened result.", ge=0)
    gravity_cosine: float = opt(0.5, "Cosine below which gravity dampening may apply.", ge=-1, le=1)
    hub: bool = opt(True, "Demote hub memories linked to very many entities.")
    hub_factor: float = opt(0.7, "Multiplier for a hub result.", ge=0)
    resolution: bool = opt(True, "Boost results that resolve the query (dates, names, decisions).")
    resolution_factor: float = opt(1.2, "Multiplier for a resolving result.", ge=0)


@dataclass(frozen=True, slots=True)
class SearchConfig:
    """Recall: channel fusion, limits and scoring."""

    default_mode: Literal["full", "hybrid", "keyword", "vector"] = opt(
        "full",
        "Recall mode when the caller names none: full (every channel, graph traversal"
        " included), hybrid (lexical + semantic + hints), keyword or vector.",
    )
    fusion: Literal["rrf", "alpha"] = opt("rrf", "rrf: reciprocal rank fusion; alpha: weighted scores.")
    rrf_k: int = opt(60, "The k of reciprocal rank fusion.", ge=1)
    alpha: float = opt(0.7, "Vector weight for alpha fusion (BM25 gets 1 - alpha).", ge=0, le=1)
    min_score: float = opt(0.0, "Results scoring below this are dropped.")
    default_limit: int = opt(10, "Results returned when the caller names no limit.", ge=1)
    max_limit: int = opt(200, "Most results one query may ask for.", ge=1)
    max_query_chars: int = opt(2000, "Longest query accepted, in characters.", ge=1)
    candidate_pool: int = opt(100, "Candidates each channel contributes before fusion.", ge=1)
    min_cosine: float = opt(
        0.15, "Semantic candidates below this cosine similarity are not evidence.", ge=-1, le=1
    )
    rehearsal_boost: float = opt(
        0.1,
        "Most boost for a memory the agent used (positive feedback, a get, a recall asked to"
        " record access; never a search as such): x(1 + this) at 20 accesses, never over a clearly"
        " better match.",
        ge=0,
    )
    decay_rate: float = opt(0.05, "Score decay per day since last access.", ge=0)
    query_embed_timeout_ms: int = opt(
        1500, "Longest a recall waits for its query's embedding; past it recall answers from"
        " the other channels (meta.degraded names semantic).", ge=1,
    )
    embed_breaker_failures: int = opt(
        3, "Query embeddings failing or timing out in a row before the embedder is skipped"
        " (circuit breaker open; /api/status shows it).", ge=1,
    )
    embed_breaker_cooldown_ms: int = opt(
        30_000, "How long a skipped embedder rests before one recall tries it again.", ge=1
    )
    query_cache_size: int = opt(
        1024, "Query vectors kept in memory, least recently used dropped first (keyed by model"
        " and normalised text, so never stale); 0 keeps none.", ge=0,
    )
    dampening: DampeningConfig = section(DampeningConfig)


# --- sessions ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SessionsConfig:
    """Session lineage: transcripts, summaries, thread heads and MEMORY.md (docs/sessions.md)."""

    max_transcript_bytes: int = opt(
        50_000_000, "Largest transcript file an import reads, in bytes.", ge=1
    )
    gate_min_turns: int = opt(
        5, "Significance gate: fewer substantive user turns than this counts as trivial.", ge=0
    )
    gate_min_novel_terms: int = opt(
        15, "Significance gate: fewer words unseen in stored memories than this counts as not novel.", ge=0
    )
    arc_size: int = opt(8, "Session summaries of one thread condensed into an arc.", ge=2)
    epoch_size: int = opt(4, "Arcs of one thread condensed into an epoch.", ge=2)
    inactivity_timeout_minutes: int = opt(
        30, "A session with no end event and no new message for this long is closed and summarised.", ge=1
    )
    memory_md_budget_tokens: int = opt(
        1500, "Hard budget of the rendered MEMORY.md, in tokens of the bundled tokenizer.", ge=100
    )
    synthesis_idle_minutes: int = opt(
        10, "MEMORY.md is rendered again once memory has been idle this long after a change.", ge=1
    )
    synthesis_decay_per_day: float = opt(
        0.05, "Importance lost per day since last access when ranking MEMORY.md items (0-1).", ge=0, le=1
    )
    expand_messages: int = opt(
        2, "Transcript messages shown either side of a recalled memory's match (expand).", ge=0
    )


# --- harness hooks ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HooksConfig:
    """What `signet hook ...` injects into an agent's context, and how long it may take."""

    session_start_timeout_ms: int = opt(
        2000, "Hard time budget of the session-start hook, in ms (then it prints nothing).", ge=1
    )
    prompt_submit_timeout_ms: int = opt(
        1000, "Hard time budget of the user-prompt-submit hook, in ms.", ge=1
    )
    session_end_timeout_ms: int = opt(
        2000, "Hard time budget of the session-end and pre-compaction hooks, in ms.", ge=1
    )
    session_start_tokens: int = opt(
        2000, "Token budget of the session-start context (bundled tokenizer).", ge=1
    )
    prompt_submit_tokens: int = opt(
        800, "Token budget of the context injected for one prompt (bundled tokenizer).", ge=1
    )
    memory_tokens: int = opt(
        120, "Longest one injected memory may be, in tokens (longer ones are cut and marked).", ge=8
    )
    prompt_max_memories: int = opt(
        # Chosen by `signet bench inject-fit` (docs/benchmarks.md): each memory past the first
        # cost more precision than it brought context hit, held out on both benchmarks.
        1, "Most memories injected for one prompt.", ge=0,
    )
    min_relevance: float = opt(
        # Chosen by `signet bench inject-fit` for the bundled all-MiniLM-L6-v2 (another
        # embedder's cosines have another scale: measure again): the lowest floor whose false
        # injection on the development halves' negatives is <= 10% (hard) and <= 2% (easy),
        # checked held out (docs/benchmarks.md).
        0.085,
        "Prompt-submit injects nothing unless its best recalled memory's judged probability of"
        " being about the prompt reaches this (0-1): a prompt about nothing stored gets"
        " nothing. Without vectors: hooks.min_keyword_confidence.",
        ge=0, le=1,
    )
    min_memory_relevance: float = opt(
        # Chosen with hooks.prompt_max_memories by `signet bench inject-fit` (docs/benchmarks.md).
        0.01,
        "Once the best passes hooks.min_relevance, each further memory goes in only when its"
        " own judged probability reaches this (0-1), at most hooks.prompt_max_memories.",
        ge=0, le=1,
    )
    min_keyword_confidence: float = opt(
        # Chosen by `signet bench locomo|memaware --inject --embedder none` with the same rule
        # as hooks.min_relevance, which no floor meets on MemAware's easy negatives: the lowest
        # floor at their least (docs/benchmarks.md, "What the prompt hook injects").
        0.3,
        "Without vectors (keyword mode, embedder down) prompt-submit injects a recalled memory"
        " only when recall's calibrated confidence (coverage only) reaches this (0-1).",
        ge=0, le=1,
    )
    capture_remember: bool = opt(
        True, 'Store "remember that ..." requests in prompts as memories.'
    )


# --- access -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AuthConfig:
    """Who may call the daemon."""

    mode: Literal["local", "team", "hybrid"] = opt(
        "local", "A token is always required; local binds loopback only, team/hybrid may bind wider."
    )
    token_ttl_days: int = opt(365, "Lifetime of an issued token, in days.", ge=1)
    rate_limit_per_minute: int = opt(600, "Mutating requests per minute per token.", ge=1)
    unauthenticated_per_minute: int = opt(
        600, "Requests without a valid token per minute per client address before they get"
        " 429 instead of 401.", ge=1,
    )
    mcp_sessions_per_token: int = opt(
        16, "Open MCP sessions (/mcp) one token may hold; one more is refused with 429.", ge=1
    )
    mcp_session_idle_s: int = opt(
        300, "An MCP session with no request for this long is closed, in seconds.", ge=1
    )


@dataclass(frozen=True, slots=True)
class NetworkConfig:
    """Where the daemon listens and whom it answers."""

    mode: Literal["localhost", "tailscale", "lan"] = opt(
        "localhost",
        "localhost (bind loopback only), tailscale (bind a Tailscale address, or loopback behind"
        " tailscale serve) or lan (any address); tailscale and lan need auth.mode team or hybrid.",
    )
    allowed_hosts: tuple[str, ...] = opt((), "Host headers accepted besides loopback names.")
    cors_origins: tuple[str, ...] = opt((), "Browser origins allowed by CORS.")
    header_timeout_s: float = opt(
        10.0, "A connection whose request headers are not complete this long after it opened"
        " (or after its previous answer) is closed, in seconds.", ge=0.1,
    )
    max_connections: int = opt(
        1024, "Connections and requests served at once; past it new ones get 503.", ge=1
    )


@dataclass(frozen=True, slots=True)
class TelemetryConfig:
    """Local operational telemetry (latency, counters, errors); never leaves the machine."""

    enabled: bool = opt(True, "Collect local latency histograms, counters and errors.")
    error_ring_size: int = opt(200, "Recent errors kept in memory.", ge=1)


@dataclass(frozen=True, slots=True)
class SkillsConfig:
    """Skills: folders under skills/ with a SKILL.md, indexed as procedural memories."""

    enabled: bool = opt(True, "Keep skill_meta and the skill memories in step with skills/.")
    reconcile_interval_ms: int = opt(
        60_000, "How often the daemon re-reads skills/ for added, changed or removed skills, in ms.",
        ge=1000,
    )
    decay_rate: float = opt(
        0.99, "Share of a skill's ranking importance kept per day without use (0-1).", ge=0, le=1
    )


@dataclass(frozen=True, slots=True)
class StoreConfig:
    """Where the shared state lives: the workspace's SQLite file, or a PostgreSQL database."""

    backend: Literal["sqlite", "postgres"] = opt(
        "sqlite", "sqlite (memory/memories.db in the workspace) or postgres (store.url: one"
        " database several daemons share, see docs/deploy.md)."
    )
    url: str = opt(
        "", "The PostgreSQL URL (postgresql://user@host:5432/db) for backend postgres; env"
        " SIGNET_STORE_URL overrides, and a URL holding a password belongs only there."
    )


# --- the whole ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Config:
    """Every setting, resolved. Build with `Config.load` (entry points) or `Config.default`."""

    workspace: Path
    port: int = opt(DEFAULT_PORT, "Daemon HTTP port (env SIGNET_PORT overrides).", ge=1, le=65535)
    bind: str = opt("127.0.0.1", "Daemon bind address (env SIGNET_BIND overrides).")
    memory: MemoryConfig = section(MemoryConfig)
    pipeline: PipelineConfig = section(PipelineConfig)
    retention: RetentionConfig = section(RetentionConfig)
    documents: DocumentsConfig = section(DocumentsConfig)
    embedding: EmbeddingConfig = section(EmbeddingConfig)
    llm: LlmConfig = section(LlmConfig)
    search: SearchConfig = section(SearchConfig)
    auth: AuthConfig = section(AuthConfig)
    network: NetworkConfig = section(NetworkConfig)
    telemetry: TelemetryConfig = section(TelemetryConfig)
    hooks: HooksConfig = section(HooksConfig)
    skills: SkillsConfig = section(SkillsConfig)
    sessions: SessionsConfig = section(SessionsConfig)
    store: StoreConfig = section(StoreConfig)
    # Not a setting: what loading noticed (unknown keys), so equality ignores it.
    warnings: tuple[str, ...] = field(default=(), compare=False)

    @classmethod
    def default(cls, workspace: Path | str) -> Config:
        """Every default, no file read."""
        return cls(workspace=Path(workspace))

    @classmethod
    def load(cls, workspace: Path | str | None = None, env: Mapping[str, str] | None = None) -> Config:
        """Resolve the workspace, read its agent.yaml (if any), then apply env overrides."""
        env = os.environ if env is None else env
        root = resolve_workspace(workspace, env)
        path = root / CONFIG_FILE
        values: dict[tuple[str, ...], Any] = {}
        lines: dict[tuple[str, ...], int] = {}
        warnings: list[str] = []
        if path.is_file():
            _read_file(path, values, lines, warnings)
            _refuse_stored_password(values, lines, path)
        _apply_env(env, values)
        cfg: Config = _build(Config, (), values, workspace=root, warnings=tuple(warnings))
        _check_consistency(cfg, path, lines)
        return cfg

    def replace(self, **changes: Any) -> Config:
        """A copy with whole sections (or top-level fields) replaced."""
        return dataclasses.replace(self, **changes)

    @property
    def config_path(self) -> Path:
        return self.workspace / CONFIG_FILE

    @property
    def db_path(self) -> Path:
        return self.workspace / "memory" / "memories.db"

    @property
    def daemon_dir(self) -> Path:
        return self.workspace / ".daemon"

    @property
    def log_dir(self) -> Path:
        return self.daemon_dir / "logs"

    @property
    def pid_path(self) -> Path:
        return self.daemon_dir / "pid"

    @property
    def token_path(self) -> Path:
        return self.daemon_dir / "token"


def resolve_workspace(explicit: Path | str | None, env: Mapping[str, str]) -> Path:
    """The workspace: the explicit argument, else $SIGNET_WORKSPACE, else ~/.agents."""
    if explicit is not None and str(explicit) != "":
        chosen = Path(explicit)
    elif env.get("SIGNET_WORKSPACE"):
        chosen = Path(env["SIGNET_WORKSPACE"])
    else:
        home = env.get("HOME")
        chosen = (Path(home) if home else Path.home()) / ".agents"
    if str(chosen).startswith("~"):
        home = env.get("HOME")
        chosen = Path(str(chosen).replace("~", home, 1)) if home else chosen.expanduser()
    return chosen.absolute()


# --- schema: where each field lives in agent.yaml ---------------------------------------------


@dataclass(frozen=True, slots=True)
class _Leaf:
    path: tuple[str, ...]  # attribute path from Config, e.g. ("pipeline", "traversal", "max_hops")
    hint: Any
    meta: Mapping[str, Any]
    default: Any


@dataclass(frozen=True, slots=True)
class _Section:
    cls: type
    children: dict[str, _Leaf | _Section]


# Sections whose YAML keys are camelCase; every other one is snake_case.
_CAMEL_SECTIONS: frozenset[str] = frozenset({"memory", "pipeline", "retention"})
# Config fields that do not sit at YAML top level under their own name.
_PLACEMENT: dict[str, tuple[str, ...]] = {"pipeline": ("memory", "pipelineV2")}
_NOT_IN_YAML = frozenset({"workspace", "warnings"})


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _section(cls: type, path: tuple[str, ...], camel: bool) -> _Section:
    hints = typing.get_type_hints(cls)
    children: dict[str, _Leaf | _Section] = {}
    for f in dataclasses.fields(cls):
        key = _camel(f.name) if camel else f.name
        hint = hints[f.name]
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            children[key] = _section(hint, (*path, f.name), camel)
        else:
            children[key] = _Leaf((*path, f.name), hint, f.metadata, f.default)
    return _Section(cls, children)


@cache
def _schema() -> _Section:
    """The YAML layout of Config: the only place that knows key spelling and placement."""
    hints = typing.get_type_hints(Config)
    root = _Section(Config, {})
    for f in dataclasses.fields(Config):
        if f.name in _NOT_IN_YAML:
            continue
        *parents, key = _PLACEMENT.get(f.name, (f.name,))
        parent = root
        for name in parents:
            child = parent.children[name]
            assert isinstance(child, _Section)
            parent = child
        hint = hints[f.name]
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            parent.children[key] = _section(hint, (f.name,), f.name in _CAMEL_SECTIONS)
        else:
            parent.children[key] = _Leaf((f.name,), hint, f.metadata, f.default)
    return root


# --- reading ----------------------------------------------------------------------------------


def _read_file(
    path: Path,
    values: dict[tuple[str, ...], Any],
    lines: dict[tuple[str, ...], int],
    warnings: list[str],
) -> None:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: cannot read: {e}") from e
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as e:
        raise ConfigError(_yaml_error_message(path, text, e)) from e
    except yaml.YAMLError as e:
        raise ConfigError(f"{path}: invalid YAML: {e}") from e
    if root is None or _is_null(root):
        return
    if not isinstance(root, MappingNode):
        raise ConfigError(
            f"{path}:{_line(root)}: the top level must be a mapping of keys, got {_kind(root)}"
        )
    _walk(root, _schema(), (), path, values, lines, warnings)


def _yaml_error_message(path: Path, text: str, e: yaml.MarkedYAMLError) -> str:
    mark = e.problem_mark or e.context_mark
    if mark is None:
        return f"{path}: invalid YAML: {e.problem or e}"
    line_no = mark.line + 1
    source = text.splitlines()[mark.line] if mark.line < len(text.splitlines()) else ""
    key = _key_of_line(text, mark.line)
    where = f" (in key {key})" if key else ""
    problem = e.problem or "syntax error"
    if e.context:
        problem = f"{e.context}, {problem}"
    return f"{path}:{line_no}: invalid YAML{where}: {problem}: {source.strip()!r}"


_KEY_LINE = re.compile(r"^(\s*)([A-Za-z_][\w-]*)\s*:")


def _key_of_line(text: str, index: int) -> str:
    """Best effort dotted key of a line in a block-style file, from indentation alone."""
    all_lines = text.splitlines()
    if index >= len(all_lines):
        return ""
    match = _KEY_LINE.match(all_lines[index])
    if not match:
        return ""
    indent, keys = len(match.group(1)), [match.group(2)]
    for earlier in reversed(all_lines[:index]):
        parent = _KEY_LINE.match(earlier)
        if parent and len(parent.group(1)) < indent:
            indent = len(parent.group(1))
            keys.append(parent.group(2))
            if indent == 0:
                break
    return ".".join(reversed(keys))


def _walk(
    node: MappingNode,
    schema: _Section,
    yaml_path: tuple[str, ...],
    file: Path,
    values: dict[tuple[str, ...], Any],
    lines: dict[tuple[str, ...], int],
    warnings: list[str],
) -> None:
    seen: set[str] = set()
    for key_node, value_node in node.value:
        if not isinstance(key_node, ScalarNode) or key_node.tag != "tag:yaml.org,2002:str":
            raise ConfigError(f"{file}:{_line(key_node)}: keys must be plain strings, got {_kind(key_node)}")
        key = key_node.value
        dotted = ".".join((*yaml_path, key))
        if key in seen:
            raise ConfigError(f"{file}:{_line(key_node)}: {dotted}: key appears twice")
        seen.add(key)
        child = schema.children.get(key)
        if child is None:
            message = f"{file}:{_line(key_node)}: unknown key {dotted} (ignored)"
            log.warning("%s", message)
            warnings.append(message)
        elif isinstance(child, _Section):
            if _is_null(value_node):  # every child commented out: keep the defaults
                continue
            if not isinstance(value_node, MappingNode):
                raise ConfigError(
                    f"{file}:{_line(value_node)}: {dotted}: expected a mapping of keys, "
                    f"got {_kind(value_node)}"
                )
            _walk(value_node, child, (*yaml_path, key), file, values, lines, warnings)
        else:
            lines[child.path] = _line(key_node)
            values[child.path] = _coerce(value_node, child, f"{file}:{_line(value_node)}: {dotted}")


def _coerce(node: Node, leaf: _Leaf, where: str) -> Any:
    """The Python value for a leaf, or ConfigError naming what was expected."""
    hint = leaf.hint
    if typing.get_origin(hint) is tuple:
        if not isinstance(node, SequenceNode):
            raise ConfigError(f"{where}: expected a list of strings, got {_kind(node)}")
        items = [_scalar(item) for item in node.value]
        if not all(isinstance(item, str) for item in items):
            raise ConfigError(f"{where}: expected a list of strings, got a list with non-strings")
        return tuple(items)
    value = _scalar(node) if isinstance(node, ScalarNode) else _Unsupported(node)
    got = _kind(node) if not isinstance(node, ScalarNode) else _describe(value)
    if typing.get_origin(hint) is Literal:
        choices = typing.get_args(hint)
        if value not in choices or not isinstance(value, str):
            raise ConfigError(f"{where}: expected one of {', '.join(choices)}, got {got}")
        return value
    if hint is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: expected true or false, got {got}")
        return value
    if hint is int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise ConfigError(f"{where}: expected an integer, got {got}")
        return _bounded(value, leaf, where)
    if hint is float:
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise ConfigError(f"{where}: expected a number, got {got}")
        return float(_bounded(value, leaf, where))
    if hint is str:
        if not isinstance(value, str):
            raise ConfigError(f"{where}: expected a string, got {got}")
        return value
    raise ConfigError(f"{where}: unsupported setting type {hint!r}")  # a schema bug, not user error


def _bounded(value: float, leaf: _Leaf, where: str) -> Any:
    ge, le = leaf.meta.get("ge"), leaf.meta.get("le")
    if ge is not None and value < ge:
        raise ConfigError(f"{where}: expected a value >= {_fmt_bound(ge)}, got {value!r}")
    if le is not None and value > le:
        raise ConfigError(f"{where}: expected a value <= {_fmt_bound(le)}, got {value!r}")
    return value


def _fmt_bound(bound: float) -> str:
    return str(int(bound)) if float(bound).is_integer() else str(bound)


class _Unsupported:
    """Stands in for a mapping or list where a scalar belongs, so type checks fail cleanly."""

    def __init__(self, node: Node) -> None:
        self.node = node


def _scalar(node: Node) -> Any:
    if not isinstance(node, ScalarNode):
        return _Unsupported(node)
    return yaml.SafeLoader("").construct_object(node, deep=True)


def _is_null(node: Node) -> bool:
    return isinstance(node, ScalarNode) and node.tag == "tag:yaml.org,2002:null"


def _line(node: Node) -> int:
    return node.start_mark.line + 1


def _kind(node: Node) -> str:
    if isinstance(node, MappingNode):
        return "a mapping"
    if isinstance(node, SequenceNode):
        return "a list"
    return _describe(_scalar(node))


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, str):
        return f"string {value!r}"
    if isinstance(value, int | float):
        return f"number {value!r}"
    return f"{type(value).__name__} {value!r}"


# --- environment and assembly -----------------------------------------------------------------


def _apply_env(env: Mapping[str, str], values: dict[tuple[str, ...], Any]) -> None:
    raw_port = env.get("SIGNET_PORT")
    if raw_port is not None and raw_port.strip() != "":
        try:
            port = int(raw_port.strip())
        except ValueError:
            port = 0
        if not 1 <= port <= 65535:
            raise ConfigError(
                f"environment variable SIGNET_PORT: expected an integer port 1-65535, got {raw_port!r}"
            )
        values[("port",)] = port
    bind = env.get("SIGNET_BIND")
    if bind is not None and bind.strip() != "":
        values[("bind",)] = bind.strip()
    store_url = env.get("SIGNET_STORE_URL")
    if store_url is not None and store_url.strip() != "":
        values[("store", "url")] = store_url.strip()


def _build(cls: type, path: tuple[str, ...], values: Mapping[tuple[str, ...], Any], **extra: Any) -> Any:
    hints = typing.get_type_hints(cls)
    kwargs: dict[str, Any] = dict(extra)
    for f in dataclasses.fields(cls):
        if f.name in kwargs:
            continue
        here = (*path, f.name)
        if dataclasses.is_dataclass(hints[f.name]):
            kwargs[f.name] = _build(hints[f.name], here, values)
        elif here in values:
            kwargs[f.name] = values[here]
    return cls(**kwargs)


def _check_consistency(cfg: Config, file: Path, lines: Mapping[tuple[str, ...], int]) -> None:
    """Rules that involve two settings; the message points at the second one's line."""
    rules = [
        (
            cfg.pipeline.document_chunk_overlap < cfg.pipeline.document_chunk_size,
            ("pipeline", "document_chunk_overlap"),
            "must be smaller than documentChunkSize",
        ),
        (cfg.pipeline.hints.min <= cfg.pipeline.hints.max, ("pipeline", "hints", "min"), "must not exceed max"),
        (
            cfg.search.default_limit <= cfg.search.max_limit,
            ("search", "default_limit"),
            "must not exceed max_limit",
        ),
    ]
    for name in ("llm", "embedding"):
        key = getattr(cfg, name).api_key
        rules.append((
            key == "" or key.startswith("secret:"), (name, "api_key"),
            "must be a secret reference, secret:NAME (store the key with `signet secret set NAME`;"
            " a plaintext key does not belong in agent.yaml)",
        ))
    rules.append((
        cfg.store.backend != "postgres" or cfg.store.url != "", ("store", "backend"),
        "postgres needs store.url or the environment variable SIGNET_STORE_URL",
    ))
    for ok, path, problem in rules:
        if not ok:
            line = lines.get(path)
            where = f"{file}:{line}" if line else str(file)
            raise ConfigError(f"{where}: {_yaml_dotted(path)} {problem}")


def _refuse_stored_password(
    values: Mapping[tuple[str, ...], Any], lines: Mapping[tuple[str, ...], int], file: Path
) -> None:
    """A database password never sits in agent.yaml (the file is copied, shared, committed)."""
    if _has_password(str(values.get(("store", "url"), ""))):
        raise ConfigError(
            f"{file}:{lines.get(('store', 'url'))}: store.url holds a password: put the URL in"
            " the environment variable SIGNET_STORE_URL (or the password in PGPASSWORD or"
            " ~/.pgpass), never in agent.yaml"
        )


def _has_password(url: str) -> bool:
    """Whether a postgresql:// URL carries a password (user:secret@ or ?password=)."""
    userinfo = re.match(r"^[a-z0-9+.-]+://[^:@/?#]*:([^@/?#]*)@", url, re.IGNORECASE)
    return bool(userinfo and userinfo.group(1)) or "password=" in url.lower()


def _yaml_dotted(path: tuple[str, ...]) -> str:
    """The YAML spelling of an attribute path, found through the schema."""

    def search(node: _Section, prefix: tuple[str, ...]) -> str | None:
        for key, child in node.children.items():
            if isinstance(child, _Leaf) and child.path == path:
                return ".".join((*prefix, key))
            if isinstance(child, _Section):
                found = search(child, (*prefix, key))
                if found:
                    return found
        return None

    return search(_schema(), ()) or ".".join(path)


# --- rendering the default file ----------------------------------------------------------------


def render_agent_yaml() -> str:
    """The default agent.yaml: every key, each with a comment, every value the default."""
    out = [
        "# Signet configuration (agent.yaml). Every key is optional: a missing key keeps its",
        "# default, an unknown key is reported as a warning and ignored.",
        "# Reference: docs/configuration.md. Env SIGNET_PORT and SIGNET_BIND override port and bind.",
        "",
    ]
    _render_section(_schema(), 0, out)
    return "\n".join(out) + "\n"


def _render_section(node: _Section, depth: int, out: list[str]) -> None:
    pad = "  " * depth
    for key, child in node.children.items():
        if isinstance(child, _Section):
            if depth == 0:
                out.append("")
            out.append(f"{pad}# {_first_line(child.cls.__doc__)}")
            out.append(f"{pad}{key}:")
            _render_section(child, depth + 1, out)
        else:
            doc = child.meta.get("doc", "")
            if typing.get_origin(child.hint) is Literal:
                doc = f"{doc} One of: {' | '.join(typing.get_args(child.hint))}."
            out.append(f"{pad}# {doc}")
            out.append(f"{pad}{key}: {_yaml_scalar(child.default)}")


def _first_line(doc: str | None) -> str:
    return (doc or "").strip().splitlines()[0] if doc else ""


def _yaml_scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a valid double-quoted YAML scalar
    if isinstance(value, tuple):
        return "[" + ", ".join(json.dumps(item) for item in value) + "]"
    raise TypeError(f"no YAML form for {value!r}")
