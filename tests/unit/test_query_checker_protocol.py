"""The checking process's side of the protocol (backends/query_checker_process.py): every line gets one
reply in order, and a line it cannot use is that line's error, never the end of the process."""

from __future__ import annotations

import io
import json

from backends.query_checker_process import serve

SCHEMA = {
    "nodes": {"Author": ["name"], "Book": ["title"]},
    "rels": [["Author", "WROTE", "Book"]],
    "rel_props": {},
    "graph": "library",
}
BACKWARDS = "MATCH (b:Book)-[:WROTE]->(a:Author) RETURN a.name"


def replies(*requests: object) -> list[dict]:
    out = io.StringIO()
    serve(io.StringIO("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in requests)), out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_a_schema_is_loaded_once_and_queries_are_checked_against_it() -> None:
    answered = replies(
        {"id": 1, "schema": "k", "check": "schema", "query": BACKWARDS},
        {"id": 2, "schema": "k", "load": SCHEMA},
        {"id": 3, "schema": "k", "check": "schema", "query": BACKWARDS},
        {"id": 4, "schema": "k", "check": "properties", "query": "MATCH (a:Author) RETURN a.title"},
    )
    assert answered[0] == {"id": 1, "missing": True}
    assert answered[1] == {"id": 2}
    assert [f["code"] for f in answered[2]["found"]] == ["cypher_guardrail.Warning.WrongDirectionPath"]
    assert [f["code"] for f in answered[3]["found"]] == ["cypher_guardrail.Warning.InvalidPropertyAccess"]


def test_lines_it_cannot_use_are_answered_with_an_error_and_the_next_line_still_served() -> None:
    answered = replies(
        "not json",
        {"no": "id"},
        {"id": 5, "schema": "k", "load": {"nodes": "not a mapping"}},
        {"id": 6, "schema": "k", "load": SCHEMA},
        {"id": 7, "schema": "k", "check": "schema", "query": "MATCH (m:Magazine) RETURN m"},
    )
    assert [r["id"] for r in answered] == [None, None, 5, 6, 7]
    assert all("error" in r for r in answered[:3])
    assert "found" in answered[4]
