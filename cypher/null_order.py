"""Rankings that put missing values first. FalkorDB, like openCypher, sorts null above every value, so
`ORDER BY c.population DESC LIMIT 1` returns a row with no population at all ("Name the country with the
highest population" was answered with one whose population is unknown, at 0.9). A query ranking by a
property in descending order is rewritten to rank only rows that have it: never what a "highest" or
"most" question wants otherwise. Pure text functions over one query; shapes they cannot read for certain
(a WITH, a UNION, an OPTIONAL MATCH last) are left as written.
"""

from __future__ import annotations

import re

from cypher.text import blank_strings, ordered_by

_PROPERTY = re.compile(r"^(\w+)\s*\.\s*(`?\w+`?)$")
_DESCENDING = re.compile(r"\s+(DESC|DESCENDING)$", re.IGNORECASE)
_RETURN = re.compile(r"\bRETURN\b", re.IGNORECASE)
_ORDER_BY = re.compile(r"\bORDER\s+BY\b", re.IGNORECASE)
_MATCH = re.compile(r"\b(OPTIONAL\s+)?MATCH\b", re.IGNORECASE)
_WHERE = re.compile(r"\bWHERE\b", re.IGNORECASE)
_UNSURE = re.compile(r"\b(WITH|UNION|UNWIND|CALL)\b", re.IGNORECASE)
_ITEM_AS = re.compile(r"^(.+?)\s+AS\s+`?(\w+)`?$", re.IGNORECASE | re.DOTALL)


def _top_level_split(text: str) -> list[str]:
    """`a, f(b, c), d` -> ["a", "f(b, c)", "d"] (commas inside brackets stay)."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += char in "([{"
        depth -= char in ")]}"
        if char == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return parts


def _ranked_property(order: str, returned: str) -> str | None:
    """The property access (`c.population`) the first ORDER BY key ranks by in descending order, read
    through a RETURN alias (`c.population AS population ... ORDER BY population DESC`); None otherwise."""
    first = _top_level_split(order)[0]
    descending = _DESCENDING.search(first)
    if descending is None:
        return None
    key = first[:descending.start()].strip()
    if _PROPERTY.match(key):
        return key
    for item in _top_level_split(re.sub(r"^\s*DISTINCT\b", "", returned, flags=re.IGNORECASE)):
        aliased = _ITEM_AS.match(item)
        if aliased and aliased.group(2) == key.strip("`") and _PROPERTY.match(aliased.group(1).strip()):
            return aliased.group(1).strip()
    return None


def ranked_without_nulls(query: str) -> str | None:
    """The query with the rows lacking the property it ranks by in descending order left out
    (`WHERE ... AND c.population IS NOT NULL`); None when it ranks no such way or its shape is unsure."""
    blanked = blank_strings(query)
    order = ordered_by(query)
    returns = list(_RETURN.finditer(blanked))
    matches = list(_MATCH.finditer(blanked))
    if order is None or len(returns) != 1 or not matches or _UNSURE.search(blanked):
        return None
    last_match = matches[-1]
    if last_match.group(1):  # a WHERE would filter the optional rows, not drop the row
        return None
    returning = returns[0]
    order_at = _ORDER_BY.search(blanked, returning.end())
    if order_at is None:
        return None
    prop = _ranked_property(order, query[returning.end():order_at.start()])
    if prop is None or f"{prop} IS NOT NULL".lower() in " ".join(blanked.lower().split()):
        return None
    where = _WHERE.search(blanked, last_match.end(), returning.start())
    head = query[:returning.start()].rstrip()
    if where is None:
        return f"{head} WHERE {prop} IS NOT NULL {query[returning.start():]}"
    condition = query[where.end():returning.start()].strip()
    return f"{query[:where.start()]}WHERE ({condition}) AND {prop} IS NOT NULL {query[returning.start():]}"
