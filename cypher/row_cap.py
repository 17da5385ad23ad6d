"""A written query's rows capped in the query itself: a RETURN without a LIMIT gets one, so FalkorDB neither
builds nor sends more rows than the caller keeps (`UNWIND range(1, 30000000) AS x RETURN x` would otherwise
be built, sent and parsed whole before the rows were cut). The cap is the rows kept + 1, so that a truncated
result still shows it was truncated. A count or other aggregate keeps its meaning: the LIMIT applies to the
rows the RETURN makes, after aggregation. Clauses are found as FalkorDB's parser finds them (cypher/lexer.py):
`x$ RETURN x$` returns, whatever the `$` suggests."""

from __future__ import annotations

from cypher.lexer import Kind, Token, code_tokens
from cypher.tokens import blank_code, depths, keywords


def _integer(text: str) -> int | None:
    """An integer literal's value, as FalkorDB reads it (decimal or 0x hex); None for anything else."""
    try:
        return int(text, 16) if text[:2].lower() == "0x" else int(text, 10) if text.isdigit() else None
    except ValueError:
        return None


def _parts(query: str, code: list[Token], top: list[tuple[int, str]]) -> list[list[tuple[int, str]]] | None:
    """The top-level keywords of each part of a UNION ALL (one part without a UNION); None for a plain UNION,
    which drops duplicates after its parts made their rows: a LIMIT in one part would change the answer (and
    hide that it did). It is left whole; FalkorDB's RESULTSET_SIZE bounds it."""
    index = {token.start: i for i, token in enumerate(code)}
    parts: list[list[tuple[int, str]]] = [[]]
    skip = -1  # the ALL of a UNION ALL
    for position, word in top:
        if word == "UNION":
            after = index[position] + 1
            if after >= len(code) or code[after].text(query).upper() != "ALL":
                return None
            parts.append([])
            skip = code[after].start
        elif position != skip:
            parts[-1].append((position, word))
    return parts


def capped_rows(query: str, cap: int) -> str:
    """The query with each top-level RETURN's rows limited to `cap`: a LIMIT added where there is none, a
    literal LIMIT above `cap` lowered to it; a LIMIT given by a parameter or an expression is left as it is."""
    code = code_tokens(query)
    index = {token.start: i for i, token in enumerate(code)}
    level = depths(blank_code(query))
    top = [(p, w) for p, w in keywords(query) if level[p] == 0]
    unions = [p for p, w in top if w == "UNION"]
    parts = _parts(query, code, top)
    if parts is None:
        return query
    edits: list[tuple[int, int, str]] = []  # (start, end, replacement) in the original text
    for part, end in zip(parts, [*unions, len(query)], strict=True):
        returns = [p for p, w in part if w == "RETURN"]
        if not returns:
            continue  # a bare CALL of a procedure, say: nothing to cap here
        limits = [p for p, w in part if w == "LIMIT" and p > returns[-1]]
        if limits:
            after = index[limits[-1]] + 1
            value = _integer(code[after].text(query)) if after < len(code) and code[after].kind is Kind.NUMBER else None
            if value is not None and value > cap:
                edits.append((code[after].start, code[after].end, str(cap)))
            continue
        last = [t for t in code if t.end <= end]
        if last and last[-1].text(query) == ";":
            last.pop()
        edits.append((last[-1].end, last[-1].end, f" LIMIT {cap}"))
    for start, end, text in sorted(edits, reverse=True):
        query = query[:start] + text + query[end:]
    return query
