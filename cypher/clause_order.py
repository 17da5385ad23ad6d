"""Clause-order repairs of a generated Cypher query that need no LLM and change no meaning.

A small model writes SQL habits into Cypher: a WHERE after RETURN (SQL's HAVING or a misplaced filter),
an aggregate in ORDER BY that FalkorDB only accepts through an alias, a RETURN in the middle of a query, a
query that ends with WITH.
FalkorDB rejects each outright, and the model often hands the same shape back when asked to repair it,
so these are rewritten before the query is checked or run. Each repair works on the query's top-level
clauses only (string literals and anything inside brackets are left alone) and gives up, returning the
query unchanged, whenever the rewrite would need a guess."""

from __future__ import annotations

import re
from dataclasses import dataclass

from cypher.text import replace_outside_strings

_CLAUSE = re.compile(
    r"\b(OPTIONAL\s+MATCH|MATCH|WHERE|WITH|RETURN|ORDER\s+BY|SKIP|LIMIT|UNWIND|CALL|UNION(?:\s+ALL)?)\b", re.IGNORECASE
)
AGGREGATE = re.compile(
    r"\b(count|sum|avg|min|max|collect|stDev|stDevP|percentileCont|percentileDisc)\s*\(", re.IGNORECASE
)
_DIRECTIONS = {"ASC", "DESC", "ASCENDING", "DESCENDING"}
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
DISTINCT = re.compile(r"^\s*DISTINCT\b", re.IGNORECASE)
_OPENERS, _CLOSERS = "([{", ")]}"
# After RETURN, only these may follow in one query part.
_AFTER_RETURN = {"ORDER BY", "SKIP", "LIMIT", "UNION", "UNION ALL"}


@dataclass(frozen=True)
class Clause:
    keyword: str  # upper-cased, single-spaced: "ORDER BY", "OPTIONAL MATCH"
    start: int  # where the keyword starts
    body_start: int  # where the text after the keyword starts
    end: int  # where the next top-level clause starts (or the query ends)


def masked(query: str) -> str:
    """The query with string literals' contents and everything inside brackets blanked out (same length),
    so that searches see the top level only."""
    out: list[str] = []
    depth = 0
    quote = ""
    escaped = False
    for char in query:
        if quote:
            out.append(" " if char != quote or escaped else char)
            if char == quote and not escaped:
                quote = ""
            escaped = char == "\\" and not escaped
            continue
        if char in "'\"`":
            quote = char
            out.append(char if depth == 0 else " ")
        elif char in _OPENERS:
            out.append(char if depth == 0 else " ")
            depth += 1
        elif char in _CLOSERS:
            depth = max(0, depth - 1)
            out.append(char if depth == 0 else " ")
        else:
            out.append(char if depth == 0 else " ")
    return "".join(out)


def clauses(query: str) -> list[Clause]:
    """The query's top-level clauses in order."""
    found = list(_CLAUSE.finditer(masked(query)))
    return [
        Clause(
            " ".join(m.group(1).upper().split()),
            m.start(),
            m.end(),
            found[i + 1].start() if i + 1 < len(found) else len(query),
        )
        for i, m in enumerate(found)
    ]


def split_items(text: str) -> list[str]:
    """A projection or ORDER BY list split at its top-level commas, each item stripped."""
    mask = masked(text)
    items, start = [], 0
    for i, char in enumerate(mask):
        if char == ",":
            items.append(text[start:i].strip())
            start = i + 1
    items.append(text[start:].strip())
    return [item for item in items if item]


def _normal(expression: str) -> str:
    return "".join(expression.split()).lower()


def _body(query: str, clause: Clause) -> str:
    return query[clause.body_start : clause.end].strip()


def _last_word(text: str) -> int:
    """Where the run of word characters (`\\w`) that ends `text` starts (len(text) when it ends with none)."""
    start = len(text)
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
        start -= 1
    return start


def _aliased(item: str) -> tuple[str, str] | None:
    """(expression, alias) of `expression AS alias` (the alias a name or `quoted`), or None. Read back from the
    item's end: a lazy pattern from its start tried the rest at every character (quadratic in the item)."""
    text = item.rstrip()
    if text.endswith("`"):
        start = text.rfind("`", 0, len(text) - 1)
        if start < 0 or start == len(text) - 2:
            return None
    else:
        start = _last_word(text)
        if start == len(text):
            return None
    before = text[:start]
    head = before.rstrip()
    if len(head) == len(before) or head[-2:].upper() != "AS" or _last_word(head) != len(head) - 2:
        return None
    expression = head[:-2].rstrip()
    if len(expression) == len(head) - 2:  # no white space before AS
        return None
    return expression, text[start:]


def _direction(key: str) -> tuple[int, str] | None:
    """Where an ORDER BY key's direction suffix (` DESC`) starts and the direction, or None without one."""
    text = key.rstrip()
    start = _last_word(text)
    word = text[start:]
    head = text[:start].rstrip()
    if word.upper() not in _DIRECTIONS or len(head) == start:
        return None
    return len(head), word


def _aliases(items: list[str]) -> dict[str, str]:
    """alias -> expression for each aliased projection item."""
    found = {}
    for item in items:
        aliased = _aliased(item)
        if aliased:
            found[aliased[1].strip("`")] = aliased[0].strip()
    return found


def _names(items: list[str]) -> list[str] | None:
    """The name each projection item can be referred to by afterwards, or None when an item has none."""
    names = []
    for item in items:
        aliased = _aliased(item)
        if aliased:
            names.append(aliased[1])
        elif _IDENTIFIER.fullmatch(item) or item == "*":
            names.append(item)
        else:
            return None
    return names


def where_after_return(query: str) -> str:
    """`... RETURN items WHERE cond ...`: the condition moves in front of RETURN when it reads only what the
    query matched; when it reads RETURN's aliases (SQL's HAVING), RETURN becomes `WITH items WHERE cond
    RETURN names`. Unchanged when neither applies."""
    found = clauses(query)
    for n, clause in enumerate(found[:-1]):
        where = found[n + 1]
        if clause.keyword != "RETURN" or where.keyword != "WHERE":
            continue
        items_text, condition = _body(query, clause), _body(query, where)
        items = split_items(DISTINCT.sub("", items_text))
        tail = query[where.end :]
        used = set(_IDENTIFIER.findall(masked(condition)))
        if used & set(_aliases(items)):
            names = _names(items)
            if names is None:
                return query
            return (
                f"{query[: clause.start]}WITH {items_text} WHERE {condition} "
                f"RETURN {', '.join(names)}{' ' if tail else ''}{tail.lstrip()}"
            )
        before = query[: clause.start].rstrip()
        previous = found[n - 1].keyword if n > 0 else ""
        # A MATCH or WITH takes the WHERE directly; elsewhere (OPTIONAL MATCH, UNWIND) WITH * filters rows.
        joint = {"WHERE": f" AND ({condition})", "MATCH": f" WHERE {condition}", "WITH": f" WHERE {condition}"}.get(
            previous, f" WITH * WHERE {condition}"
        )
        return f"{before}{joint} RETURN {items_text}{' ' if tail else ''}{tail.lstrip()}"
    return query


def _order_key(item: str) -> tuple[str, str]:
    """(expression, direction suffix) of one ORDER BY item."""
    direction = _direction(item)
    if direction:
        return item[: direction[0]].strip(), item[direction[0] :]
    return item.strip(), ""


def aggregate_order_alias(query: str) -> str:
    """`RETURN x, count(y) ORDER BY count(y) DESC`: FalkorDB sorts on an aggregate only through an alias,
    so the ORDER BY names the projection's alias for it (giving the projection item one if it has none,
    or adding the aggregate to the projection when it is not there)."""
    found = clauses(query)
    for n, order in enumerate(found):
        if order.keyword != "ORDER BY" or n == 0 or found[n - 1].keyword not in ("RETURN", "WITH"):
            continue
        projection = found[n - 1]
        distinct = DISTINCT.match(_body(query, projection))
        items = split_items(DISTINCT.sub("", _body(query, projection)))
        keys = split_items(_body(query, order))
        if not any(AGGREGATE.search(masked(_order_key(key)[0])) for key in keys):
            continue
        aliases = _aliases(items)
        new_keys = []
        for key in keys:
            expression, direction = _order_key(key)
            if not AGGREGATE.search(masked(expression)):
                new_keys.append(key)
                continue
            alias = next((a for a, e in aliases.items() if _normal(e) == _normal(expression)), None)
            if alias is None:
                alias = free_name(query, "order_key")
                position = next((i for i, item in enumerate(items) if _normal(item) == _normal(expression)), None)
                if position is None:
                    items.append(f"{expression} AS {alias}")
                else:
                    items[position] = f"{items[position]} AS {alias}"
                aliases[alias] = expression
            new_keys.append(f"{alias}{direction}")
        head = "DISTINCT " if distinct else ""
        rest = query[order.end :]
        return (
            f"{query[: projection.start]}{projection.keyword} {head}{', '.join(items)} "
            f"ORDER BY {', '.join(new_keys)}{' ' if rest else ''}{rest.lstrip()}"
        )
    return query


def free_name(query: str, stem: str) -> str:
    taken = set(_IDENTIFIER.findall(query))
    n = 1
    while f"{stem}{n}" in taken:
        n += 1
    return f"{stem}{n}"


def return_mid_query(query: str) -> str:
    """A RETURN followed by another reading clause (`RETURN s MATCH (s)-->(x) RETURN x`) was meant as WITH:
    it becomes one when every item can be referred to by name afterwards."""
    found = clauses(query)
    meant = []  # in order, up to the first whose items cannot all be named
    for n, clause in enumerate(found[:-1]):
        if clause.keyword != "RETURN" or found[n + 1].keyword in _AFTER_RETURN | {"WHERE"}:
            continue
        if _names(split_items(DISTINCT.sub("", _body(query, clause)))) is None:
            break
        meant.append((clause.start, clause.body_start))
    return _replaced(query, meant, "WITH")


def _replaced(query: str, spans: list[tuple[int, int]], text: str) -> str:
    """The query with each (start, end) span, in order and apart, replaced by `text`: in one pass, not a pass
    and a new reading of the query per span (a query of a thousand clauses cost seconds)."""
    out, last = [], 0
    for start, end in spans:
        out += [query[last:start], text]
        last = end
    return "".join([*out, query[last:]])


def final_with(query: str) -> str:
    """A query that ends with WITH (and its ORDER BY, SKIP, LIMIT) and has no RETURN meant RETURN there:
    FalkorDB refuses it ("Query cannot conclude with WITH")."""
    found = clauses(query)
    if any(c.keyword in {"RETURN", "CALL", "UNION", "UNION ALL"} for c in found):
        return query
    last = max((n for n, c in enumerate(found) if c.keyword == "WITH"), default=None)
    if last is None or any(c.keyword not in {"ORDER BY", "SKIP", "LIMIT"} for c in found[last + 1 :]):
        return query
    clause = found[last]
    return f"{query[: clause.start]}RETURN{query[clause.body_start :]}"


def sql_not_equal(query: str) -> str:
    """SQL's `!=` is Cypher's `<>` (FalkorDB: "Invalid input '!'"); string literals are left alone."""
    return replace_outside_strings(query, re.compile(r"!="), "<>")


def size_of_a_value(query: str) -> str:
    """`length(n.name)`: in FalkorDB length() measures a path only ("Type mismatch: expected Path or Null but
    was String"); a property is never a path, and the length of a string or list is size()."""
    return replace_outside_strings(query, re.compile(r"\blength(?=\s*\(\s*\w+\s*\.\s*\w+\s*\))", re.IGNORECASE), "size")


_TOP_AND = re.compile(r"\)\s+(AND)\s", re.IGNORECASE)


def and_for_where(query: str) -> str:
    """A MATCH pattern followed by `AND condition` with no WHERE (`MATCH (s:Supplier) AND s.rating >= 3.5`)
    meant WHERE: FalkorDB refuses the AND ("expected ... WHERE"). Only when the clause after that MATCH is
    not a WHERE of its own (then the AND would have to move into it: a guess)."""
    found = clauses(query)
    top_level = masked(query)
    ands = []
    for n, clause in enumerate(found):
        if not clause.keyword.endswith("MATCH") or (n + 1 < len(found) and found[n + 1].keyword == "WHERE"):
            continue
        joined = _TOP_AND.search(top_level, clause.body_start, clause.end)
        if joined is not None:
            ands.append(joined.span(1))
    return _replaced(query, ands, "WHERE")


REPAIRS = (
    sql_not_equal,
    size_of_a_value,
    final_with,
    and_for_where,
    where_after_return,
    return_mid_query,
    aggregate_order_alias,
)


def repaired(query: str) -> str | None:
    """The query with every clause-order repair applied, or None when none changed it."""
    fixed = query
    for repair in REPAIRS:
        fixed = repair(fixed)
    return fixed if fixed != query else None


def ranked_by(query: str) -> tuple[str, bool] | None:
    """What the final rows are ranked by first, read through a RETURN alias (`c.population AS population ...
    ORDER BY population DESC` -> ("c.population", True)), and whether in descending order; None when the last
    RETURN has no ORDER BY right after it."""
    found = clauses(query)
    last = max((i for i, c in enumerate(found) if c.keyword == "RETURN"), default=None)
    if last is None or last + 1 >= len(found) or found[last + 1].keyword != "ORDER BY":
        return None
    keys = split_items(_body(query, found[last + 1]))
    if not keys:
        return None
    direction = _direction(keys[0])
    key = keys[0][: direction[0]].strip() if direction else keys[0]
    descending = direction is not None and direction[1].upper().startswith("DESC")
    returned = split_items(DISTINCT.sub("", _body(query, found[last])))
    return _aliases(returned).get(key.strip("`"), key), descending
