"""The knowledge graph's store protocol: the graph's statements, on either backend.

The graph's logic (authoring, traversal, dampening, feedback, views, the pipeline's graph
writes, the inline entity linker) calls its statements through `GraphOps`, bound to one
connection: an open write transaction or a reader. `GraphStore` hands them out:
`reading(conn)` (recall passes its own connection, so one recall sees one snapshot) and
`writing()` (one transaction). `SqliteGraph` is here; store/postgres/graph.py is PostgreSQL's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

import numpy as np

from signet.store import graph as graph_sql
from signet.store import graph_read
from signet.store import graph_views as views
from signet.store import history as history_sql
from signet.store import knowledge as know_sql
from signet.store import memories as mem_sql
from signet.store.connection import Connection
from signet.store.db import Store
from signet.store.graph_read import Aspect, Edge, Pin
from signet.store.prefixes import resolve_prefix
from signet.types import Actor, MemoryFilters

__all__ = ["GraphOps", "GraphStore", "SqliteGraph", "SqliteGraphOps"]


class GraphOps(Protocol):
    """The graph's statements on one connection (see the module doc); each is the store/
    function of the same name on SQLite."""

    # -- entities, relations, mentions (store/graph.py) ----------------------------------------
    def upsert_entity(
        self, name: str, *, agent_id: str, now: str, entity_type: str = "unknown"
    ) -> str: ...
    def upsert_relation(
        self, source_id: str, target_id: str, relation_type: str, *, confidence: float, now: str
    ) -> str: ...
    def link_mention(
        self, memory_id: str, entity_id: str, *, mention_text: str | None,
        confidence: float | None, now: str,
    ) -> bool: ...
    def link_known_entities(self, memory_id: str, agent_id: str, content: str, now: str) -> int: ...
    def unlink_memory(self, memory_id: str) -> int: ...
    def entities_of_memory(self, memory_id: str) -> list[graph_sql.EntityRow]: ...

    # -- the knowledge architecture (store/knowledge.py) -----------------------------------------
    def set_entity_details(
        self, entity_id: str, *, entity_type: str | None, description: str | None, now: str
    ) -> None: ...
    def add_alias(self, entity_id: str, alias: str, *, agent_id: str, now: str) -> bool: ...
    def resolve(self, keys: Sequence[str], agent_id: str) -> dict[str, str]: ...
    def common_entities(
        self, ids: Sequence[str], fraction: float, min_memories: int
    ) -> set[str]: ...
    def upsert_relation_mean(
        self, source_id: str, target_id: str, relation_type: str, *, confidence: float,
        strength: float | None, now: str,
    ) -> str: ...
    def upsert_aspect(
        self, entity_id: str, aspect_name: str, *, agent_id: str, description: str | None,
        confidence: float, now: str,
    ) -> str: ...
    def upsert_attribute(
        self, aspect_id: str, entity_id: str, key: str, value: str, *, kind: str,
        confidence: float, source_memory_id: str | None, agent_id: str, now: str,
    ) -> str: ...
    def upsert_dependency(
        self, source_id: str, target_id: str, dependency_type: str, *, strength: float,
        agent_id: str, now: str,
    ) -> str: ...
    def set_pin(
        self, entity_id: str, *, agent_id: str, pin_type: str, weight: float | None,
        reason: str | None, pinned_by: str | None, now: str,
    ) -> None: ...
    def clear_pin(self, entity_id: str, *, agent_id: str) -> bool: ...
    def scale_dependency_weights(
        self, ids: Sequence[str], factor: float, low: float, high: float, now: str
    ) -> int: ...
    def scale_aspect_weights(
        self, ids: Sequence[str], factor: float, low: float, high: float, now: str
    ) -> int: ...
    def aspects_sourced_by(self, memory_id: str) -> list[str]: ...
    def decrement_entity_mentions(self, memory_ids: Sequence[str]) -> dict[str, int]:
        """Before memories are purged (retention): drop their links, count each entity down,
        delete the entities left with none."""
        ...

    # -- the memories the graph touches ----------------------------------------------------------
    def memory_exists(self, memory_id: str) -> bool: ...
    def record_history(
        self, memory_id: str, event: str, actor: Actor, now: str, *, reason: str | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> str: ...
    def allowed_ids(self, ids: Sequence[str], filters: MemoryFilters) -> set[str]: ...

    # -- recall's reads (store/graph_read.py) ------------------------------------------------------
    def pins(self, agent_id: str) -> dict[str, Pin]: ...
    def aspects(self, entity_id: str, limit: int) -> list[Aspect]: ...
    def attribute_memories(self, aspect_id: str, limit: int) -> list[tuple[str, float]]: ...
    def dependency_edges(
        self, entity_id: str, *, min_strength: float, limit: int
    ) -> list[Edge]: ...
    def mention_count(self, entity_id: str) -> int: ...
    def mention_memories(self, entity_id: str, limit: int) -> list[tuple[str, float]]: ...
    def live_ids(self, memory_ids: Sequence[str]) -> set[str]: ...
    def memory_vectors(self, memory_ids: Sequence[str], model: str) -> dict[str, np.ndarray]: ...
    def entities_like(self, tokens: Sequence[str], agent_id: str, limit: int) -> list[str]: ...
    def entity_marker(self, agent_id: str) -> tuple[int, int]: ...
    def canonical_names(self, agent_id: str) -> list[tuple[str, str]]: ...
    def by_mentions(self, entity_ids: Sequence[str], limit: int) -> list[str]: ...
    def relation_neighbours(self, entity_ids: Sequence[str], limit: int) -> list[str]: ...
    def memories_of_entities(self, entity_ids: Sequence[str], limit: int) -> list[str]: ...
    def all_degrees(self, agent_id: str, sample: int = 1000) -> list[int]: ...
    def degrees_of(self, entity_ids: Iterable[str]) -> dict[str, int]: ...
    def entities_by_memory(self, memory_ids: Sequence[str]) -> dict[str, list[str]]: ...

    # -- the views (store/graph_views.py) ----------------------------------------------------------
    def list_entities(
        self, *, agent_id: str, search: str | None, limit: int, offset: int
    ) -> tuple[list[dict[str, Any]], int]: ...
    def get_entity(self, entity_id: str) -> dict[str, Any] | None: ...
    def entity_by_prefix(self, ref: str) -> str: ...
    def aliases(self, entity_id: str) -> list[str]: ...
    def aspects_with_attributes(self, entity_id: str) -> list[dict[str, Any]]: ...
    def dependencies(self, entity_id: str) -> list[dict[str, Any]]: ...
    def memories(self, entity_id: str, limit: int) -> list[dict[str, Any]]: ...
    def communities(self, agent_id: str) -> list[dict[str, Any]]: ...
    def community_ids(self, ref: str, agent_id: str | None) -> list[str]: ...
    def stats(self, agent_id: str) -> dict[str, int]: ...
    def dependency_weights(self, agent_id: str) -> list[tuple[str, str, float]]: ...
    def entity_names(self, ids: list[str]) -> dict[str, str]: ...
    def replace_communities(
        self, agent_id: str, found: list[dict[str, Any]], now: str
    ) -> None: ...


class GraphStore(Protocol):
    """Where the graph's statements run: a reader, or one write transaction."""

    backend: str

    def reading(self, conn: Any = None) -> AbstractContextManager[GraphOps]:
        """The statements on a reader; `conn`: the connection the caller already reads on
        (SQLite recall's), used when it belongs to this store's backend."""
        ...

    def writing(self) -> AbstractContextManager[GraphOps]:
        """The statements in one write transaction, committed when the block ends."""
        ...


# -- SQLite: the store/ functions, bound to a connection --------------------------------------------

P = ParamSpec("P")
R = TypeVar("R")


def _bound(function: Callable[Concatenate[Connection, P], R]) -> Callable[Concatenate[Any, P], R]:
    """A store/ function `f(conn, ...)` as a method: `ops.f(...)` is `f(ops.conn, ...)`."""

    def method(self: Any, *args: P.args, **kwargs: P.kwargs) -> R:
        return function(self.conn, *args, **kwargs)

    method.__name__ = function.__name__
    method.__doc__ = function.__doc__
    return method


def _memory_exists(conn: Connection, memory_id: str) -> bool:
    return mem_sql.get(conn, memory_id) is not None


def _entity_by_prefix(conn: Connection, ref: str) -> str:
    return resolve_prefix(conn, "entities", ref, noun="entity")


class SqliteGraphOps:
    """GraphOps on a SQLite connection: store/graph*.py and store/knowledge.py, unchanged."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    upsert_entity = _bound(graph_sql.upsert_entity)
    upsert_relation = _bound(graph_sql.upsert_relation)
    link_mention = _bound(graph_sql.link_mention)
    link_known_entities = _bound(graph_sql.link_known_entities)
    unlink_memory = _bound(graph_sql.unlink_memory)
    entities_of_memory = _bound(graph_sql.entities_of_memory)
    set_entity_details = _bound(know_sql.set_entity_details)
    add_alias = _bound(know_sql.add_alias)
    resolve = _bound(know_sql.resolve)
    common_entities = _bound(know_sql.common_entities)
    upsert_relation_mean = _bound(know_sql.upsert_relation_mean)
    upsert_aspect = _bound(know_sql.upsert_aspect)
    upsert_attribute = _bound(know_sql.upsert_attribute)
    upsert_dependency = _bound(know_sql.upsert_dependency)
    set_pin = _bound(know_sql.set_pin)
    clear_pin = _bound(know_sql.clear_pin)
    scale_dependency_weights = _bound(know_sql.scale_dependency_weights)
    scale_aspect_weights = _bound(know_sql.scale_aspect_weights)
    aspects_sourced_by = _bound(know_sql.aspects_sourced_by)
    decrement_entity_mentions = _bound(know_sql.decrement_entity_mentions)
    memory_exists = _bound(_memory_exists)
    record_history = _bound(history_sql.record)
    allowed_ids = _bound(mem_sql.allowed_ids)
    pins = _bound(graph_read.pins)
    aspects = _bound(graph_read.aspects)
    attribute_memories = _bound(graph_read.attribute_memories)
    dependency_edges = _bound(graph_read.dependency_edges)
    mention_count = _bound(graph_read.mention_count)
    mention_memories = _bound(graph_read.mention_memories)
    live_ids = _bound(graph_read.live_ids)
    memory_vectors = _bound(graph_read.memory_vectors)
    entities_like = _bound(graph_read.entities_like)
    entity_marker = _bound(graph_read.entity_marker)
    canonical_names = _bound(graph_read.canonical_names)
    by_mentions = _bound(graph_read.by_mentions)
    relation_neighbours = _bound(graph_read.relation_neighbours)
    memories_of_entities = _bound(graph_read.memories_of_entities)
    all_degrees = _bound(graph_read.all_degrees)
    degrees_of = _bound(graph_read.degrees_of)
    entities_by_memory = _bound(graph_read.entities_by_memory)
    list_entities = _bound(views.list_entities)
    get_entity = _bound(views.get_entity)
    entity_by_prefix = _bound(_entity_by_prefix)
    aliases = _bound(views.aliases)
    aspects_with_attributes = _bound(views.aspects_with_attributes)
    dependencies = _bound(views.dependencies)
    memories = _bound(views.memories)
    communities = _bound(views.communities)
    community_ids = _bound(views.community_ids)
    stats = _bound(views.stats)
    dependency_weights = _bound(views.dependency_weights)
    entity_names = _bound(views.entity_names)
    replace_communities = _bound(views.replace_communities)


class SqliteGraph:
    """GraphStore on the SQLite Store: its reader, or a write transaction on its one writer
    (a savepoint inside a transaction the caller holds, as every store/ function runs)."""

    backend = "sqlite"

    def __init__(self, store: Store) -> None:
        self.store = store

    @contextmanager
    def reading(self, conn: Any = None) -> Iterator[GraphOps]:
        yield SqliteGraphOps(conn if conn is not None else self.store.reader())

    @contextmanager
    def writing(self) -> Iterator[GraphOps]:
        with self.store.write_tx() as conn:
            yield SqliteGraphOps(conn)
