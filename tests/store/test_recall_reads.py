"""The recall reads contract (store/recall_reads.py): one suite on both backends.

`CoreStore.recall_reads` is what the one Recaller (recall/hybrid.py) reads on a store: SQLite's
store/ functions, PostgreSQL's tsvector BM25, pgvector search, source table and neighbour probes
(store/postgres/recall_reads.py). Each test states what recall relies on, the same on both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
import pytest

from signet.normalize import normalize_content
from signet.store.backend import Backend, CoreStore
from signet.store.recall_reads import RecallReader
from signet.types import Actor, MemoryFilters, NewMemory

T0 = "2026-11-29T12:00:00.000Z"
MODEL = "unit-model"
ALL = MemoryFilters()


@pytest.fixture
def core(open_store: Callable[..., Backend]) -> CoreStore:
    return open_store().core


def put(core: CoreStore, content: str, *, vector: np.ndarray | None = None, **fields: object) -> str:
    norm = normalize_content(content)
    memory_id, _ = core.insert_memory(
        NewMemory(content=content, **fields),  # type: ignore[arg-type]
        storage=norm.storage, normalized=norm.normalized, content_hash=norm.content_hash,
        actor=Actor(name="t"), now=T0, vector=vector, model=MODEL if vector is not None else None,
    )
    return memory_id


def read(core: CoreStore) -> Iterator[RecallReader]:
    with core.recall_reads(MODEL).reader() as reader:
        yield reader


def reader_of(core: CoreStore) -> RecallReader:
    return next(iter(read(core)))


def ids(ranking: list[tuple[str, float]]) -> list[str]:
    return [m for m, _ in ranking]


def test_lexical_ranks_by_bm25(core: CoreStore) -> None:
    """Rare words outweigh common ones, a repeated word counts more (saturating), a shorter
    text ahead of a longer one at equal counts, tags at half the weight of content."""
    for i in range(6):
        put(core, f"note {i} about the garden and the weather")
    rare = put(core, "the garden kiln fired")
    common = put(core, "the garden garden garden was watered today")
    short = put(core, "kiln repaired")
    long = put(core, "kiln repaired after a long and tiring week of waiting for parts")
    tagged = put(core, "a note", tags=("kiln",))
    with core.recall_reads(MODEL).reader() as reader:
        assert ids(reader.lexical("weather fired", ALL, 3))[0] == rare
        assert ids(reader.lexical("garden", ALL, 10))[0] == common
        assert ids(reader.lexical("kiln repaired", ALL, 2)) == [short, long]
        found = ids(reader.lexical("kiln", ALL, 10))
        assert found.index(tagged) > found.index(short)
        assert reader.lexical("", ALL, 5) == [] and reader.lexical("kiln", ALL, 0) == []


def test_lexical_stems_filters_and_deleted(core: CoreStore) -> None:
    painted = put(core, "Melanie painted a lake sunrise", project="art")
    put(core, "Melanie paints again", project="home")
    with core.recall_reads(MODEL).reader() as reader:
        assert ids(reader.lexical("paintings", MemoryFilters(project="art"), 5)) == [painted]
    core.forget(painted, actor=Actor(name="t"), now=T0)
    with core.recall_reads(MODEL).reader() as reader:
        assert painted not in ids(reader.lexical("painted sunrise", ALL, 5))
        assert reader.allowed_ids([painted], ALL) == set()
        assert reader.memories([painted])[painted].is_deleted


def test_term_idf_weighs_rare_terms_higher(core: CoreStore) -> None:
    for i in range(5):
        put(core, f"weather report {i}")
    put(core, "the kiln is hot")
    with core.recall_reads(MODEL).reader() as reader:
        idf = reader.term_idf(["weather", "kiln", "zeppelin"], ALL)
    assert idf["zeppelin"] > idf["kiln"] > idf["weather"] > 0


def test_whole_sources_are_ranked_and_followed(core: CoreStore) -> None:
    """A source of two or more live members is ranked as one document over their joined text;
    a source of one is not; forgetting a member updates the source."""
    first = put(core, "my Ford Mustang needs service", source_id="s1")
    second = put(core, "coupons at Target every week", source_id="s1")
    lone = put(core, "Mustang coupons galore", source_id="s2")
    put(core, "unrelated words here", source_id="s3")
    put(core, "more unrelated words", source_id="s3")
    with core.recall_reads(MODEL).reader() as reader:
        assert reader.sources_ranked(ALL)
        hits = reader.sources("Mustang coupons", ALL, 5)
        assert [h.source_id for h in hits] == ["s1"]
        keys = reader.source_keys([first, second, lone])
        assert set(keys) == {first, second} and keys[first][2] == "s1"
        assert reader.source_representatives(hits, ALL) == {hits[0].key: first}
    core.forget(first, actor=Actor(name="t"), now=T0)
    with core.recall_reads(MODEL).reader() as reader:
        assert reader.sources("Mustang coupons", ALL, 5) == []
        assert reader.source_keys([second]) == {}


def test_neighbours_are_the_adjacent_live_turns_close_in_time(core: CoreStore) -> None:
    question = put(core, "Did you go to the pottery class?", session_id="c1",
                   event_at="2023-05-08T13:56:00")
    between = put(core, "hold on", session_id="c1", event_at="2023-05-08T13:57:00")
    answer = put(core, "Yes, last week!", session_id="c1", event_at="2023-05-08T13:58:00")
    later = put(core, "Next month again", session_id="c1", event_at="2023-06-20T09:00:00")
    loose = put(core, "A note of its own", event_at="2023-05-08T13:58:00")
    core.forget(between, actor=Actor(name="t"), now=T0)
    with core.recall_reads(MODEL).reader() as reader:
        links = reader.neighbours([question, answer, loose], same_project=False)
    assert links == {question: [answer], answer: [question]}
    assert later not in links


def test_nearest_within_filters(core: CoreStore) -> None:
    axis = np.eye(4, dtype=np.float32)
    near = put(core, "near one", vector=axis[0], project="p")
    other = put(core, "near other", vector=(axis[0] + 0.1 * axis[1]) / np.linalg.norm(
        axis[0] + 0.1 * axis[1]), project="q")
    put(core, "far", vector=axis[2], project="p")
    reads = core.recall_reads(MODEL)
    assert reads.searches_vectors and not core.recall_reads(None).searches_vectors
    with reads.reader() as reader:
        assert ids(reader.nearest(axis[0], ALL, 2, 0.0)) == [near, other]
        assert ids(reader.nearest(axis[0], MemoryFilters(project="q"), 2, 0.0)) == [other]
        assert ids(reader.nearest(axis[0], ALL, 5, 0.5)) == [near, other]
        stored = reader.vectors([near], MODEL)
    assert np.allclose(stored[near], axis[0])
