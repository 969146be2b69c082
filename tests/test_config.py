"""Config: defaults, agent.yaml loading and its errors, env overrides, workspace resolution."""

from __future__ import annotations

import dataclasses
import logging
import re
from pathlib import Path

import pytest
import yaml

from signet.config import (
    Config,
    DampeningConfig,
    SearchConfig,
    render_agent_yaml,
    resolve_workspace,
)
from signet.errors import ConfigError

DAY_MS = 86_400_000


def write_config(workspace: Path, text: str) -> Path:
    path = workspace / "agent.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def load(workspace: Path, text: str, env: dict[str, str] | None = None) -> Config:
    write_config(workspace, text)
    return Config.load(workspace, env=env or {})


def load_error(workspace: Path, text: str) -> str:
    write_config(workspace, text)
    with pytest.raises(ConfigError) as info:
        Config.load(workspace, env={})
    return str(info.value)


# --- defaults ---------------------------------------------------------------------------------


def test_defaults_match_the_documented_values(tmp_path: Path) -> None:
    cfg = Config.default(tmp_path)
    assert (cfg.workspace, cfg.port, cfg.bind) == (tmp_path, 3850, "127.0.0.1")
    assert (cfg.memory.max_content_chars, cfg.memory.default_importance, cfg.memory.max_tags) == (
        100_000,
        0.5,
        50,
    )
    p = cfg.pipeline
    assert (p.enabled, p.shadow_mode, p.mutations_frozen) == (True, False, False)
    assert (p.min_fact_confidence_for_write, p.lease_timeout_ms, p.max_attempts) == (0.7, 300_000, 3)
    assert (p.worker_poll_ms, p.document_chunk_size, p.document_chunk_overlap) == (2000, 2000, 200)
    assert p.contradiction_threshold == 0.6
    assert p.graph.enabled and p.traversal.enabled and p.traversal.primary
    t = p.traversal
    assert (t.max_aspects_per_entity, t.max_attributes_per_aspect, t.max_hops) == (5, 10, 2)
    assert (t.min_dependency_strength, t.max_branching, t.max_paths) == (0.3, 8, 50)
    assert (t.timeout_ms, t.flat_reserve_fraction) == (50, 0.4)
    assert (p.hints.enabled, p.hints.max, p.hints.min) == (True, 5, 3)
    a = p.autonomous
    assert (a.enabled, a.frozen, a.allow_update_delete, a.maintenance_mode) == (
        False,
        False,
        False,
        "observe",
    )
    assert p.telemetry.memory_search_qa_enabled is False
    r = cfg.retention
    assert r.interval_ms == 6 * 3_600_000
    assert (r.tombstone_retention_ms, r.history_retention_ms) == (30 * DAY_MS, 180 * DAY_MS)
    assert (r.completed_job_retention_ms, r.dead_job_retention_ms) == (14 * DAY_MS, 30 * DAY_MS)
    assert (r.cold_retention_ms, r.batch_limit) == (180 * DAY_MS, 500)
    e = cfg.embedding
    assert (e.provider, e.model, e.dimensions, e.base_url) == ("local", "all-MiniLM-L6-v2-int8-dynamic", 384, "")
    assert (e.api_key_env, e.batch_size, e.threads, e.timeout_ms) == ("OPENAI_API_KEY", 32, 1, 30_000)
    llm = cfg.llm
    assert (llm.provider, llm.model, llm.base_url, llm.timeout_ms) == ("none", "", "", 60_000)
    assert (llm.max_calls_per_hour, llm.burst, llm.command, llm.api_key_env, llm.max_tokens) == (
        600,
        10,
        (),
        "",
        1024,
    )
    s = cfg.search
    assert (s.fusion, s.rrf_k, s.alpha, s.min_score) == ("rrf", 60, 0.7, 0.0)
    assert (s.default_limit, s.max_limit, s.max_query_chars, s.candidate_pool) == (10, 200, 2000, 100)
    assert (s.rehearsal_boost, s.decay_rate) == (0.1, 0.05)
    assert s.dampening == DampeningConfig(True, 0.5, 0.5, True, 0.7, True, 1.2)
    assert (cfg.auth.mode, cfg.auth.token_ttl_days, cfg.auth.rate_limit_per_minute) == ("local", 365, 600)
    assert (cfg.network.mode, cfg.network.allowed_hosts, cfg.network.cors_origins) == ("localhost", (), ())
    assert (cfg.telemetry.enabled, cfg.telemetry.error_ring_size) == (True, 200)
    assert cfg.warnings == ()


def test_paths_derive_from_the_workspace(tmp_path: Path) -> None:
    cfg = Config.default(tmp_path)
    assert cfg.db_path == tmp_path / "memory" / "memories.db"
    assert cfg.daemon_dir == tmp_path / ".daemon"
    assert cfg.log_dir == tmp_path / ".daemon" / "logs"
    assert cfg.pid_path == tmp_path / ".daemon" / "pid"
    assert cfg.token_path == tmp_path / ".daemon" / "token"


def test_config_is_frozen_and_replaceable_by_section(tmp_path: Path) -> None:
    cfg = Config.default(tmp_path)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.port = 1  # type: ignore[misc]
    changed = dataclasses.replace(cfg, search=dataclasses.replace(cfg.search, rrf_k=10))
    assert changed.search.rrf_k == 10 and cfg.search.rrf_k == 60
    assert cfg.replace(port=4000).port == 4000


def test_missing_file_means_all_defaults(tmp_path: Path) -> None:
    assert Config.load(tmp_path, env={}) == Config.default(tmp_path)


def test_empty_file_and_empty_sections_mean_defaults(tmp_path: Path) -> None:
    assert load(tmp_path, "# nothing yet\n") == Config.default(tmp_path)
    assert load(tmp_path, "memory:\nsearch:\n") == Config.default(tmp_path)


# --- loading values ---------------------------------------------------------------------------


def test_rendered_default_file_loads_back_to_the_defaults(tmp_path: Path) -> None:
    cfg = load(tmp_path, render_agent_yaml())
    assert cfg == Config.default(tmp_path)
    assert cfg.warnings == ()


def test_rendered_file_comments_every_key() -> None:
    lines = render_agent_yaml().splitlines()
    for index, line in enumerate(lines):
        if re.match(r"^\s*[A-Za-z]\w*:", line):
            assert lines[index - 1].strip().startswith("# "), f"no comment above {line!r}"


def test_every_setting_round_trips_through_yaml(tmp_path: Path) -> None:
    text = """
port: 4100
bind: 0.0.0.0
memory:
  maxContentChars: 5000
  defaultImportance: 0.25
  maxTags: 7
  pipelineV2:
    enabled: false
    shadowMode: true
    mutationsFrozen: true
    minFactConfidenceForWrite: 0.9
    leaseTimeoutMs: 1000
    maxAttempts: 5
    workerPollMs: 100
    documentChunkSize: 800
    documentChunkOverlap: 80
    contradictionThreshold: 0.75
    graph: {enabled: false}
    traversal:
      enabled: false
      primary: false
      maxAspectsPerEntity: 2
      maxAttributesPerAspect: 3
      maxHops: 4
      minDependencyStrength: 0.5
      maxBranching: 6
      maxPaths: 7
      timeoutMs: 9
      flatReserveFraction: 0.1
    hints: {enabled: false, max: 8, min: 1}
    autonomous:
      enabled: true
      frozen: true
      allowUpdateDelete: true
      maintenanceMode: execute
    telemetry:
      memorySearchQaEnabled: true
retention:
  intervalMs: 60000
  tombstoneRetentionMs: 1
  historyRetentionMs: 2
  completedJobRetentionMs: 3
  deadJobRetentionMs: 4
  coldRetentionMs: 5
  idempotencyKeyRetentionMs: 7
  hookLedgerRetentionMs: 8
  batchLimit: 6
embedding:
  provider: ollama
  model: nomic-embed-text
  dimensions: 768
  base_url: http://127.0.0.1:11434
  api_key_env: MY_KEY
  batch_size: 8
  threads: 2
  write_path: inline
  worker_processes: 3
  timeout_ms: 5000
  index: exact
  ann_min_vectors: 200000
  prefilter_min_vectors: 300000
llm:
  provider: command
  model: m
  base_url: http://x
  timeout_ms: 1000
  max_calls_per_hour: 10
  burst: 2
  command: [claude, -p]
  api_key_env: K
  max_tokens: 64
search:
  fusion: alpha
  rrf_k: 30
  alpha: 1
  min_score: 0.2
  default_limit: 5
  max_limit: 50
  max_query_chars: 100
  candidate_pool: 20
  rehearsal_boost: 0.3
  decay_rate: 0.01
  query_embed_timeout_ms: 700
  embed_breaker_failures: 5
  embed_breaker_cooldown_ms: 9000
  dampening:
    gravity: false
    gravity_factor: 0.1
    gravity_cosine: 0.2
    hub: false
    hub_factor: 0.3
    resolution: false
    resolution_factor: 2
auth: {mode: hybrid, token_ttl_days: 7, rate_limit_per_minute: 60, unauthenticated_per_minute: 9,
  mcp_sessions_per_token: 4, mcp_session_idle_s: 30}
network: {mode: tailscale, allowed_hosts: [box.ts.net], cors_origins: ["http://localhost:5173"],
  header_timeout_s: 3, max_connections: 50}
telemetry: {enabled: false, error_ring_size: 10}
"""
    cfg = load(tmp_path, text)
    assert cfg.warnings == ()
    assert (cfg.port, cfg.bind) == (4100, "0.0.0.0")
    assert (cfg.memory.max_content_chars, cfg.memory.default_importance, cfg.memory.max_tags) == (5000, 0.25, 7)
    p = cfg.pipeline
    assert (p.enabled, p.shadow_mode, p.mutations_frozen) == (False, True, True)
    assert (p.min_fact_confidence_for_write, p.lease_timeout_ms, p.max_attempts) == (0.9, 1000, 5)
    assert (p.worker_poll_ms, p.document_chunk_size, p.document_chunk_overlap) == (100, 800, 80)
    assert p.contradiction_threshold == 0.75 and p.graph.enabled is False
    t = p.traversal
    assert (t.enabled, t.primary, t.max_aspects_per_entity, t.max_attributes_per_aspect) == (False, False, 2, 3)
    assert (t.max_hops, t.min_dependency_strength, t.max_branching, t.max_paths) == (4, 0.5, 6, 7)
    assert (t.timeout_ms, t.flat_reserve_fraction) == (9, 0.1)
    assert (p.hints.enabled, p.hints.max, p.hints.min) == (False, 8, 1)
    a = p.autonomous
    assert (a.enabled, a.frozen, a.allow_update_delete, a.maintenance_mode) == (True, True, True, "execute")
    assert p.telemetry.memory_search_qa_enabled is True
    assert dataclasses.astuple(cfg.retention) == (60000, 1, 2, 3, 4, 5, 7, 8, 6)
    assert dataclasses.astuple(cfg.embedding) == (
        "ollama", "nomic-embed-text", 768, "http://127.0.0.1:11434", "MY_KEY", 8, 2, "inline",
        3, 5000, "", "exact", 200000, 300000,
    )
    assert dataclasses.astuple(cfg.llm) == (
        "command", "m", "http://x", 1000, 10, 2, ("claude", "-p"), "K", 64, "", 1,
    )
    s = cfg.search
    assert (s.fusion, s.rrf_k, s.alpha, s.min_score, s.default_limit, s.max_limit) == (
        "alpha", 30, 1.0, 0.2, 5, 50,
    )
    assert (s.max_query_chars, s.candidate_pool, s.rehearsal_boost, s.decay_rate) == (100, 20, 0.3, 0.01)
    assert (s.query_embed_timeout_ms, s.embed_breaker_failures, s.embed_breaker_cooldown_ms) == (
        700, 5, 9000
    )
    assert s.dampening == DampeningConfig(False, 0.1, 0.2, False, 0.3, False, 2.0)
    assert isinstance(s.alpha, float) and isinstance(s.dampening.resolution_factor, float)
    assert dataclasses.astuple(cfg.auth) == ("hybrid", 7, 60, 9, 4, 30)
    assert dataclasses.astuple(cfg.network) == (
        "tailscale", ("box.ts.net",), ("http://localhost:5173",), 3.0, 50
    )
    assert dataclasses.astuple(cfg.telemetry) == (False, 10)


def test_partial_sections_keep_the_other_defaults(tmp_path: Path) -> None:
    cfg = load(tmp_path, "memory:\n  pipelineV2:\n    shadowMode: true\n    traversal:\n      maxHops: 3\n")
    expected = Config.default(tmp_path)
    traversal = dataclasses.replace(expected.pipeline.traversal, max_hops=3)
    pipeline = dataclasses.replace(expected.pipeline, shadow_mode=True, traversal=traversal)
    assert cfg == dataclasses.replace(expected, pipeline=pipeline)


def test_config_built_directly_equals_loaded_one(tmp_path: Path) -> None:
    direct = dataclasses.replace(
        Config.default(tmp_path), search=SearchConfig(rrf_k=20, dampening=DampeningConfig(hub=False))
    )
    loaded = load(tmp_path, "search:\n  rrf_k: 20\n  dampening:\n    hub: false\n")
    assert loaded == direct


# --- errors -----------------------------------------------------------------------------------


def test_malformed_yaml_names_file_and_line(tmp_path: Path) -> None:
    text = "port: 3850\nmemory:\n  pipelineV2:\n    enabled: [true\n  maxTags: 3\n"
    message = load_error(tmp_path, text)
    assert str(tmp_path / "agent.yaml") in message
    assert re.search(r"agent\.yaml:5\b", message), message
    assert "invalid YAML" in message


def test_malformed_yaml_names_the_key_where_it_can(tmp_path: Path) -> None:
    message = load_error(tmp_path, "memory:\n  pipelineV2:\n    shadowMode: a: b\n")
    assert "agent.yaml:3" in message and "memory.pipelineV2.shadowMode" in message


@pytest.mark.parametrize(
    ("text", "line", "key", "expected"),
    [
        ('port: "abc"\n', 1, "port", "expected an integer"),
        ("bind: 127.0.0.1\nport: true\n", 2, "port", "expected an integer"),
        ('memory:\n  pipelineV2:\n    shadowMode: "yes"\n', 3, "memory.pipelineV2.shadowMode", "expected true or false"),
        ("memory:\n  pipelineV2:\n    traversal:\n      maxHops: [1, 2]\n", 4, "memory.pipelineV2.traversal.maxHops", "expected an integer"),
        ("search:\n  alpha: {a: 1}\n", 2, "search.alpha", "expected a number"),
        ("search:\n  alpha: true\n", 2, "search.alpha", "expected a number"),
        ("embedding:\n  model: 12\n", 2, "embedding.model", "expected a string"),
        ("llm:\n  command: claude -p\n", 2, "llm.command", "expected a list of strings"),
        ("network:\n  allowed_hosts: [1, 2]\n", 2, "network.allowed_hosts", "expected a list of strings"),
        ("memory: 3\n", 1, "memory", "expected a mapping"),
        ("retention:\n  intervalMs: 1.5\n", 2, "retention.intervalMs", "expected an integer"),
    ],
)
def test_wrong_type_names_file_line_key_and_expectation(
    tmp_path: Path, text: str, line: int, key: str, expected: str
) -> None:
    message = load_error(tmp_path, text)
    assert f"{tmp_path / 'agent.yaml'}:{line}: {key}" in message
    assert expected in message


@pytest.mark.parametrize(
    ("text", "key", "choices"),
    [
        ("embedding:\n  provider: cohere\n", "embedding.provider", "local, ollama, openai, none"),
        ("llm:\n  provider: gpt\n", "llm.provider", "none, ollama, openai, anthropic, command"),
        ("search:\n  fusion: max\n", "search.fusion", "rrf, alpha"),
        ("auth:\n  mode: open\n", "auth.mode", "local, team, hybrid"),
        ("network:\n  mode: wan\n", "network.mode", "localhost, tailscale, lan"),
        (
            "memory:\n  pipelineV2:\n    autonomous:\n      maintenanceMode: fix\n",
            "memory.pipelineV2.autonomous.maintenanceMode",
            "observe, execute",
        ),
    ],
)
def test_enum_value_outside_its_choices_is_an_error(tmp_path: Path, text: str, key: str, choices: str) -> None:
    message = load_error(tmp_path, text)
    assert key in message and f"expected one of {choices}" in message


def test_out_of_range_values_are_errors(tmp_path: Path) -> None:
    assert "agent.yaml:1: port: expected a value <= 65535" in load_error(tmp_path, "port: 70000\n")
    assert "search.alpha: expected a value <= 1" in load_error(tmp_path, "search:\n  alpha: 2\n")
    assert "maxAttempts: expected a value >= 1" in load_error(
        tmp_path, "memory:\n  pipelineV2:\n    maxAttempts: 0\n"
    )


def test_inconsistent_settings_are_errors(tmp_path: Path) -> None:
    message = load_error(tmp_path, "memory:\n  pipelineV2:\n    documentChunkOverlap: 2000\n")
    assert "agent.yaml:3: memory.pipelineV2.documentChunkOverlap" in message
    assert "hints.min" in load_error(tmp_path, "memory:\n  pipelineV2:\n    hints: {max: 1, min: 2}\n")


@pytest.mark.parametrize("text", ["- a\n- b\n", "just a string\n", "42\n"])
def test_top_level_must_be_a_mapping(tmp_path: Path, text: str) -> None:
    message = load_error(tmp_path, text)
    assert "agent.yaml:1" in message and "top level must be a mapping" in message


def test_duplicate_key_is_an_error(tmp_path: Path) -> None:
    assert "agent.yaml:2: port: key appears twice" in load_error(tmp_path, "port: 1\nport: 2\n")


def test_unknown_keys_warn_with_file_line_and_path(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    text = "agent:\n  name: x\nmemory:\n  pipelineV2:\n    shadowMod: true\n"
    with caplog.at_level(logging.WARNING, logger="signet.config"):
        cfg = load(tmp_path, text)
    path = tmp_path / "agent.yaml"
    assert cfg.warnings == (
        f"{path}:1: unknown key agent (ignored)",
        f"{path}:5: unknown key memory.pipelineV2.shadowMod (ignored)",
    )
    assert [r.getMessage() for r in caplog.records] == list(cfg.warnings)
    assert cfg == Config.default(tmp_path)


# --- environment ------------------------------------------------------------------------------


def test_env_overrides_port_and_bind_over_the_file(tmp_path: Path) -> None:
    cfg = load(tmp_path, "port: 4000\nbind: 127.0.0.2\n", env={"SIGNET_PORT": "5001", "SIGNET_BIND": "0.0.0.0"})
    assert (cfg.port, cfg.bind) == (5001, "0.0.0.0")
    assert (load(tmp_path, "port: 4000\n").port) == 4000


@pytest.mark.parametrize("value", ["abc", "0", "70000", "12.5"])
def test_invalid_env_port_names_the_variable(tmp_path: Path, value: str) -> None:
    with pytest.raises(ConfigError, match="SIGNET_PORT") as info:
        Config.load(tmp_path, env={"SIGNET_PORT": value})
    assert repr(value) in str(info.value)


def test_workspace_resolution_prefers_argument_then_env_then_home(tmp_path: Path) -> None:
    env = {"SIGNET_WORKSPACE": str(tmp_path / "from-env"), "HOME": str(tmp_path / "home")}
    assert resolve_workspace(tmp_path / "explicit", env) == tmp_path / "explicit"
    assert resolve_workspace(str(tmp_path / "explicit"), env) == tmp_path / "explicit"
    assert resolve_workspace(None, env) == tmp_path / "from-env"
    assert resolve_workspace(None, {"HOME": str(tmp_path / "home")}) == tmp_path / "home" / ".agents"
    assert resolve_workspace("~/ws", {"HOME": str(tmp_path / "home")}) == tmp_path / "home" / "ws"


def test_load_reads_the_file_of_the_env_workspace(tmp_path: Path) -> None:
    write_config(tmp_path, "port: 4321\n")
    cfg = Config.load(env={"SIGNET_WORKSPACE": str(tmp_path)})
    assert (cfg.workspace, cfg.port) == (tmp_path, 4321)


def test_rendered_file_is_plain_yaml_with_the_seed_spelling() -> None:
    data = yaml.safe_load(render_agent_yaml())
    pipeline = data["memory"]["pipelineV2"]
    assert pipeline["shadowMode"] is False and pipeline["traversal"]["maxHops"] == 2
    assert pipeline["autonomous"]["maintenanceMode"] == "observe"
    assert data["retention"]["tombstoneRetentionMs"] == 30 * DAY_MS
    assert data["embedding"]["base_url"] == "" and data["llm"]["command"] == []


def _dotted_keys(data: dict, prefix: str = "") -> list[str]:
    keys = []
    for key, value in data.items():
        path = f"{prefix}{key}"
        keys.extend(_dotted_keys(value, f"{path}.") if isinstance(value, dict) else [path])
    return keys


def test_docs_describe_every_key() -> None:
    docs = (Path(__file__).parents[1] / "docs" / "configuration.md").read_text(encoding="utf-8")
    keys = _dotted_keys(yaml.safe_load(render_agent_yaml()))
    assert len(keys) > 80
    missing = [key for key in keys if f"| `{key}` |" not in docs]
    assert missing == []


def test_runtime_threads_is_gone_and_an_old_file_naming_it_still_loads(tmp_path: Path) -> None:
    # It was never read (embedding.threads sizes the local model's onnxruntime pool).
    assert "runtime" not in render_agent_yaml()
    cfg = load(tmp_path, "runtime:\n  threads: 4\n")
    assert any("unknown key runtime" in w for w in cfg.warnings), cfg.warnings


def test_memory_default_importance_is_what_a_memory_naming_none_gets(tmp_path: Path) -> None:
    from signet.app import SignetApp

    cfg = load(tmp_path, "memory:\n  defaultImportance: 0.9\nembedding:\n  provider: none\n")
    with SignetApp.open(cfg, embedder=None, llm=None) as app:
        assert app.remember("The office opens at eight").memory.importance == 0.9
        assert app.remember("The office closes at six", importance=0.2).memory.importance == 0.2
        assert app.remember("critical: the alarm code changes monthly").memory.importance == 1.0
