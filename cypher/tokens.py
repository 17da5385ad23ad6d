"""Cypher read as code: the text with what is not code blanked (comments, and the contents of string literals
and backtick-quoted names), so that a keyword is searched where the parser would see one, split by FalkorDB's
own lexical rules (cypher/lexer.py). Regular expressions over the raw text are fooled by a quote inside a
backtick-quoted name (``(:`a'b`) SET ... 'c'`` reads as one string hiding the SET), by a comment between words
(``LOAD/**/CSV``) and by a `$` in a name (``x$ CREATE`` reads as a parameter named CREATE)."""

from __future__ import annotations

from cypher.lexer import Kind, Token, code_tokens, tokens


def blank_code(query: str) -> str:
    """The query, the same length, with comments turned to spaces and the contents of each string literal and
    backtick-quoted name turned to spaces (the quotes stay: `x` still reads as one name, 'x' as one string).
    One that never closes is none (FalkorDB rejects the query): its text stays as it is."""
    out = list(query)
    for token in tokens(query):
        if token.kind is Kind.COMMENT:
            out[token.start : token.end] = " " * (token.end - token.start)
        elif token.kind in (Kind.STRING, Kind.QUOTED_NAME):
            out[token.start + 1 : token.end - 1] = " " * (token.end - token.start - 2)
    return "".join(out)


def _symbol(query: str, found: list[Token], at: int, symbols: str) -> bool:
    """Is the code token at index `at` one of these one-character symbols?"""
    return 0 <= at < len(found) and found[at].kind is Kind.SYMBOL and found[at].text(query) in symbols


def keywords(query: str) -> list[tuple[int, str]]:
    """(position, word upper-cased) of each bare name of a query (or of its blanked code: the same) that could
    be a clause keyword: not a property (`n.set`), a label or relationship type (`:Set`), a parameter (`$set`)
    or a map key (`{set: 1}`). Whitespace and comments between are skipped, as the parser skips them."""
    found = code_tokens(query)
    words = []
    for index, token in enumerate(found):
        if token.kind is not Kind.NAME or _symbol(query, found, index - 1, ".:$"):
            continue
        if _symbol(query, found, index - 1, "{,") and _symbol(query, found, index + 1, ":"):
            continue
        words.append((token.start, token.text(query).upper()))
    return words


def depths(blanked: str) -> list[int]:
    """The bracket depth ((), [], {}) at each position of blanked code."""
    out, depth = [], 0
    for c in blanked:
        if c in ")]}":
            depth = max(0, depth - 1)
        out.append(depth)
        if c in "([{":
            depth += 1
    return out
