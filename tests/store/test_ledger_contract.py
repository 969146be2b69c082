"""The recall QA ledger's store contract (store/search_telemetry.py LedgerStore), one suite on
both backends: the SQLite store and a real PostgreSQL server (tests/pg_server.py)."""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources

import pytest

from signet.store import search_telemetry
from signet.store.backend import Backend
from signet.store.search_telemetry import LedgerStore

T0, T1, T2 = "2026-11-29T12:00:00.000Z", "2026-11-29T12:00:01.000Z", "2026-11-29T12:00:02.000Z"


@pytest.fixture
def ledger(open_store: Callable[..., Backend]) -> LedgerStore:
    rows = open_store().ledger()
    rows.ensure()
    return rows


def entry(query: str, *, agent: str = "a", project: str | None = "p", hits: int = 1) -> dict:
    results = [{"id": f"m{i}", "score": 0.5, "type": "fact", "content": "x"} for i in range(hits)]
    return {"route": "recall", "agent_id": agent, "session_key": None, "project": project,
            "query": query, "keyword_query": query, "filters_json": {"project": project},
            "method": "hybrid", "result_count": hits, "top_score": 0.5 if hits else None,
            "no_hits": not hits, "duration_ms": 1.5, "timings_json": {"total": 1.5},
            "results_json": results, "sources_json": {"fts": hits}}


def test_rows_come_back_newest_first_as_written(ledger: LedgerStore) -> None:
    first = ledger.record(entry("orchid light"), T0)
    second = ledger.record(entry("nothing here", hits=0), T1)
    rows, total = ledger.list_rows(agent_id=None, project=None, since=None, no_hits=None,
                                   limit=10, offset=0)
    assert total == 2 and [r["id"] for r in rows] == [second, first]
    newest, oldest = rows
    assert (newest["no_hits"], newest["top_score"], newest["results"]) == (True, None, [])
    assert oldest["filters"] == {"project": "p"} and oldest["timings"] == {"total": 1.5}
    assert oldest["results"][0]["id"] == "m0" and oldest["sources"] == {"fts": 1}
    assert (oldest["created_at"], oldest["query"], oldest["no_hits"]) == (T0, "orchid light", False)


def test_filters_scope_and_paging_are_in_the_statement(ledger: LedgerStore) -> None:
    ledger.record(entry("a in p"), T0)
    ledger.record(entry("a in q", project="q", hits=0), T1)
    ledger.record(entry("b in p", agent="b"), T2)

    def queries(**where: object) -> tuple[list[str], int]:
        args = {"agent_id": None, "project": None, "since": None, "no_hits": None, "limit": 10,
                "offset": 0, **where}
        rows, total = ledger.list_rows(**args)  # type: ignore[arg-type]
        return [r["query"] for r in rows], total

    assert queries(agent_id="a") == (["a in q", "a in p"], 2)
    assert queries(agent_id="a", project="p") == (["a in p"], 1)
    assert queries(project="p") == (["b in p", "a in p"], 2)
    assert queries(no_hits=True) == (["a in q"], 1)
    assert queries(no_hits=False, since=T1) == (["b in p"], 1)
    assert queries(limit=1, offset=1) == (["a in q"], 3)
    assert queries(agent_id="nobody") == ([], 0)


def postgres_migration(name: str) -> list[str]:
    text = resources.files("signet.store.postgres").joinpath(f"migrations/{name}").read_text()
    body = "\n".join(line for line in text.splitlines() if not line.startswith("--"))
    return [part.strip() for part in body.split(";") if part.strip()]


def test_rows_from_before_scope_labels_are_seen_only_unscoped(
    open_store: Callable[..., Backend], backend: str
) -> None:
    """Rows written when a row carried the asker's agent (`default` for project-scoped tokens)
    are relabelled as unscoped once: SQLite when the optional table is ensured, PostgreSQL by
    its migration 015 (run again here on the table as it was)."""
    store = open_store()
    rows = store.ledger()
    rows.ensure()
    rows.record(entry("old", agent="default", project="p"), T0)
    with rows.core.transaction() as conn:  # type: ignore[attr-defined]
        if backend == "sqlite":  # the table as an earlier release left it
            conn.execute(f"DROP INDEX {search_telemetry.SCOPE_INDEX}")
        else:
            for statement in postgres_migration("015_scope_labels.sql"):
                conn.execute(statement)
    rows.ensure()
    rows.record(entry("new", agent="default", project="p"), T1)
    rows.ensure()  # once only: the new row keeps its labels
    scoped = rows.list_rows(agent_id="default", project="p", since=None, no_hits=None,
                            limit=10, offset=0)
    every = rows.list_rows(agent_id=None, project=None, since=None, no_hits=None, limit=10,
                           offset=0)
    assert [r["query"] for r in scoped[0]] == ["new"]
    assert [(r["query"], r["agent_id"], r["project"]) for r in every[0]] == [
        ("new", "default", "p"), ("old", "", None)]
