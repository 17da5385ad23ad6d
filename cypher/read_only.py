"""Is a written query (the planner's, a candidate's, a human's `retry`) a read? Clauses that change the graph,
LOAD CSV (reads files on the FalkorDB host) and any procedure not on the list of read procedures are refused
before the query runs, each with why. Read on the code only (cypher_tokens.blank_code): a keyword inside a
string, a quoted name or a comment is none, and one split by a comment is still one. FalkorDB's read-only
command (GRAPH.RO_QUERY) stays the last line behind this check."""

from __future__ import annotations

import itertools
import re

from cypher.tokens import blank_code, keywords

WRITE_CLAUSES = frozenset({"CREATE", "MERGE", "SET", "DELETE", "DETACH", "REMOVE", "DROP", "FOREACH"})
# FalkorDB's procedures that only read (`CALL dbms.procedures()` lists each with its mode): the schema, the
# indexes' own queries and the path searches. Not the whole-graph algorithms (pageRank, betweenness, ...):
# nothing here needs them and each is a full scan.
READ_PROCEDURES = (
    "db.labels", "db.relationshipTypes", "db.propertyKeys", "db.indexes", "db.constraints", "db.meta.stats",
    "db.idx.fulltext.queryNodes", "db.idx.fulltext.queryRelationships",
    "db.idx.vector.queryNodes", "db.idx.vector.queryRelationships",
    "algo.SPpaths", "algo.SSpaths", "algo.BFS",
)
_READ = frozenset(name.lower() for name in READ_PROCEDURES)
# One part of a dotted name in blanked code: a bare word, or a quoted name (its contents blanked).
_NAME_PART = re.compile(r"\s*(`[^`]*`|[A-Za-z_][A-Za-z0-9_]*)\s*")


def _procedure(query: str, blanked: str, start: int) -> str | None:
    """The dotted procedure name a CALL at `start` (just after the keyword) calls, or None for CALL { ... }."""
    if blanked[start:].lstrip().startswith("{"):
        return None
    parts, i = [], start
    while True:
        match = _NAME_PART.match(blanked, i)
        if match is None:
            break
        part = query[match.start(1):match.end(1)]  # the name as written, quoted contents included
        parts.append(part[1:-1].replace("``", "`") if part.startswith("`") else part)
        i = match.end()
        if i < len(blanked) and blanked[i] == ".":
            i += 1
            continue
        break
    return ".".join(parts)


def write_clauses(query: str) -> list[str]:
    """The clauses of a query that would change the graph, upper-cased (in code only, not in its strings,
    quoted names or comments)."""
    return sorted({word for _, word in keywords(blank_code(query)) if word in WRITE_CLAUSES})


def refusals(query: str) -> list[str]:
    """Why the query may not run as a read: one sentence per reason, empty when it may."""
    blanked = blank_code(query)
    found = keywords(blanked)
    words = [word for _, word in found]
    writes = sorted({w for w in words if w in WRITE_CLAUSES})
    problems = []
    if writes:
        problems.append(f"the query writes ({', '.join(writes)}); only read-only queries may run")
    if any(a == "LOAD" and b == "CSV" for a, b in itertools.pairwise(words)):
        problems.append("the query uses LOAD CSV, which reads files on the database host; it may not run")
    for position, word in found:
        if word != "CALL":
            continue
        name = _procedure(query, blanked, position + len(word))
        if name is None:  # a subquery: its clauses are read with the rest
            continue
        if name.lower() not in _READ:
            problems.append(f"the query calls the procedure {name or '(none named)'}, which is not one of the "
                            f"read procedures a query may call ({', '.join(READ_PROCEDURES)})")
    return problems
