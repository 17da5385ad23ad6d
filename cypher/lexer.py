"""Cypher split into tokens as FalkorDB splits it. Its parser is built from libcypher-parser's grammar
(`parser.leg`, vendored in FalkorDB's deps/), whose lexical rules are followed here to the character, because a
check that reads a token differently from the database can be walked around:

- a name is `[A-Za-z_]` then `[A-Za-z0-9_$]*`: `x$ CREATE` is the name `x$`, then a CREATE clause, and `CREATE$`
  is a name, no keyword;
- a backtick-quoted name ends at the next backtick (no escape: `` `a``b` `` is two names, which FalkorDB rejects);
- a string is in single or double quotes, a backslash escaping the character after it;
- a number is a digit then `[A-Za-z0-9_$]*` (`0x1F`, and `1$`, which FalkorDB rejects), or a float;
- `//` comments to the end of the line (`\\n` or `\\r\\n`), `/*` to the first `*/`;
- whitespace is space, tab and line ends, nothing else.

A string, quoted name or comment that never closes is none: FalkorDB rejects the query, and its text stays code
here (the opening quote one symbol), so no keyword can hide in it. A parameter is the symbol `$` and the name
after it (FalkorDB allows whitespace and comments between them): `code_tokens` callers see it as that pair."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum


class Kind(StrEnum):
    NAME = "name"
    QUOTED_NAME = "quoted name"
    STRING = "string"
    NUMBER = "number"
    SYMBOL = "symbol"
    SPACE = "space"
    COMMENT = "comment"


@dataclass(frozen=True, slots=True)
class Token:
    kind: Kind
    start: int
    end: int

    def text(self, query: str) -> str:
        return query[self.start : self.end]


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*+")
# The grammar's float-string (either form) before its integer-string, as its `atom` tries them. Possessive, as a
# PEG's repetitions are: no backtracking (a long run of digits would otherwise cost quadratic time).
_NUMBER = re.compile(
    r"[0-9]++\.?+[0-9]*+[eE][-+]?+[0-9][A-Za-z0-9_$]*+|[0-9]*+\.[0-9][A-Za-z0-9_$]*+"
    r"|[0-9][A-Za-z0-9_$]*+"
)
_SPACE = re.compile(r"(?:[ \t\n]|\r\n)++")


def _closing(query: str, start: int) -> int | None:
    """The end of the string or quoted name opening at `start`, or None if it never closes."""
    quote, i, n = query[start], start + 1, len(query)
    while i < n:
        c = query[i]
        if c == quote:
            return i + 1
        # In a string a backslash takes the next character with it (\' and \" are escapes; any other character
        # after one is plain text, but never the closing quote either); in a quoted name it is plain text.
        i += 2 if c == "\\" and quote != "`" else 1
    return None


def _comment_end(query: str, start: int) -> int | None:
    if query.startswith("//", start):
        end = query.find("\n", start)
        if end < 0:
            return len(query)
        return end - 1 if query[end - 1] == "\r" else end
    if query.startswith("/*", start):
        end = query.find("*/", start + 2)
        return None if end < 0 else end + 2
    return None


def _token_at(query: str, i: int, unclosed: set[str]) -> Token:
    """The token at `i`. `unclosed` holds the openers (a quote, `/*`) already found never to close: a later one
    of the same kind cannot close either (a scan from the earlier one reached every later opener or stepped over
    it as an escaped character, and goes on from there exactly as a scan from the later one would), so it is
    not searched again. Without that, `'` followed by thousands of `\\'` costs time quadratic in its length."""
    c = query[i]
    for kind, pattern in ((Kind.SPACE, _SPACE), (Kind.NAME, _NAME), (Kind.NUMBER, _NUMBER)):
        match = pattern.match(query, i)
        if match:
            return Token(kind, i, match.end())
    if c in "'\"`":
        end = None if c in unclosed else _closing(query, i)
        if end is not None:
            return Token(Kind.QUOTED_NAME if c == "`" else Kind.STRING, i, end)
        unclosed.add(c)
    elif c == "/":
        opener = query[i : i + 2]
        end = None if opener in unclosed else _comment_end(query, i)
        if end is not None:
            return Token(Kind.COMMENT, i, end)
        unclosed.add(opener)
    elif query.startswith("..", i):
        return Token(Kind.SYMBOL, i, i + 2)
    return Token(Kind.SYMBOL, i, i + 1)


def tokens(query: str) -> list[Token]:
    """Every token of the query, whitespace and comments included, end to end."""
    out: list[Token] = []
    unclosed: set[str] = set()
    i = 0
    while i < len(query):
        token = _token_at(query, i, unclosed)
        out.append(token)
        i = token.end
    return out


def code_tokens(query: str) -> list[Token]:
    """The tokens the parser reads: without whitespace and comments."""
    return [t for t in tokens(query) if t.kind not in (Kind.SPACE, Kind.COMMENT)]
