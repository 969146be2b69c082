"""The dated channel: a day or month named in the query restricts a second lexical search."""

from __future__ import annotations

from datetime import date

import pytest

from signet.app import SignetApp
from signet.recall.dates import Span, spans
from signet.types import MemoryFilters, RecallQuery


@pytest.mark.parametrize(
    ("text", "first", "last"),
    [
        ("What did Nate do on 25 May, 2022?", date(2022, 5, 25), date(2022, 5, 25)),
        ("the 11th of December 2023", date(2023, 12, 11), date(2023, 12, 11)),
        ("on Sept. 3rd, 2021 we met", date(2021, 9, 3), date(2021, 9, 3)),
        ("logs from 2024-02-29", date(2024, 2, 29), date(2024, 2, 29)),
        ("trips in May 2023", date(2023, 5, 1), date(2023, 5, 31)),
    ],
)
def test_named_days_and_months(text: str, first: date, last: date) -> None:
    assert spans(text) == [Span(first, last)]


@pytest.mark.parametrize("text", ["in 2022", "on May 25", "Feb 30, 2022", "2022-13-01", "no date"])
def test_vague_or_invalid_dates_are_ignored(text: str) -> None:
    assert spans(text) == []


def test_a_full_date_is_not_also_read_as_its_month() -> None:
    assert spans("May 25, 2022") == [Span(date(2022, 5, 25), date(2022, 5, 25))]


def _fill(app: SignetApp) -> str:
    app.recaller = app.recaller.respec(context_weight=0.0)
    # Many memories share the query's words; only the date tells the right one apart.
    for day in range(1, 20):
        app.remember(f"Nate gave Joanna a present, note {day}", event_at=f"2022-05-{day:02d}T10:00:00")
    target = app.remember(
        "Nate: got this new pup for you, Joanna!", event_at="2022-05-25T14:00:00"
    ).id
    return target


def test_the_named_day_brings_its_memory_up(lexical_app: SignetApp) -> None:
    target = _fill(lexical_app)
    query = "What did Nate give Joanna on 25 May, 2022?"
    hits = lexical_app.recall(RecallQuery(query, limit=3, mode="keyword", touch=False)).hits
    assert hits[0].memory.id == target
    undated = lexical_app.recall(
        RecallQuery("What did Nate give Joanna?", limit=3, mode="keyword", touch=False)
    ).hits
    assert target not in [h.memory.id for h in undated]


def test_the_callers_own_time_filter_still_bounds_the_channel(lexical_app: SignetApp) -> None:
    target = _fill(lexical_app)
    filters = MemoryFilters(until="2022-05-20")
    query = RecallQuery("Nate Joanna on 25 May, 2022", mode="keyword", touch=False, filters=filters)
    assert target not in [h.memory.id for h in lexical_app.recall(query).hits]
