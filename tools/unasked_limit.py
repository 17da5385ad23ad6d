"""A LIMIT the question never asked for. Asked "which characters does Gillenormand appear with?", the small
model writes `... ORDER BY count(*) DESC LIMIT 5` and the answer names 5 of 7, stated at 0.85 (seed-2
development runs: 3 of 5 wrong one-hop answers on one graph). When the rows stop exactly at that LIMIT and the
question gives no number and no superlative, the query is run again without it (the row cap still bounds
it), and the fuller rows stand. A LIMIT 1 is left alone: a single row is always a choice ("name a country").
Pure functions over the query text and the question's words."""

from __future__ import annotations

import re

from confidence.answer_fit import superlative
from cypher.tokens import blank_code, depths, keywords

_INTEGER = re.compile(r"\s*(\d+)\b")
# A number in the question ("three", "top 5", "more than 2"), or words asking for some of the rows ("the first",
# "some examples"): the question may have asked for part of the list.
_PART = re.compile(
    r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|few|"
    r"couple|single|dozen|first|last|some|several|examples?|samples?|main|leading)\b",
    re.IGNORECASE,
)


def final_limit(query: str) -> tuple[int, int, int] | None:
    """(rows, start, end) of the query's last top-level `LIMIT n` after its last RETURN; None without one, with
    a LIMIT given by a parameter or expression, after a SKIP, or in a UNION (each part's own LIMIT)."""
    blanked = blank_code(query)
    level = depths(blanked)
    top = [(p, w) for p, w in keywords(blanked) if level[p] == 0]
    if any(w == "UNION" for _, w in top):
        return None
    returns = [p for p, w in top if w == "RETURN"]
    limits = [p for p, w in top if w == "LIMIT" and returns and p > returns[-1]]
    if not limits or any(w == "SKIP" and p > returns[-1] for p, w in top):
        return None  # no LIMIT, or a page of rows (`SKIP 5 LIMIT 5`): without it, everything after the skip
    number = _INTEGER.match(blanked, limits[-1] + len("LIMIT"))
    if number is None or blanked[number.end() :].strip(" ;\n\t"):
        return None  # a parameter, an expression, or something after it
    return int(number.group(1)), limits[-1], number.end()


def asks_for_every_row(question: str) -> bool:
    """The question gives no number of rows, asks for no part of the list, and for no top or bottom of a
    ranking (read in lower case: "Top suppliers by revenue?" starts with its superlative)."""
    return not superlative(question.lower()) and not _PART.search(question)


def unasked_limit_lifted(query: str, question: str, rows_returned: int) -> str | None:
    """The query without its LIMIT when the rows stopped exactly there (LIMIT 2 or more) and the question asked
    for every row; None otherwise."""
    found = final_limit(query)
    if found is None or not asks_for_every_row(question):
        return None
    limit, start, end = found
    if limit < 2 or rows_returned != limit:
        return None
    # Blanked in place, never stripped: the newline ending a `//` comment before it stays, so a block comment
    # after it still reads as one (stripping it once turned a comment's text into code).
    return query[:start] + " " * (end - start) + query[end:]
