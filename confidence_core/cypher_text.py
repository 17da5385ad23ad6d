"""Cypher text helpers: deterministic broadening of a read-only query (exact matches become
case-insensitive CONTAINS, bounded variable-length paths get more hops), and the literal values a
query names, so the evaluator can check that they exist in the graph."""

from __future__ import annotations

import re

MAX_HOPS = 6

# (n:Label {prop: 'value', ...}) -> (n:Label) plus a WHERE condition on n.prop
_INLINE = re.compile(r"\((\w+)(:[\w`]+)?\s*\{([^{}]*)\}\s*\)")
_PAIR = re.compile(r"(\w+)\s*:\s*'((?:[^'\\]|\\.)*)'")
# n.prop = 'value'  ->  toLower(n.prop) CONTAINS toLower('value')
_EQUALS = re.compile(r"(\w+\.\w+)\s*=\s*'((?:[^'\\]|\\.)*)'")
_HOPS = re.compile(r"\*(\d*)\.\.(\d+)")
_CONTAINS = re.compile(r"CONTAINS\s+(?:toLower\s*\(\s*)?'((?:[^'\\]|\\.)*)'", re.IGNORECASE)


def _contains(prop: str, value: str) -> str:
    return f"toLower({prop}) CONTAINS toLower('{value}')"


def broaden_cypher(query: str) -> str | None:
    conditions: list[str] = []

    def inline(match: re.Match[str]) -> str:
        var, label, body = match.group(1), match.group(2) or "", match.group(3)
        pairs = _PAIR.findall(body)
        rest = _PAIR.sub("", body).strip(" ,")
        if not pairs or rest:  # keep maps with non-string values as they are
            return match.group(0)
        conditions.extend(_contains(f"{var}.{prop}", value) for prop, value in pairs)
        return f"({var}{label})"

    broadened = _INLINE.sub(inline, query)
    broadened = _EQUALS.sub(lambda m: _contains(m.group(1), m.group(2)), broadened)
    broadened = _HOPS.sub(lambda m: f"*{m.group(1)}..{min(MAX_HOPS, int(m.group(2)) + 2)}", broadened)
    if conditions:
        clause = " AND ".join(conditions)
        where = re.search(r"\bWHERE\b", broadened, re.IGNORECASE)
        if where:
            broadened = f"{broadened[:where.end()]} {clause} AND{broadened[where.end():]}"
        else:
            ret = re.search(r"\b(WITH|RETURN)\b", broadened, re.IGNORECASE)
            if ret is None:
                return None
            broadened = f"{broadened[:ret.start()]}WHERE {clause} {broadened[ret.start():]}"
    return broadened if broadened != query else None


def query_literals(query: str) -> list[tuple[str, str]]:
    """(value, "exact" | "contains") for each string literal the query matches on, in order, deduplicated."""
    found: list[tuple[str, str]] = []
    for match in _INLINE.finditer(query):
        found += [(value, "exact") for _, value in _PAIR.findall(match.group(3))]
    found += [(m.group(2), "exact") for m in _EQUALS.finditer(query)]
    found += [(m.group(1), "contains") for m in _CONTAINS.finditer(query)]
    seen: set[tuple[str, str]] = set()
    return [f for f in found if f[0].strip() and not (f in seen or seen.add(f))]


_STRING = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
_WRITE = re.compile(r"\b(CREATE|MERGE|SET|DELETE|DETACH|REMOVE|DROP|LOAD\s+CSV|FOREACH)\b", re.IGNORECASE)


def write_clauses(query: str) -> list[str]:
    """The clauses of a query that would change the graph (outside string literals), upper-cased."""
    return sorted({m.group(1).upper() for m in _WRITE.finditer(_STRING.sub("''", query))})
