"""Rankings that put missing values first. FalkorDB, like openCypher, sorts null above every value, so
`ORDER BY c.population DESC LIMIT 1` returns a row with no population at all ("Name the country with the
highest population" was answered with one whose population is unknown, at 0.9). A query ranking by a
property in descending order is rewritten to rank only rows that have it: never what a "highest" or
"most" question wants otherwise. Pure text functions over one query; shapes they cannot read for certain
(a WITH, a UNION, an OPTIONAL MATCH last) are left as written.
"""

from __future__ import annotations

import re

from cypher.clause_order import ranked_by
from cypher.text import blank_strings

_PROPERTY = re.compile(r"^(\w+)\s*\.\s*(`?\w+`?)$")
_RETURN = re.compile(r"\bRETURN\b", re.IGNORECASE)
_MATCH = re.compile(r"\b(OPTIONAL\s+)?MATCH\b", re.IGNORECASE)
_WHERE = re.compile(r"\bWHERE\b", re.IGNORECASE)
_UNSURE = re.compile(r"\b(WITH|UNION|UNWIND|CALL)\b", re.IGNORECASE)


def ranked_without_nulls(query: str) -> str | None:
    """The query with the rows lacking the property it ranks by in descending order left out
    (`WHERE ... AND c.population IS NOT NULL`); None when it ranks no such way or its shape is unsure."""
    blanked = blank_strings(query)
    ranking = ranked_by(query)
    returns = list(_RETURN.finditer(blanked))
    matches = list(_MATCH.finditer(blanked))
    if ranking is None or len(returns) != 1 or not matches or _UNSURE.search(blanked):
        return None
    last_match = matches[-1]
    if last_match.group(1):  # a WHERE would filter the optional rows, not drop the row
        return None
    prop, descending = ranking
    if (
        not descending
        or not _PROPERTY.match(prop)
        or f"{prop} IS NOT NULL".lower() in " ".join(blanked.lower().split())
    ):
        return None
    returning = returns[0]
    where = _WHERE.search(blanked, last_match.end(), returning.start())
    head = query[: returning.start()].rstrip()
    if where is None:
        return f"{head} WHERE {prop} IS NOT NULL {query[returning.start() :]}"
    condition = query[where.end() : returning.start()].strip()
    return f"{query[: where.start()]}WHERE ({condition}) AND {prop} IS NOT NULL {query[returning.start() :]}"
