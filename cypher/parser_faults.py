"""Queries FalkorDB's parser cannot survive. A comment between the parts of a dotted name (`db./**/labels()`,
`string.//\\njoin(...)`) aborts the whole server (SIGABRT in `cypher_fparse`, FalkorDB 4.16), EXPLAIN included:
one such query from a planner or a human's retry would stop the graph for everyone. Whitespace there is fine."""

from __future__ import annotations

from cypher.lexer import Kind, Token, tokens

_NAMES = (Kind.NAME, Kind.QUOTED_NAME)


def comment_in_dotted_name(query: str) -> bool:
    """Does a comment stand between two parts of a dotted name (`a /**/ . b`, `a . /**/ b`)?"""
    found = tokens(query)
    for index, token in enumerate(found):
        if token.kind is not Kind.SYMBOL or token.text(query) != ".":
            continue
        before, after = _side(found, index, -1), _side(found, index, 1)
        if before is None or after is None:
            continue
        gap = found[min(before, after) + 1 : max(before, after)]
        if found[before].kind in _NAMES and found[after].kind in _NAMES and any(t.kind is Kind.COMMENT for t in gap):
            return True
    return False


def _side(found: list[Token], index: int, step: int) -> int | None:
    """The index of the next token from `index` in direction `step` that is neither whitespace nor a comment."""
    i = index + step
    while 0 <= i < len(found) and found[i].kind in (Kind.SPACE, Kind.COMMENT):
        i += step
    return i if 0 <= i < len(found) else None
