"""Dates named in a query, as time ranges for the "dated" recall channel: "what did Nate do on 25
May, 2022?" matches a memory by when it happened (`event_at`, else `created_at`) more than by its
words, so recall reruns the lexical search within the named day or month. Recognised: ISO dates,
"25 May 2022", "May 25th, 2022" and "May 2022"; a day without a year, or a year alone, is too
vague.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date

MONTHS = {
    name: number
    for number in range(1, 13)
    for name in (calendar.month_name[number].lower(), calendar.month_abbr[number].lower())
}
MONTHS["sept"] = 9
_MONTH = r"(?P<month>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d{2})"
_PATTERNS = [
    re.compile(r"\b(?P<year>(?:19|20)\d{2})-(?P<month>\d{2})-(?P<day>\d{2})\b"),
    re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b", re.IGNORECASE),
    re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", re.IGNORECASE),
    re.compile(rf"\b{_MONTH},?\s+{_YEAR}\b", re.IGNORECASE),
]
MAX_RANGES = 3


@dataclass(frozen=True, slots=True)
class Span:
    """An inclusive range of days, rendered as the since/until strings of MemoryFilters."""

    first: date
    last: date

    @property
    def since(self) -> str:
        return self.first.isoformat()

    @property
    def until(self) -> str:
        # event_at may carry a time of day (and created_at a Z): compare up to the day's end.
        return self.last.isoformat() + "T23:59:59.999~"


def spans(text: str) -> list[Span]:
    """The days or months `text` names, in order of appearance, at most MAX_RANGES."""
    found: list[tuple[int, Span]] = []
    taken: list[tuple[int, int]] = []
    for pattern in _PATTERNS:
        for match in pattern.finditer(text):
            if any(match.start() < end and start < match.end() for start, end in taken):
                continue  # "May 25, 2022" must not also count as "May ... 2022"
            span = _span(match)
            if span is not None:
                taken.append((match.start(), match.end()))
                found.append((match.start(), span))
    ordered = [span for _, span in sorted(found, key=lambda item: item[0])]
    return list(dict.fromkeys(ordered))[:MAX_RANGES]


def _span(match: re.Match[str]) -> Span | None:
    groups = match.groupdict()
    month_text = groups["month"].lower().rstrip(".")
    month = int(month_text) if month_text.isdigit() else MONTHS.get(month_text)
    year = int(groups["year"])
    if month is None or not 1 <= month <= 12:
        return None
    if groups.get("day") is None:
        days = calendar.monthrange(year, month)[1]
        return Span(date(year, month, 1), date(year, month, days))
    try:
        day = date(year, month, int(groups["day"]))
    except ValueError:
        return None
    return Span(day, day)
