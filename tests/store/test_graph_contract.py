"""The graph store contract (store/graph_store.py): one suite on both backends, a real SQLite
file and a real PostgreSQL database (tests/pg_server.py).

Each test writes through `core.graph().writing()` and reads back through `reading()`, the way
the graph service, the pipeline's graph persistence and recall's graph channels do; memories
come from the core seam's insert, which runs the inline entity linker in its transaction.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np
import pytest

from signet.errors import InvalidInput, NotFound
from signet.normalize import normalize_content
from signet.store.backend import Backend, CoreStore
from signet.store.memory_ops import MemoryEdit
from signet.types import Actor, MemoryFilters, NewMemory

T0 = "2026-11-29T12:00:00.000Z"
T1 = "2026-11-29T12:00:01.000Z"
ACTOR = Actor(name="tester", type="operator")
MODEL = "unit-model"


@pytest.fixture
def core(open_store: Callable[..., Backend]) -> CoreStore:
    return open_store().core


def remember(core: CoreStore, content: str, *, agent_id: str = "default",
             vector: np.ndarray | None = None) -> str:
    norm = normalize_content(content)
    written = core.write_memory(
        NewMemory(content=content, agent_id=agent_id), storage=norm.storage,
        normalized=norm.normalized, content_hash=norm.content_hash, actor=ACTOR, now=T0,
        vector=vector, model=MODEL if vector is not None else None,
    ).result
    assert written is not None
    return written.id


def test_entities_are_unique_per_agent_by_canonical_name(core: CoreStore) -> None:
    with core.graph().writing() as g:
        first = g.upsert_entity("Ford Mustang", agent_id="default", now=T0)
        again = g.upsert_entity("ford-mustang", agent_id="default", now=T1)
        other_agent = g.upsert_entity("Ford Mustang", agent_id="other", now=T0)
        rel = g.upsert_relation(first, other_agent, " Drives ", confidence=0.4, now=T0)
        assert g.upsert_relation(first, other_agent, "drives", confidence=0.8, now=T1) == rel
    assert again == first and other_agent != first
    with core.graph().reading() as g:
        listed, total = g.list_entities(agent_id="default", search=None, limit=10, offset=0)
        assert total == 1 and listed[0]["name"] == "Ford Mustang"
        assert listed[0]["canonical_name"] == "ford mustang" and listed[0]["pinned"] is None
        assert g.resolve(["ford mustang", "nothing"], "default") == {"ford mustang": first}
        assert g.relation_neighbours([first], 10) == [other_agent]
        assert g.stats("default")["relations"] == 1


def test_mentions_count_each_link_once_and_the_linker_links_known_names(core: CoreStore) -> None:
    with core.graph().writing() as g:
        alice = g.upsert_entity("Alice", agent_id="default", now=T0)
        g.upsert_entity("Kubernetes", agent_id="other", now=T0)
    # The inline linker runs in the insert's transaction: existing entities of the same agent.
    memory = remember(core, "Met Alice to talk about Kubernetes upgrades")
    with core.graph().reading() as g:
        assert [e.id for e in g.entities_of_memory(memory)] == [alice]
        assert g.mention_count(alice) == 1
        assert g.mention_memories(alice, 10) == [(memory, 0.5)]
        assert g.memories_of_entities([alice], 10) == [memory]
        assert g.entities_by_memory([memory]) == {memory: [alice]}
    with core.graph().writing() as g:
        assert not g.link_mention(memory, alice, mention_text="Alice", confidence=1.0, now=T1)
    with core.graph().reading() as g:
        assert g.mention_count(alice) == 1
    # New content names no one: the links go, the count follows.
    core.update_memory(memory, MemoryEdit({"content": "Nothing named here"}, actor=ACTOR, now=T1))
    with core.graph().reading() as g:
        assert g.entities_of_memory(memory) == [] and g.mention_count(alice) == 0


def test_aliases_aspects_attributes_and_dependencies(core: CoreStore) -> None:
    memory = remember(core, "the car is blue")
    with core.graph().writing() as g:
        car = g.upsert_entity("Mustang", agent_id="default", now=T0)
        user = g.upsert_entity("user", agent_id="default", now=T0)
        assert g.add_alias(car, "my car", agent_id="default", now=T0)
        assert not g.add_alias(car, "My Car", agent_id="default", now=T0)
        aspect = g.upsert_aspect(car, "looks", agent_id="default", description=None,
                                 confidence=0.9, now=T0)
        first = g.upsert_attribute(aspect, car, "colour", "blue", kind="attribute",
                                   confidence=0.5, source_memory_id=memory, agent_id="default",
                                   now=T0)
        assert g.upsert_attribute(aspect, car, "colour", "blue", kind="attribute",
                                  confidence=0.7, source_memory_id=None, agent_id="default",
                                  now=T1) == first
        dep = g.upsert_dependency(user, car, "owns", strength=0.6, agent_id="default", now=T0)
        g.upsert_dependency(user, car, "owns", strength=0.4, agent_id="default", now=T1)
        assert g.scale_dependency_weights([dep], 10.0, 0.2, 3.0, T1) == 1
        g.set_entity_details(car, entity_type="vehicle", description=None, now=T1)
        g.record_history(memory, "none", ACTOR, T1, reason="graph", metadata={"graph": {}})
    with core.graph().reading() as g:
        assert g.resolve(["my car"], "default") == {"my car": car}
        assert g.aliases(car) == ["my car"]
        [found] = g.aspects(car, 5)
        assert (found.id, found.name, found.weight) == (aspect, "looks", 1.0)
        assert g.attribute_memories(aspect, 5) == [(memory, 0.7)]
        assert g.aspects_sourced_by(memory) == [aspect]
        [edge] = g.dependency_edges(car, min_strength=0.1, limit=5)
        assert (edge.id, edge.other, edge.strength, edge.traversal_weight) == (dep, user, 0.6, 3.0)
        assert g.dependency_edges(car, min_strength=0.7, limit=5) == []
        assert g.dependency_weights("default") == [(user, car, pytest.approx(1.8))]
        detail = g.get_entity(car)
        assert detail is not None and detail["entity_type"] == "vehicle"
        [shown] = g.aspects_with_attributes(car)
        assert shown["attributes"][0]["value"] == "blue"
        assert [d["direction"] for d in g.dependencies(car)] == ["in"]
        assert g.degrees_of([car, user]) == {car: 1, user: 1}
    assert [h.event for h in core.history(memory)][-1] == "none"


def test_pins_communities_and_lookups(core: CoreStore) -> None:
    with core.graph().writing() as g:
        a = g.upsert_entity("Alpha", agent_id="default", now=T0)
        b = g.upsert_entity("Beta", agent_id="default", now=T0)
        g.set_pin(a, agent_id="default", pin_type="suppress", weight=2.0, reason=None,
                  pinned_by="tester", now=T0)
        g.replace_communities("default", [{"id": "c1", "label": "Greek Letters",
                                           "members": [a, b], "modularity": 0.5,
                                           "quality": "good"}], T0)
    with core.graph().reading() as g:
        pins = g.pins("default")
        assert pins[a].pin_type == "suppress" and pins[a].weight == 2.0
        entity = g.get_entity(a)
        assert entity is not None and entity["pinned"] == "suppress"
        assert entity["pin_weight"] == 2.0 and entity["community_id"] == "c1"
        assert g.community_ids("greek letters", "default") == ["c1"]
        assert g.community_ids("c1", None) == ["c1"]
        assert g.community_ids("greek letters", "other") == []
        assert g.communities("default")[0]["member_ids"] == [a, b]
        assert g.entity_names([a, b]) == {a: "Alpha", b: "Beta"}
        assert g.entity_by_prefix(a[:12]) == a
        with pytest.raises(NotFound):
            g.entity_by_prefix("ffffffffffff" if not a.startswith("ffff") else "000000000000")
        assert g.entity_by_prefix("Alpha") == "Alpha"  # not a prefix: returned for a name lookup
        marker = g.entity_marker("default")
    with core.graph().writing() as g:
        assert g.clear_pin(a, agent_id="default")
        g.upsert_entity("Gamma", agent_id="default", now=T1)
    with core.graph().reading() as g:
        assert g.pins("default") == {} and g.entity_marker("default") != marker
        assert sorted(g.entities_like(["alp", "gam"], "default", 10)) == sorted(
            [a, g.resolve(["gamma"], "default")["gamma"]])
        assert len(g.all_degrees("default")) == 3 and g.all_degrees("other") == []


def test_a_sampled_degree_list_takes_the_agents_rows_among_anothers(core: CoreStore) -> None:
    """Above `sample` entities the degrees are a strided sample of the agent's own: rows
    interleaved one in two with another agent's must not all fall outside the stride."""
    with core.graph().writing() as g:
        for n in range(40):
            g.upsert_entity(f"Mine {n}", agent_id="default", now=T0)
            g.upsert_entity(f"Theirs {n}", agent_id="other", now=T0)
    with core.graph().reading() as g:
        for agent in ("default", "other"):
            assert 10 <= len(g.all_degrees(agent, sample=20)) <= 40, agent


def test_scope_reads_filters_and_vectors(core: CoreStore) -> None:
    vector = np.array([0.6, 0.8], dtype=np.float32)
    mine = remember(core, "kept", vector=vector)
    theirs = remember(core, "other agent's", agent_id="other")
    gone = remember(core, "forgotten")
    core.forget(gone, actor=ACTOR, now=T1)
    with core.graph().reading() as g:
        assert g.live_ids([mine, theirs, gone, "unknown"]) == {mine, theirs}
        assert g.allowed_ids([mine, theirs, gone], MemoryFilters(agent_id="default")) == {mine}
        stored = g.memory_vectors([mine, theirs], MODEL)
        assert list(stored) == [mine] and np.allclose(stored[mine], vector)
        assert g.memory_exists(mine) and not g.memory_exists("unknown")


def test_a_failed_write_leaves_nothing(core: CoreStore) -> None:
    with pytest.raises(InvalidInput), core.graph().writing() as g:
        g.upsert_entity("Orphan", agent_id="default", now=T0)
        raise InvalidInput("the caller refused the rest")
    with core.graph().reading() as g:
        assert g.resolve(["orphan"], "default") == {}


def test_retention_decrement_drops_links_and_orphans(core: CoreStore) -> None:
    with core.graph().writing() as g:
        alice = g.upsert_entity("Alice", agent_id="default", now=T0)
        bob = g.upsert_entity("Bob", agent_id="default", now=T0)
        g.upsert_dependency(alice, bob, "knows", strength=0.5, agent_id="default", now=T0)
    first = remember(core, "Alice and Bob met")
    second = remember(core, "Bob again")
    with core.graph().writing() as g:
        counts = g.decrement_entity_mentions([first, first])
    assert counts == {"links": 2, "entities": 2, "orphans": 1}
    with core.graph().reading() as g:
        assert g.resolve(["alice", "bob"], "default") == {"bob": bob}  # Alice had no other
        assert g.mention_count(bob) == 1 and g.entities_by_memory([second]) == {second: [bob]}
        assert g.dependency_edges(bob, min_strength=0.0, limit=5) == []  # gone with Alice


def test_two_handles_writing_the_same_attribute_at_once_make_one_row(
    core: CoreStore, open_store: Callable[..., Backend]
) -> None:
    """What two daemons do: each in its own transaction, at the same moment (on SQLite the one
    writer makes the two transactions take turns)."""
    with core.graph().writing() as g:
        car = g.upsert_entity("Mustang", agent_id="default", now=T0)
        aspect = g.upsert_aspect(car, "looks", agent_id="default", description=None,
                                 confidence=0.9, now=T0)

    def write(store: CoreStore, barrier: threading.Barrier | None) -> None:
        with store.graph().writing() as g:
            if barrier is not None:
                barrier.wait()
            g.upsert_attribute(aspect, car, "colour", "blue", kind="attribute", confidence=0.5,
                               source_memory_id=None, agent_id="default", now=T1)

    if core.backend == "sqlite":
        write(core, None)
        write(core, None)
    else:
        other = open_store().core
        barrier = threading.Barrier(2, timeout=10)
        threads = [threading.Thread(target=write, args=(s, barrier)) for s in (core, other)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=20)
    with core.graph().reading() as g:
        [shown] = g.aspects_with_attributes(car)
        assert len(shown["attributes"]) == 1


def test_common_entities_and_names_over_aliases(core: CoreStore) -> None:
    ids = [remember(core, f"note {i} about Alice") for i in range(3)]
    with core.graph().writing() as g:
        alice = g.upsert_entity("Alice", agent_id="default", now=T0)
        bob = g.upsert_entity("Bob", agent_id="default", now=T0)
        for memory_id in ids:
            g.link_mention(memory_id, alice, mention_text="Alice", confidence=1.0, now=T0)
        g.add_alias(bob, "alice", agent_id="default", now=T0)  # a name wins over an alias
        g.add_alias(bob, "bobby", agent_id="default", now=T0)
    with core.graph().reading() as g:
        assert g.resolve(["alice", "bobby", "carol"], "default") == {"alice": alice, "bobby": bob}
        assert g.common_entities([alice, bob], 0.5, 3) == {alice}  # 3 of 3 memories
        assert g.common_entities([alice, bob], 0.5, 4) == set()  # too few memories to judge
        assert g.common_entities([alice], 1.0, 1) == set()  # not more than all of them
