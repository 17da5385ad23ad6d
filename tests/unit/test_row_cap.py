"""A read's rows are capped in the query itself, where the RETURN's LIMIT goes, without changing what it
means; words in strings, quoted names and comments are no clauses."""

from __future__ import annotations

import pytest

from cypher.read_only import refusals
from cypher.row_cap import capped_rows


@pytest.mark.parametrize(
    ("query", "capped"),
    [
        ("UNWIND range(1, 30000000) AS x RETURN x", "UNWIND range(1, 30000000) AS x RETURN x LIMIT 201"),
        ("MATCH (n) RETURN n.name ORDER BY n.name LIMIT 5", "MATCH (n) RETURN n.name ORDER BY n.name LIMIT 5"),
        ("MATCH (n) RETURN n.name LIMIT 5000", "MATCH (n) RETURN n.name LIMIT 201"),
        ("MATCH (n) RETURN n.name SKIP 3", "MATCH (n) RETURN n.name SKIP 3 LIMIT 201"),
        ("MATCH (n) RETURN n // the end", "MATCH (n) RETURN n LIMIT 201 // the end"),
        ("MATCH (n) RETURN n;", "MATCH (n) RETURN n LIMIT 201;"),
        ("MATCH (n) RETURN 'LIMIT 3'", "MATCH (n) RETURN 'LIMIT 3' LIMIT 201"),
        ("MATCH (n) WITH n LIMIT 1 RETURN n", "MATCH (n) WITH n LIMIT 1 RETURN n LIMIT 201"),
        (
            "MATCH (n) CALL { WITH n MATCH (n)-->(m) RETURN m } RETURN m",
            "MATCH (n) CALL { WITH n MATCH (n)-->(m) RETURN m } RETURN m LIMIT 201",
        ),
        ("RETURN 1 AS x UNION ALL RETURN 2 AS x LIMIT 3", "RETURN 1 AS x LIMIT 201 UNION ALL RETURN 2 AS x LIMIT 3"),
        # a plain UNION drops duplicates after its parts: a LIMIT in a part would change the answer
        (
            "UNWIND range(1, 1000) AS x RETURN x / 300 AS v UNION RETURN -1 AS v",
            "UNWIND range(1, 1000) AS x RETURN x / 300 AS v UNION RETURN -1 AS v",
        ),
        ("MATCH (n) RETURN n LIMIT $k", "MATCH (n) RETURN n LIMIT $k"),
        # FalkorDB reads `x$` as one name: the RETURN after it is a RETURN
        (
            "WITH range(1,30000000) AS l$ UNWIND l$ AS x$ RETURN x$",
            "WITH range(1,30000000) AS l$ UNWIND l$ AS x$ RETURN x$ LIMIT 201",
        ),
        ("MATCH (n) RETURN n LIMIT 0x7FFFFFFF", "MATCH (n) RETURN n LIMIT 201"),
        ("RETURN 1 AS x$ UNION ALL RETURN 2 AS x$", "RETURN 1 AS x$ LIMIT 201 UNION ALL RETURN 2 AS x$ LIMIT 201"),
        ("CALL db.labels()", "CALL db.labels()"),
    ],
)
def test_a_return_without_a_limit_gets_one(query: str, capped: str) -> None:
    assert capped_rows(query, 201) == capped


@pytest.mark.parametrize(
    "query",
    [
        "MATCH (n) RETURN n.set, n.create",
        "MATCH (n:Set) RETURN n",
        "MATCH (n {set: 1}) RETURN n",
        "MATCH (n) WHERE n.note = 'please DELETE me' RETURN n",
        "MATCH (n) RETURN n // SET",
        "MATCH (n) /* DELETE */ RETURN n",
        "MATCH (n) RETURN n.name AS `SET`",
        "call DB.Labels() yield label return label",
        "CALL db.idx.fulltext.queryNodes('Supplier', 'acme') YIELD node RETURN node.name",
    ],
)
def test_reads_are_not_refused(query: str) -> None:
    assert refusals(query) == []
