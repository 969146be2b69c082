"""Decision: parsing the model's action, refusing invented targets, and the no-LLM rule."""

from __future__ import annotations

import json

import pytest

from fakes.scripted_llm import ScriptedLLM
from signet.errors import BadResponse
from signet.pipeline.decision import (
    Candidate,
    Proposal,
    build_decision_prompt,
    decide,
    near_duplicate,
    parse_decision,
)
from signet.pipeline.extraction import ExtractedFact

FACT = ExtractedFact("The user now lives in Lisbon", "fact", 0.8)
CANDIDATES = [
    Candidate("mem-berlin", "The user lives in Berlin", 0.9),
    Candidate("mem-cat", "The user has a cat named Miso", 0.2),
]


def _reply(**fields: object) -> str:
    return json.dumps(fields)


def test_update_of_a_candidate_is_accepted() -> None:
    text = _reply(action="update", targetId="mem-berlin", confidence=0.9, reason="moved")
    assert parse_decision(text, FACT, CANDIDATES) == Proposal(
        "update", FACT, "mem-berlin", 0.9, "moved", None
    )


def test_target_id_spelled_snake_case_is_accepted() -> None:
    text = _reply(action="delete", target_id="mem-cat", confidence=0.7, reason="r")
    proposal = parse_decision(text, FACT, CANDIDATES)
    assert (proposal.action, proposal.target_id, proposal.rejected) == ("delete", "mem-cat", None)


@pytest.mark.parametrize("action", ["update", "delete"])
def test_a_hallucinated_target_is_rejected_but_kept_for_the_audit(action: str) -> None:
    text = _reply(action=action, targetId="mem-0042", confidence=0.95, reason="r")
    proposal = parse_decision(text, FACT, CANDIDATES)
    assert proposal.action == action and proposal.target_id == "mem-0042"
    assert proposal.rejected is not None and proposal.rejected.startswith("unknown target")


@pytest.mark.parametrize("target", [None, "", "null"])
def test_update_without_a_target_is_rejected(target: str | None) -> None:
    text = _reply(action="update", targetId=target, confidence=0.9, reason="r")
    assert parse_decision(text, FACT, CANDIDATES).rejected == "missing target"


def test_update_content_offered_by_the_model_is_ignored() -> None:
    text = _reply(action="update", targetId="mem-berlin", newContent="The user lives on Mars")
    proposal = parse_decision(text, FACT, CANDIDATES)
    assert proposal.fact.content == "The user now lives in Lisbon"


def test_add_drops_any_target_and_none_keeps_only_a_real_one() -> None:
    add = parse_decision(_reply(action="add", targetId="mem-berlin"), FACT, CANDIDATES)
    assert add.target_id is None and add.rejected is None
    none = parse_decision(_reply(action="none", targetId="mem-cat"), FACT, CANDIDATES)
    assert none.target_id == "mem-cat"
    invented = parse_decision(_reply(action="none", targetId="mem-x"), FACT, CANDIDATES)
    assert invented.target_id is None and invented.rejected is None


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("UPDATE", "update"), (" Add ", "add"), ("skip", "none"), ("noop", "none")],
)
def test_action_spellings(raw: str, expected: str) -> None:
    text = _reply(action=raw, targetId="mem-berlin", confidence=0.5)
    assert parse_decision(text, FACT, CANDIDATES).action == expected


@pytest.mark.parametrize(
    "text",
    [
        _reply(action="merge", targetId="mem-berlin"),
        _reply(targetId="mem-berlin"),
        _reply(action=3),
        "[1, 2]",
        "no idea",
    ],
    ids=["unknown action", "missing action", "non-string action", "not an object", "prose"],
)
def test_unusable_decisions_raise_bad_response(text: str) -> None:
    with pytest.raises(BadResponse):
        parse_decision(text, FACT, CANDIDATES)


@pytest.mark.parametrize(
    ("raw", "expected"), [(1.7, 1.0), (-1, 0.0), ("0.6", 0.6), ("high", 0.5), (None, 0.5)]
)
def test_confidence_is_clamped_or_defaulted(raw: object, expected: float) -> None:
    text = json.dumps({"action": "add", "confidence": raw})
    assert parse_decision(text, FACT, CANDIDATES).confidence == expected


def test_small_model_quirks_are_tolerated() -> None:
    text = "<think>same place?</think>```json\n{'action': 'update', 'targetId': 'mem-berlin',}\n```"
    assert parse_decision(text, FACT, CANDIDATES).target_id == "mem-berlin"


def test_prompt_shows_the_fact_and_every_candidate_id() -> None:
    prompt = build_decision_prompt(FACT, CANDIDATES)
    assert FACT.content in prompt
    for c in CANDIDATES:
        assert c.id in prompt and c.content in prompt
    for action in ("add", "update", "delete", "none", "targetId"):
        assert action in prompt


def test_no_candidates_means_add_without_a_call() -> None:
    llm = ScriptedLLM("unused", require_json=True)
    proposal = decide(llm, FACT, [])
    assert (proposal.action, proposal.target_id, proposal.rejected) == ("add", None, None)
    assert llm.prompts == []


def test_decide_asks_the_model_with_at_most_five_best_candidates() -> None:
    many = [Candidate(f"m{i}", f"The user visited city number {i}", i / 10) for i in range(8)]
    llm = ScriptedLLM(_reply(action="update", targetId="m7", confidence=0.8, reason="r"), require_json=True)
    proposal = decide(llm, FACT, many)
    assert proposal.action == "update" and proposal.rejected is None
    (prompt,) = llm.prompts
    assert all(f'"m{i}"' in prompt for i in (3, 4, 5, 6, 7))
    assert all(f'"m{i}"' not in prompt for i in (0, 1, 2))


def test_a_target_dropped_from_the_prompt_counts_as_unknown() -> None:
    many = [Candidate(f"m{i}", f"The user visited city number {i}", i / 10) for i in range(8)]
    llm = ScriptedLLM(_reply(action="delete", targetId="m0", confidence=0.8), require_json=True)
    assert decide(llm, FACT, many).rejected is not None


def test_without_an_llm_a_near_duplicate_is_none() -> None:
    candidates = [Candidate("mem-tea", "the user prefers green tea.", 0.5)]
    fact = ExtractedFact("The user prefers green tea", "preference", 0.9)
    proposal = decide(None, fact, candidates)
    assert (proposal.action, proposal.target_id) == ("none", "mem-tea")


def test_without_an_llm_anything_else_is_added_never_updated() -> None:
    proposal = decide(None, FACT, CANDIDATES)
    assert (proposal.action, proposal.target_id, proposal.confidence) == ("add", None, 0.8)


def test_near_duplicate_scores() -> None:
    assert near_duplicate("The user likes tea", "the user likes tea!") == 1.0
    assert near_duplicate("The user likes green tea", "The user likes tea") == 0.75
    assert near_duplicate("The user likes tea", "Paris is in France") == 0.0
