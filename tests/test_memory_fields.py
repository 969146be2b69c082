"""The memory's fields are defined once (signet/types.py: `Memory`, `NewMemory`,
`MODIFIABLE_FIELDS`, `NULLABLE_FIELDS`); every other list of them follows from those or is
checked here against them, so a field added in one place and forgotten in another fails."""

from __future__ import annotations

import typing

from signet.client.wire import MemoryJSON
from signet.daemon.schemas import Changes, MemoryOut, PatchBody, RememberBody
from signet.services.memory_input import MODIFIABLE
from signet.types import MODIFIABLE_FIELDS, NULLABLE_FIELDS, Memory, NewMemory

# Set by the store or by who is asking, never by the body of a remember.
NOT_IN_A_REMEMBER_BODY = {"agent_id", "session_id"}
# A remember body's own controls, not fields of the memory.
REMEMBER_CONTROLS = {"idempotency_key", "graph"}


def _fields(cls: type) -> set[str]:
    return set(cls.__dataclass_fields__)  # type: ignore[attr-defined]


def test_what_modify_accepts_is_one_list() -> None:
    assert MODIFIABLE == MODIFIABLE_FIELDS
    assert set(Changes.model_fields) == set(MODIFIABLE_FIELDS)
    assert set(PatchBody.model_fields) == set(MODIFIABLE_FIELDS) | {"version", "reason"}
    assert set(MODIFIABLE_FIELDS) <= _fields(NewMemory)


def test_the_nullable_fields_are_one_list_of_modifiable_optional_ones() -> None:
    # The HTTP schema lets exactly these be null in a modify (PATCH and the batch share Changes).
    nullable = {name for name, info in Changes.model_fields.items()
                if type(None) in typing.get_args(info.annotation)}
    assert nullable == set(NULLABLE_FIELDS)
    assert set(NULLABLE_FIELDS) <= set(MODIFIABLE_FIELDS)
    hints = typing.get_type_hints(NewMemory)
    for name in NULLABLE_FIELDS:
        assert type(None) in typing.get_args(hints[name]), name


def test_a_remember_body_carries_every_field_of_a_new_memory() -> None:
    assert set(RememberBody.model_fields) - REMEMBER_CONTROLS == (
        _fields(NewMemory) - NOT_IN_A_REMEMBER_BODY
    )


def test_the_wire_shapes_of_a_memory_are_its_fields() -> None:
    assert set(MemoryOut.model_fields) == _fields(Memory)
    assert set(MemoryJSON.__annotations__) == _fields(Memory)
