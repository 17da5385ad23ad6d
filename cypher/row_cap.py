"""A written query's rows capped in the query itself: a RETURN without a LIMIT gets one, so FalkorDB neither
builds nor sends more rows than the caller keeps (`UNWIND range(1, 30000000) AS x RETURN x` would otherwise
be built, sent and parsed whole before the rows were cut). The cap is the rows kept + 1, so that a truncated
result still shows it was truncated. A count or other aggregate keeps its meaning: the LIMIT applies to the
rows the RETURN makes, after aggregation."""

from __future__ import annotations

import re

from cypher.tokens import blank_code, depths, keywords

_INTEGER = re.compile(r"\s*(\d+)\b")


def _segments(blanked: str, level: list[int]) -> list[tuple[int, int]]:
    """(start, end) of each part of a UNION, at the top level of the query: each RETURN ends its own part."""
    starts, ends = [0], []
    for position, word in keywords(blanked):
        if word == "UNION" and level[position] == 0:
            ends.append(position)
            following = blanked[position + len(word):]
            skip = len(following) - len(following.lstrip())
            after = following.lstrip()
            starts.append(position + len(word) + skip + (3 if after.upper().startswith("ALL") else 0))
    return list(zip(starts, [*ends, len(blanked)], strict=True))


def capped_rows(query: str, cap: int) -> str:
    """The query with each top-level RETURN's rows limited to `cap`: a LIMIT added where there is none, a
    literal LIMIT above `cap` lowered to it; a LIMIT given by a parameter or an expression is left as it is."""
    blanked = blank_code(query)
    level = depths(blanked)
    for position, word in keywords(blanked):
        if word == "UNION" and level[position] == 0 and not blanked[position + len(word):].lstrip().upper() \
                .startswith("ALL"):
            # A plain UNION drops duplicates after its parts made their rows: a LIMIT in one part would
            # change the answer (and hide that it did). Left whole; FalkorDB's RESULTSET_SIZE bounds it.
            return query
    edits: list[tuple[int, int, str]] = []  # (start, end, replacement) in the original text
    for start, end in _segments(blanked, level):
        top = [(p, w) for p, w in keywords(blanked[:end]) if p >= start and level[p] == 0]
        returns = [p for p, w in top if w == "RETURN"]
        if not returns:
            continue  # a bare CALL of a procedure, say: nothing to cap here
        limits = [p for p, w in top if w == "LIMIT" and p > returns[-1]]
        if limits:
            at = limits[-1] + len("LIMIT")
            found = _INTEGER.match(blanked, at)
            if found and int(found.group(1)) > cap:
                edits.append((found.start(1), found.end(1), str(cap)))
            continue
        tail = blanked[:end].rstrip()
        if tail.endswith(";"):
            tail = tail[:-1].rstrip()
        edits.append((len(tail), len(tail), f" LIMIT {cap}"))
    for start, end, text in sorted(edits, reverse=True):
        query = query[:start] + text + query[end:]
    return query
