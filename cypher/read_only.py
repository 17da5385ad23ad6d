"""Is a written query (the planner's, a candidate's, a human's `retry`) a read? Clauses that change the graph,
LOAD CSV (reads files on the FalkorDB host, and fetches https URLs even under GRAPH.RO_QUERY) and any procedure
not on the list of read procedures are refused before the query runs, each with why. Read on the code only, split
into tokens by FalkorDB's own lexical rules (cypher/lexer.py): a keyword inside a string, a quoted name or a
comment is none, one split by a comment is still one, and a name may end in `$` (`x$ CREATE` hides nothing).
A comment inside a dotted name is refused too: FalkorDB's parser aborts on it (cypher/parser_faults.py).
FalkorDB's read-only command (GRAPH.RO_QUERY) stays the last line behind this check, for writes."""

from __future__ import annotations

import itertools
import re

from cypher.lexer import Kind, Token, code_tokens
from cypher.parser_faults import comment_in_dotted_name
from cypher.tokens import blank_code, keywords

WRITE_CLAUSES = frozenset({"CREATE", "MERGE", "SET", "DELETE", "DETACH", "REMOVE", "DROP", "FOREACH"})
# FalkorDB's procedures that only read (`CALL dbms.procedures()` lists each with its mode): the schema, the
# indexes' own queries and the path searches. Not the whole-graph algorithms (pageRank, betweenness, ...):
# nothing here needs them and each is a full scan.
READ_PROCEDURES = (
    "db.labels",
    "db.relationshipTypes",
    "db.propertyKeys",
    "db.indexes",
    "db.constraints",
    "db.meta.stats",
    "db.idx.fulltext.queryNodes",
    "db.idx.fulltext.queryRelationships",
    "db.idx.vector.queryNodes",
    "db.idx.vector.queryRelationships",
    "algo.SPpaths",
    "algo.SSpaths",
    "algo.BFS",
)
_READ = frozenset(name.lower() for name in READ_PROCEDURES)
# FalkorDB reads a query as a C string: it stops at a NUL wherever it stands (a string's included), so what
# follows one, the row cap among it, never runs. Other control characters have no place outside a string.
_NUL = "\x00"
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _procedure(query: str, code: list[Token], after: int) -> str | None:
    """The dotted procedure name a CALL calls (`after`: the index of the code token after the keyword), as
    FalkorDB reads it (a quoted part is taken whole, dots included), or None for CALL { ... }."""
    parts: list[str] = []
    i = after
    while i < len(code) and code[i].kind in (Kind.NAME, Kind.QUOTED_NAME):
        text = code[i].text(query)
        parts.append(text[1:-1] if code[i].kind is Kind.QUOTED_NAME else text)
        if i + 1 < len(code) and code[i + 1].text(query) == ".":
            i += 2
            continue
        break
    if not parts and after < len(code) and code[after].text(query) == "{":
        return None
    return ".".join(parts)


def write_clauses(query: str) -> list[str]:
    """The clauses of a query that would change the graph, upper-cased (in code only, not in its strings,
    quoted names or comments)."""
    return sorted({word for _, word in keywords(query) if word in WRITE_CLAUSES})


def refusals(query: str) -> list[str]:
    """Why the query may not run as a read: one sentence per reason, empty when it may."""
    if _NUL in query or _CONTROL.search(blank_code(query)):
        return [
            "the query holds a control character (a NUL, say) outside a string; the database would stop "
            "reading at it, so it may not run"
        ]
    found = keywords(query)
    words = [word for _, word in found]
    writes = sorted({w for w in words if w in WRITE_CLAUSES})
    problems = []
    if writes:
        problems.append(f"the query writes ({', '.join(writes)}); only read-only queries may run")
    if any(a == "LOAD" and b == "CSV" for a, b in itertools.pairwise(words)):
        problems.append("the query uses LOAD CSV, which reads files on the database host; it may not run")
    code = code_tokens(query)
    starts = {token.start: index for index, token in enumerate(code)}
    for position, word in found:
        if word != "CALL":
            continue
        name = _procedure(query, code, starts[position] + 1)
        if name is None:  # a subquery: its clauses are read with the rest
            continue
        if name.lower() not in _READ:
            problems.append(
                f"the query calls the procedure {name or '(none named)'}, which is not one of the "
                f"read procedures a query may call ({', '.join(READ_PROCEDURES)})"
            )
    if comment_in_dotted_name(query):
        problems.append(
            "the query has a comment inside a dotted name (as in db./* */labels), which stops "
            "FalkorDB's parser and the server with it; write the name without one"
        )
    return problems
