"""Cypher read as code: the text with what is not code blanked (comments, and the contents of string literals
and backtick-quoted names), so that a keyword is searched where the parser would see one. Regular expressions
over the raw text are fooled by a quote inside a backtick-quoted name (``(:`a'b`) SET ... 'c'`` reads as one
string hiding the SET) and by a comment between words (``LOAD/**/CSV``)."""

from __future__ import annotations

import re


def blank_code(query: str) -> str:
    """The query, the same length, with comments turned to spaces and the contents of each string literal and
    backtick-quoted name turned to spaces (the quotes stay: `x` still reads as one name, 'x' as one string).
    An unterminated string, name or comment blanks the rest of the text: FalkorDB rejects such a query."""
    out = list(query)
    i, n = 0, len(query)
    while i < n:
        c = query[i]
        if c in "'\"":
            j = i + 1
            while j < n and query[j] != c:
                j += 2 if query[j] == "\\" else 1
            end = min(j, n)
            out[i + 1:end] = " " * (end - i - 1)
            i = end + 1
        elif c == "`":
            j = i + 1
            while j < n:  # `` inside a quoted name is one backtick
                if query[j] == "`" and j + 1 < n and query[j + 1] == "`":
                    j += 2
                elif query[j] == "`":
                    break
                else:
                    j += 1
            end = min(j, n)
            out[i + 1:end] = " " * (end - i - 1)
            i = end + 1
        elif query.startswith("//", i):
            j = query.find("\n", i)
            end = n if j < 0 else j
            out[i:end] = " " * (end - i)
            i = end
        elif query.startswith("/*", i):
            j = query.find("*/", i + 2)
            end = n if j < 0 else j + 2
            out[i:end] = " " * (end - i)
            i = end
        else:
            i += 1
    return "".join(out)


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def _last_code(blanked: str, end: int) -> int:
    """The position of the last non-space character before `end`, or -1."""
    end -= 1
    while end >= 0 and blanked[end].isspace():
        end -= 1
    return end


def _owns_property(blanked: str, dot: int) -> bool:
    """Is the dot at `dot` a property access: after a name, a quoted name or a closing bracket (`n.set`,
    `(n).set`), not a float's (`1.`)?"""
    at = _last_code(blanked, dot)
    if at < 0:
        return False
    if blanked[at] in "`)]}":
        return True
    start = at
    while start >= 0 and blanked[start] in _NAME_CHARS:
        start -= 1
    return start < at and not blanked[start + 1].isdigit()


def keywords(blanked: str) -> list[tuple[int, str]]:
    """(position, word upper-cased) of each bare word of blanked code that could be a clause keyword: not a
    property (`n.set`), a label or relationship type (`:Set`), a parameter (`$set`) or a map key (`{set: 1}`)."""
    found = []
    for match in _WORD.finditer(blanked):
        at = _last_code(blanked, match.start())
        before = blanked[at] if at >= 0 else ""
        if before in (":", "$") or (before == "." and _owns_property(blanked, at)):
            continue
        if before in ("{", ","):
            after = match.end()
            while after < len(blanked) and blanked[after].isspace():
                after += 1
            if after < len(blanked) and blanked[after] == ":":
                continue
        found.append((match.start(), match.group(0).upper()))
    return found


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
