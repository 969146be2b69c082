"""Keyword recall: any text is a valid query, filters apply, deleted rows never come back."""

from __future__ import annotations

import pytest

from signet.app import SignetApp
from signet.errors import InvalidInput
from signet.types import MemoryFilters, RecallQuery


@pytest.fixture
def filled(app: SignetApp) -> SignetApp:
    app.remember("Alice maintains the billing service", who="alice", project="billing", tags=["team"])
    app.remember("Bob maintains the search service", who="bob", project="search", importance=0.9)
    app.remember("The billing service bills monthly", project="billing", type="decision")
    return app


@pytest.mark.parametrize(
    "query",
    ['"unbalanced', "AND OR NOT", "NEAR(billing", "*", "-billing", "billing:service", "^^^", "(", ")"],
)
def test_any_text_is_a_valid_query(filled: SignetApp, query: str) -> None:
    filled.recall(RecallQuery(query, mode="keyword"))


def test_only_punctuation_returns_nothing(filled: SignetApp) -> None:
    assert filled.recall(RecallQuery("?!... ---", mode="keyword")).hits == ()


def test_long_query_is_cut_not_refused(filled: SignetApp) -> None:
    response = filled.recall(RecallQuery("billing " * 20_000, mode="keyword"))
    assert response.hits


def test_limits_are_checked(filled: SignetApp) -> None:
    for limit in (0, 10_000):
        with pytest.raises(InvalidInput, match="limit"):
            filled.recall(RecallQuery("billing", limit=limit))


def test_bm25_ranks_and_filters_apply(filled: SignetApp) -> None:
    hits = filled.recall(RecallQuery("billing service", mode="keyword")).hits
    assert {h.memory.project for h in hits} >= {"billing"}
    assert hits[0].evidence.lexical is not None and hits[0].evidence.lexical_rank == 1
    only_bob = filled.recall(
        RecallQuery("maintains service", mode="keyword", filters=MemoryFilters(who="bob"))
    ).hits
    assert [h.memory.who for h in only_bob] == ["bob"]
    tagged = filled.recall(
        RecallQuery("maintains", mode="keyword", filters=MemoryFilters(tags=("team",)))
    ).hits
    assert [h.memory.who for h in tagged] == ["alice"]
    important = filled.recall(
        RecallQuery("maintains", mode="keyword", filters=MemoryFilters(importance_min=0.8))
    ).hits
    assert [h.memory.who for h in important] == ["bob"]
    decisions = filled.recall(
        RecallQuery("billing", mode="keyword", filters=MemoryFilters(type="decision"))
    ).hits
    assert [h.memory.type for h in decisions] == ["decision"]


def test_recall_records_access_only_when_the_caller_used_the_results(filled: SignetApp) -> None:
    """Being returned by a search is not an access (issue 11); a caller that used the
    results (an injection the agent consumed) asks for one with touch=True."""
    hit = filled.recall(RecallQuery("search service", mode="keyword", limit=1)).hits[0]
    assert filled.get(hit.memory.id).access_count == 0
    filled.recall(RecallQuery("search service", mode="keyword", limit=1, touch=True))
    assert filled.get(hit.memory.id).access_count == 0  # recorded, not written by recall
    assert filled.flush_accesses() == 1
    memory = filled.get(hit.memory.id)
    assert memory.access_count == 1 and memory.last_accessed is not None


def test_response_carries_timings_per_stage(filled: SignetApp) -> None:
    response = filled.recall(RecallQuery("billing"))
    assert {"lexical", "semantic", "fuse", "total"} <= set(response.timings_ms)
    data = response.to_dict()
    assert data["meta"]["count"] == len(data["results"])
