"""Dates stored as text, compared with temporal values: FalkorDB answers `'2024-06-28' < date()` with null,
not an error, so a query about "overdue" or "last month" over a date kept as an ISO string silently returns
nothing. Where the stored values are ISO dates, the read is converted with the function it is compared to
(`i.due_date < date()` -> `date(i.due_date) < date()`). This module finds and rewrites such reads; whether
a property holds ISO text is asked of the graph by the caller (backends.grounding)."""

from __future__ import annotations

import re

from cypher.text import blank_strings

_TEMPORAL = r"(date|localdatetime|localtime|time)"
_OPERATOR = r"(<=|>=|<>|=|<|>)"
# `v.prop < date(`: the read on the left of a comparison with a temporal function call.
_READ_FIRST = re.compile(rf"(?<![\w.$(])(\w+)\.(\w+)\s*{_OPERATOR}\s*{_TEMPORAL}\s*\(", re.IGNORECASE)
# `date() > v.prop`: the read on the right of a bare temporal call (one with arguments may nest brackets).
_CALL_FIRST = re.compile(rf"\b{_TEMPORAL}\s*\(\s*\)\s*{_OPERATOR}\s*(\w+)\.(\w+)\b(?!\s*\()", re.IGNORECASE)
ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$")


def temporal_comparisons(query: str) -> list[tuple[str, str]]:
    """The (variable, property) reads the query compares with a temporal function, in order, once each."""
    blanked = blank_strings(query)
    found = [(m.group(1), m.group(2)) for m in _READ_FIRST.finditer(blanked)]
    found += [(m.group(3), m.group(4)) for m in _CALL_FIRST.finditer(blanked)]
    return list(dict.fromkeys(found))


def converted_reads(query: str, text_dates: set[tuple[str, str]]) -> str | None:
    """The query with each comparison of a read in `text_dates` with a temporal call converted by that call's
    function; None when nothing changed."""
    blanked = blank_strings(query)
    edits: list[tuple[int, int, str]] = []
    for m in _READ_FIRST.finditer(blanked):
        if (m.group(1), m.group(2)) in text_dates:
            edits.append((m.start(1), m.end(2), f"{m.group(4).lower()}({m.group(1)}.{m.group(2)})"))
    for m in _CALL_FIRST.finditer(blanked):
        if (m.group(3), m.group(4)) in text_dates:
            edits.append((m.start(3), m.end(4), f"{m.group(1).lower()}({m.group(3)}.{m.group(4)})"))
    fixed = query
    for start, end, text in sorted(edits, reverse=True):
        fixed = f"{fixed[:start]}{text}{fixed[end:]}"
    return fixed if fixed != query else None


def all_iso_dates(values: list[object]) -> bool:
    """Every sampled value is text holding an ISO date (or date and time); at least one was sampled."""
    return bool(values) and all(isinstance(v, str) and ISO_DATE.match(v.strip()) for v in values)
