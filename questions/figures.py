"""The figures a question gives ("an area greater than 200000", "before 1990") that a query never uses: a
query that leaves one out answers a broader question. Pure functions over the question's words and the
query text; names are taken out of the question first (`questions.walks.without_names`), so a figure inside
a name ("Route 66") is not one."""

from __future__ import annotations

import re

_FIGURE = re.compile(r"(?<![\w.])-?\d+(?:[.,]\d+)*(?![\w])")


def _figures(text: str) -> set[str]:
    return {match.replace(",", "") for match in _FIGURE.findall(text)}


def unused_figures(question: str, query: str) -> list[str]:
    """The figures in `question` that appear nowhere in `query` (as a number or inside a quoted value)."""
    return sorted(_figures(question) - _figures(query), key=float)
