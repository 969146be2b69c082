"""Extraction: prompt, strict-but-forgiving validation, and the one LLM call."""

from __future__ import annotations

import json
from typing import Any

import pytest

from fakes.scripted_llm import ScriptedLLM
from signet.errors import BadResponse
from signet.pipeline.extraction import (
    MAX_INPUT_CHARS,
    ExtractedEntity,
    ExtractedFact,
    Extraction,
    build_extraction_prompt,
    extract,
    parse_extraction,
)

GOOD = {
    "facts": [
        {
            "content": "The user prefers dark mode in every editor",
            "type": "preference",
            "confidence": 0.9,
        },
        {"content": "The user moved to Lisbon in March 2024", "type": "fact", "confidence": 0.8},
    ],
    "entities": [
        {"source": "user", "relationship": "lives_in", "target": "Lisbon", "confidence": 0.8}
    ],
}


def test_a_well_formed_reply_parses_without_warnings() -> None:
    result = parse_extraction(json.dumps(GOOD))
    assert result == Extraction(
        facts=(
            ExtractedFact("The user prefers dark mode in every editor", "preference", 0.9),
            ExtractedFact("The user moved to Lisbon in March 2024", "fact", 0.8),
        ),
        entities=(ExtractedEntity("user", "lives_in", "Lisbon", 0.8),),
        warnings=(),
    )


FACT_CASES: list[tuple[str, Any, ExtractedFact | None, str | None]] = [
    (
        "unknown type becomes fact",
        {"content": "The user owns a Ford Mustang", "type": "opinion", "confidence": 0.7},
        ExtractedFact("The user owns a Ford Mustang", "fact", 0.7),
        "unknown type",
    ),
    (
        "type is case-insensitive",
        {"content": "The user decided to use uv", "type": " Decision ", "confidence": 0.7},
        ExtractedFact("The user decided to use uv", "decision", 0.7),
        None,
    ),
    (
        "confidence above one is clamped",
        {"content": "The user owns a Ford Mustang", "confidence": 85},
        ExtractedFact("The user owns a Ford Mustang", "fact", 1.0),
        "clamped",
    ),
    (
        "negative confidence is clamped",
        {"content": "The user owns a Ford Mustang", "confidence": -0.2},
        ExtractedFact("The user owns a Ford Mustang", "fact", 0.0),
        "clamped",
    ),
    (
        "text confidence defaults",
        {"content": "The user owns a Ford Mustang", "confidence": "high"},
        ExtractedFact("The user owns a Ford Mustang", "fact", 0.5),
        "not a number",
    ),
    (
        "boolean confidence defaults",
        {"content": "The user owns a Ford Mustang", "confidence": True},
        ExtractedFact("The user owns a Ford Mustang", "fact", 0.5),
        "not a number",
    ),
    (
        "missing confidence defaults",
        {"content": "The user owns a Ford Mustang", "type": "fact"},
        ExtractedFact("The user owns a Ford Mustang", "fact", 0.5),
        "not a number",
    ),
    (
        "numeric string confidence is read",
        {"content": "The user owns a Ford Mustang", "confidence": "0.75"},
        ExtractedFact("The user owns a Ford Mustang", "fact", 0.75),
        None,
    ),
    ("empty content dropped", {"content": "  ", "confidence": 0.9}, None, "too short"),
    ("short content dropped", {"content": "ok", "confidence": 0.9}, None, "too short"),
    ("non-string content dropped", {"content": 42, "confidence": 0.9}, None, "too short"),
    ("not an object dropped", 17, None, "not an object"),
    (
        "whitespace collapsed, unknown keys ignored",
        {"content": " The user\n owns  a Ford ", "confidence": 1, "source": "chat", "x": [1]},
        ExtractedFact("The user owns a Ford", "fact", 1.0),
        None,
    ),
    (
        "a bare string is a fact",
        "The user owns a Ford Mustang",
        ExtractedFact("The user owns a Ford Mustang", "fact", 0.5),
        "not a number",
    ),
    (
        "alias key 'fact'",
        {"fact": "The user owns a Ford Mustang", "confidence": 0.6},
        ExtractedFact("The user owns a Ford Mustang", "fact", 0.6),
        None,
    ),
]


@pytest.mark.parametrize(
    ("item", "expected", "warning"), [c[1:] for c in FACT_CASES], ids=[c[0] for c in FACT_CASES]
)
def test_fact_validation(item: Any, expected: ExtractedFact | None, warning: str | None) -> None:
    result = parse_extraction(json.dumps({"facts": [item]}))
    assert result.facts == ((expected,) if expected else ())
    if warning is None:
        assert result.warnings == ()
    else:
        assert len(result.warnings) == 1 and warning in result.warnings[0]
        assert result.warnings[0].startswith("fact 0")


ENTITY_CASES: list[tuple[str, Any, ExtractedEntity | None]] = [
    (
        "alias 'relation'",
        {"source": "user", "relation": "owns", "target": "Ford Mustang", "confidence": 0.6},
        ExtractedEntity("user", "owns", "Ford Mustang", 0.6),
    ),
    ("missing target", {"source": "user", "relationship": "owns", "confidence": 0.6}, None),
    ("blank source", {"source": " ", "relationship": "owns", "target": "x", "confidence": 1}, None),
    ("not an object", ["user", "owns", "car"], None),
]


@pytest.mark.parametrize(
    ("item", "expected"), [c[1:] for c in ENTITY_CASES], ids=[c[0] for c in ENTITY_CASES]
)
def test_entity_validation(item: Any, expected: ExtractedEntity | None) -> None:
    result = parse_extraction(json.dumps({"facts": [], "entities": [item]}))
    assert result.entities == ((expected,) if expected else ())
    assert (result.warnings == ()) is (expected is not None)


def test_caps_keep_the_first_twenty_facts_and_fifty_entities() -> None:
    facts = [{"content": f"Fact number {i} about the user", "confidence": 0.9} for i in range(25)]
    entities = [
        {"source": "user", "relationship": "knows", "target": f"Person {i}", "confidence": 0.5}
        for i in range(60)
    ]
    result = parse_extraction(json.dumps({"facts": facts, "entities": entities}))
    assert len(result.facts) == 20 and result.facts[-1].content == "Fact number 19 about the user"
    assert len(result.entities) == 50 and result.entities[-1].target == "Person 49"
    assert "dropped 5 facts over the cap of 20" in result.warnings
    assert "dropped 10 entities over the cap of 50" in result.warnings


def test_invalid_facts_do_not_count_against_the_cap() -> None:
    facts = [{"content": "x"}] * 3 + [
        {"content": f"Fact number {i} about the user", "confidence": 0.9} for i in range(20)
    ]
    result = parse_extraction(json.dumps({"facts": facts}))
    assert len(result.facts) == 20 and len(result.warnings) == 3


@pytest.mark.parametrize(
    "reply",
    [
        '{"memories": [{"content": "The user owns a Ford Mustang", "confidence": 0.9}]}',
        '[{"content": "The user owns a Ford Mustang", "confidence": 0.9}]',
        '<think>ok</think>```json\n{"facts": [{"content": "The user owns a Ford Mustang", '
        '"confidence": 0.9,},]}\n```',
    ],
    ids=["memories key", "bare list", "think, fence, trailing commas"],
)
def test_alternative_shapes_are_accepted(reply: str) -> None:
    result = parse_extraction(reply)
    assert result.facts == (ExtractedFact("The user owns a Ford Mustang", "fact", 0.9),)
    assert result.warnings == ()


def test_wrong_shapes_inside_valid_json_are_warnings() -> None:
    assert parse_extraction('{"facts": "none"}').warnings == ("'facts' is not a list; ignored",)
    assert parse_extraction('{"result": []}').warnings == ("reply has no 'facts' list",)
    empty = parse_extraction('{"facts": [], "entities": []}')
    assert empty == Extraction()


def test_an_unparseable_reply_raises_bad_response() -> None:
    with pytest.raises(BadResponse):
        parse_extraction("Sorry, I cannot help with that.")


def test_prompt_caps_the_input_and_names_the_shape() -> None:
    prompt = build_extraction_prompt("x" * 20_000)
    assert prompt.count("x") - build_extraction_prompt("").count("x") == MAX_INPUT_CHARS
    for word in ('"facts"', '"entities"', "procedural", "semantic", "third person", "atomic"):
        assert word in prompt


def test_extract_makes_one_json_mode_call() -> None:
    llm = ScriptedLLM(json.dumps(GOOD))
    result = extract(llm, "I prefer dark mode everywhere. I moved to Lisbon in March 2024.")
    assert len(result.facts) == 2
    ((prompt, system, json_mode),) = llm.calls
    assert json_mode and system and prompt.endswith("I moved to Lisbon in March 2024.")


def test_extract_skips_the_model_for_empty_content() -> None:
    llm = ScriptedLLM("unused")
    assert extract(llm, "   ") == Extraction()
    assert llm.calls == []
