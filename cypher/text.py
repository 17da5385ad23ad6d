"""Cypher text helpers: deterministic broadening of a read-only query (exact matches become
case-insensitive CONTAINS, bounded variable-length paths get more hops), and the literal values a
query names, so the evaluator can check that they exist in the graph.

A query comes from the model or a human, and these helpers run in workflow code (the adjusted rung) and on a
worker's event loop: every pattern takes time linear in the query. A quantifier whose characters the next part
cannot match is possessive (`*+`, `++`), a name is matched from its first character only, and a string
literal left open runs to the query's end (tests/attacks/test_linear_time_checks.py measures each)."""

from __future__ import annotations

import itertools
import re

MAX_HOPS = 6

# (n:Label {prop: 'value', ...}) -> (n:Label) plus a WHERE condition on n.prop
_INLINE = re.compile(r"\((\w++)(:[\w`]++)?+\s*+\{([^{}]*+)\}\s*+\)")
STRING_PAIR = re.compile(r"(?<!\w)(\w++)\s*+:\s*+'((?:[^'\\]++|\\.)*+)'")
# n.prop = 'value'  ->  toLower(n.prop) CONTAINS toLower('value')
_EQUALS = re.compile(r"(?<!\w)(\w++\.\w++)\s*+=\s*+'((?:[^'\\]++|\\.)*+)'")
_HOPS = re.compile(r"\*(\d*)\.\.(\d+)")
_CONTAINS = re.compile(r"CONTAINS\s++(?:toLower\s*+\(\s*+)?+'((?:[^'\\]++|\\.)*+)'", re.IGNORECASE)
NODE_LABEL = re.compile(r"\(\s*+\w*+\s*+:\s*+`?(\w++)`?")  # the label of each node pattern `(x:Label` or `(:Label`


def _contains(prop: str, value: str) -> str:
    return f"toLower({prop}) CONTAINS toLower('{value}')"


_MATCH = re.compile(r"\b(?:OPTIONAL\s+)?MATCH\b", re.IGNORECASE)
_WHERE = re.compile(r"\bWHERE\b", re.IGNORECASE)
# Where a MATCH's WHERE ends: the next clause of the same segment.
_NEXT_CLAUSE = re.compile(r"\b(WITH|RETURN|ORDER\s+BY|UNWIND|CALL|UNION|SKIP|LIMIT)\b", re.IGNORECASE)
_OR = re.compile(r"\b(OR|XOR)\b", re.IGNORECASE)
_ESCAPE = re.compile(r"\\(.)")
_QUOTE = re.compile(r"['\"]")
# A literal's inside after its opening quote: anything but that quote unescaped. Where it stops is its closing
# quote, or where no closing quote of that kind can follow.
_INSIDE = {quote: re.compile(rf"(?:[^{quote}\\]++|\\.)*+") for quote in "'\""}


def _widen(match: re.Match[str]) -> str:
    """More hops, never fewer: an upper bound at or past the cap stays as it is."""
    upper = int(match.group(2))
    return f"*{match.group(1)}..{max(upper, min(MAX_HOPS, upper + 2))}"


def blank_strings(text: str) -> str:
    """The text with each string literal's contents blanked (same length): keywords are searched outside
    them only ('MATCH' as a stored value is not a clause). A quote that no closing quote follows is left as
    it is, and the text after it read on.

    Read once, left to right. A search for the closing quote that fails stops where every later quote of that
    kind up to there is escaped, and so fails from each of them too: they are not tried again (a text of
    escaped quotes, `'\\'\\'\\'...`, tried each and cost its length squared)."""
    out: list[str] = []
    last = 0
    hopeless = {"'": -1, '"': -1}  # for each kind of quote, up to where none can open a literal
    opening = _QUOTE.search(text)
    while opening is not None:
        start, quote = opening.start(), opening.group()
        if start <= hopeless[quote]:
            opening = _QUOTE.search(text, start + 1)
            continue
        inside = _INSIDE[quote].match(text, start + 1)
        assert inside is not None  # its pattern matches the empty string too
        end = inside.end()
        if end == len(text) or text[end] != quote:
            hopeless[quote] = end
            opening = _QUOTE.search(text, start + 1)
            continue
        out += [text[last : start + 1], " " * (end - start - 1)]
        last = end
        opening = _QUOTE.search(text, end + 1)
    return "".join([*out, text[last:]])


def labelled_variables(blanked: str) -> dict[str, str]:
    """variable -> label for each labelled node pattern `(v:Label` in the query (strings blanked)."""
    found: dict[str, str] = {}
    for variable, label in re.findall(r"\(\s*+(\w++)\s*+:\s*+`?(\w++)`?", blanked):
        found.setdefault(variable, label)
    return found


def replace_outside_strings(query: str, pattern: re.Pattern[str], replacement: str) -> str:
    """`pattern` replaced wherever it matches outside string literals."""
    blanked = blank_strings(query)
    out, last = [], 0
    for match in pattern.finditer(blanked):
        out += [query[last : match.start()], replacement]
        last = match.end()
    return "".join([*out, query[last:]])


def _with_conditions(segment: str, conditions: list[str], last: bool) -> str | None:
    """The MATCH segment with `conditions` ANDed onto its own WHERE (an existing OR parenthesised, so it
    cannot escape them), or a new WHERE before its next clause; None when the query ends with no clause."""
    clause = " AND ".join(conditions)
    blank = blank_strings(segment)
    where = _WHERE.search(blank)
    if where:
        rest = segment[where.end() :]
        end = _NEXT_CLAUSE.search(blank[where.end() :])
        existing = (rest[: end.start()] if end else rest).strip()
        tail = rest[end.start() :] if end else ""
        if _OR.search(blank_strings(existing)):
            existing = f"({existing})"
        return f"{segment[: where.end()]} {clause} AND {existing}{' ' if tail else ''}{tail}"
    end = _NEXT_CLAUSE.search(blank)
    if end is None:
        if last:  # no RETURN to put it before: leave the query to the LLM's repair
            return None
        return f"{segment.rstrip()} WHERE {clause}{' ' if segment.endswith(' ') else ''}"
    return f"{segment[: end.start()]}WHERE {clause} {segment[end.start() :]}"


def broaden_cypher(query: str) -> str | None:
    """The query made broader for the adjusted retry, or None when nothing in it can be broadened. Each
    MATCH's inline property maps become conditions of that MATCH's own WHERE (where its variables are bound)."""
    starts = [m.start() for m in _MATCH.finditer(blank_strings(query))]
    bounds = sorted({0, *starts, len(query)})
    segments = [query[a:b] for a, b in itertools.pairwise(bounds)]
    broadened_segments = []
    for n, segment in enumerate(segments):
        conditions: list[str] = []

        def inline(match: re.Match[str], conditions: list[str] = conditions) -> str:
            var, label, body = match.group(1), match.group(2) or "", match.group(3)
            pairs = STRING_PAIR.findall(body)
            rest = STRING_PAIR.sub("", body).strip(" ,")
            if not pairs or rest:  # keep maps with non-string values as they are
                return match.group(0)
            conditions.extend(_contains(f"{var}.{prop}", value) for prop, value in pairs)
            return f"({var}{label})"

        changed = _INLINE.sub(inline, segment) if _MATCH.match(blank_strings(segment)) else segment
        if conditions:
            with_conditions = _with_conditions(changed, conditions, last=n == len(segments) - 1)
            if with_conditions is None:
                return None
            changed = with_conditions
        broadened_segments.append(changed)
    broadened = "".join(broadened_segments)
    broadened = _EQUALS.sub(lambda m: _contains(m.group(1), m.group(2)), broadened)
    broadened = _HOPS.sub(_widen, broadened)
    return broadened if broadened != query else None


def unescaped(literal: str) -> str:
    """The value a Cypher string literal's source text denotes (O\\'Brien is O'Brien)."""
    return _ESCAPE.sub(r"\1", literal)


def query_literals(query: str) -> list[tuple[str, str]]:
    """(value, "exact" | "contains") for each string literal the query matches on, in order, deduplicated."""
    found: list[tuple[str, str]] = []
    for match in _INLINE.finditer(query):
        found += [(unescaped(value), "exact") for _, value in STRING_PAIR.findall(match.group(3))]
    found += [(unescaped(m.group(2)), "exact") for m in _EQUALS.finditer(query)]
    found += [(unescaped(m.group(1)), "contains") for m in _CONTAINS.finditer(query)]
    return list(dict.fromkeys(f for f in found if f[0].strip()))  # the first of each, in order


_AGGREGATE = re.compile(r"\b(count|sum|avg|min|max|stDev|stDevP|percentileCont|percentileDisc)\s*\(", re.IGNORECASE)
# One relationship between two node patterns: `)-[...]->(`, `)<-[...]-(`, `)--(`, `)-->(`.
_RELATIONSHIP = re.compile(r"\)\s*+<?-\s*+(?:\[[^\[\]]*+\]\s*+)?+-?>?\s*+\(")


def query_shape(query: str) -> dict[str, float]:
    """How much a query computes, whatever it is about: whether it aggregates (count, sum, average, min, max)
    and how many relationships its patterns walk. Harder shapes go wrong more often, so they are evidence
    for the calibrator (confidence/evidence.py); nothing here knows a label or a wording."""
    blanked = blank_strings(query)
    return {"aggregates": float(bool(_AGGREGATE.search(blanked))), "hops": float(len(_RELATIONSHIP.findall(blanked)))}


_RETURN = re.compile(r"\bRETURN\b", re.IGNORECASE)
_ORDER_BY = re.compile(r"\bORDER\s++BY\s", re.IGNORECASE)
# Where the keys end: SKIP or LIMIT, else the query's end (less a closing `;`). Found by one search each, not by
# a lazy match that tried both at every character (the length squared on a long run of spaces).
_ORDER_END = re.compile(r"\s(?:SKIP|LIMIT)\b", re.IGNORECASE)


def ordered_by(query: str) -> str | None:
    """What the rows the query returns are ordered by ("orders DESC"), read from the ORDER BY after its last
    RETURN; None when the final rows are in no stated order (an ORDER BY inside a WITH orders an earlier
    stage, which the RETURN may regroup) or it names nothing."""
    blanked = blank_strings(query)
    returns = list(_RETURN.finditer(blanked))
    if not returns:
        return None
    found = _ORDER_BY.search(blanked, returns[-1].end())
    if found is None:
        return None
    first = len(blanked) - len(blanked[found.end() :].lstrip())  # the keys' first character
    end = _ORDER_END.search(blanked, first + 1)
    keys = query[first : end.start()] if end else query[first:].rstrip().removesuffix(";")
    return " ".join(keys.split()) or None
