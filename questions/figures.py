"""The figures a question gives ("an area greater than 200000", "before 1990", "over 100 million") and those a
query never uses: a query that leaves one out answers a broader question. A figure followed by a magnitude word
("100 million", "2.5 billion", "a million") stands for its whole value. Pure functions over the question's
words and the query text; names are taken out of the question first (`questions.walks.without_names`), so a
figure inside a name ("Route 66") is not one."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

_FIGURE = re.compile(r"(?<![\w.])-?\d+(?:[.,]\d+)*(?![\w])")
MAGNITUDES = {"thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}
# A figure and the magnitude word after it, or "a"/"one" before one: "100 million", "1.5 billion", "a million".
_SCALED = re.compile(
    r"(?<![\w.])(?P<figure>-?\d+(?:[.,]\d+)*|an?|one)\s+(?P<magnitude>" + "|".join(MAGNITUDES) + r")\b",
    re.IGNORECASE,
)


def _plain(figure: str) -> str:
    """A figure as a query would write it: no thousands separators."""
    return figure.replace(",", "")


def scaled(figure: str, magnitude: str) -> str:
    """`figure` times the magnitude word, written as a whole number where it is one: ("100", "million") ->
    "100000000", ("a", "million") -> "1000000", ("2.5", "billion") -> "2500000000"."""
    base = "1" if figure.lower() in ("a", "an", "one") else _plain(figure)
    try:
        value = Decimal(base) * MAGNITUDES[magnitude.lower()]
    except (InvalidOperation, KeyError):
        return base
    return str(int(value)) if value == value.to_integral_value() else str(value.normalize())


def figures_said(text: str) -> list[tuple[int, int, str]]:
    """Each figure of `text` as (start, end, value), a magnitude word applied ("100 million" one figure),
    in order."""
    found: list[tuple[int, int, str]] = []
    taken: list[tuple[int, int]] = []
    for match in _SCALED.finditer(text):
        found.append((match.start(), match.end(), scaled(match["figure"], match["magnitude"])))
        taken.append((match.start(), match.end()))
    for match in _FIGURE.finditer(text):
        if not any(start <= match.start() < end for start, end in taken):
            found.append((match.start(), match.end(), _plain(match.group())))
    return sorted(found)


def _figures(text: str) -> set[str]:
    return {value for _, _, value in figures_said(text)}


def unused_figures(question: str, query: str) -> list[str]:
    """The figures in `question` that appear nowhere in `query` (as a number or inside a quoted value)."""
    in_query = {match.replace(",", "") for match in _FIGURE.findall(query)}
    return sorted(_figures(question) - in_query, key=float)
