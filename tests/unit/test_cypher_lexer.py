"""Cypher split as FalkorDB splits it (its grammar's lexical rules), and the keywords the read-only check and the
row cap find in it: `$` belongs to a name, a backtick-quoted name has no escape, a string's quote is escaped by a
backslash, and what never closes is no string, name or comment."""

from __future__ import annotations

import pytest

from cypher.lexer import Kind, code_tokens, tokens
from cypher.read_only import refusals
from cypher.tokens import blank_code, keywords


def split(query: str) -> list[tuple[str, str]]:
    return [(t.kind.value, t.text(query)) for t in code_tokens(query)]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("x$ CREATE", [("name", "x$"), ("name", "CREATE")]),
        ("CREATE$ a$$b _$", [("name", "CREATE$"), ("name", "a$$b"), ("name", "_$")]),
        ("$ /* c */ p", [("symbol", "$"), ("name", "p")]),
        ("`a``b`", [("quoted name", "`a`"), ("quoted name", "`b`")]),
        ("`it's` `a\nb`", [("quoted name", "`it's`"), ("quoted name", "`a\nb`")]),
        (
            r"'it\'s' 'a\\' '\z' " + r'"say \"hi\""',
            [("string", r"'it\'s'"), ("string", r"'a\\'"), ("string", r"'\z'"), ("string", r'"say \"hi\""')],
        ),
        ("'open", [("symbol", "'"), ("name", "open")]),
        ("`open", [("symbol", "`"), ("name", "open")]),
        ("1 /* open", [("number", "1"), ("symbol", "/"), ("symbol", "*"), ("name", "open")]),
        (
            "1..5 0x1F 1e3 .5 1.5e2 1$",
            [
                ("number", "1"),
                ("symbol", ".."),
                ("number", "5"),
                ("number", "0x1F"),
                ("number", "1e3"),
                ("number", ".5"),
                ("number", "1.5e2"),
                ("number", "1$"),
            ],
        ),
        ("a\rb", [("name", "a"), ("symbol", "\r"), ("name", "b")]),
    ],
)
def test_tokens_as_falkordb_reads_them(query: str, expected: list[tuple[str, str]]) -> None:
    assert split(query) == expected


def test_a_line_comment_runs_to_the_line_end_past_a_lone_carriage_return() -> None:
    query = "1 // a\r CREATE\r\n2"
    assert [(t.kind, t.text(query)) for t in tokens(query)] == [
        (Kind.NUMBER, "1"),
        (Kind.SPACE, " "),
        (Kind.COMMENT, "// a\r CREATE"),
        (Kind.SPACE, "\r\n"),
        (Kind.NUMBER, "2"),
    ]


@pytest.mark.parametrize(
    ("query", "words"),
    [
        ("UNWIND [1] AS x$ CREATE (:P)", ["UNWIND", "AS", "X$", "CREATE"]),
        (
            "RETURN $create, n.set, n . /* */ set, {set: 1}, $ /* c */ delete, 1 AS CREATE$",
            ["RETURN", "N", "N", "AS", "CREATE$"],
        ),
        ("MATCH (n:Set)-[:DELETE]->() RETURN n", ["MATCH", "N", "RETURN", "N"]),
        ("LOAD/**/CSV FROM 'x' AS row", ["LOAD", "CSV", "FROM", "AS", "ROW"]),
        ("RETURN 'CREATE' AS `SET` // DELETE", ["RETURN", "AS"]),
    ],
)
def test_keywords_are_the_bare_names(query: str, words: list[str]) -> None:
    assert [w for _, w in keywords(query)] == words
    assert keywords(blank_code(query)) == keywords(query)


def test_blank_code_keeps_an_unclosed_string_as_code() -> None:
    assert blank_code("RETURN 'a' /* b */ 'c") == "RETURN ' '         'c"


@pytest.mark.parametrize(
    ("query", "why"),
    [
        ("CALL db./* just reading */labels()", "a comment inside a dotted name"),
        ("RETURN string.//\njoin(['a'], ',')", "a comment inside a dotted name"),
        ("CALL db.labels$()", "the procedure db.labels$, which is not one of the read procedures"),
        ("WITH 1 AS x$ CALL db.idx.fulltext.drop('Person') RETURN 1", "the procedure db.idx.fulltext.drop"),
    ],
)
def test_refused(query: str, why: str) -> None:
    assert any(why in problem for problem in refusals(query)), refusals(query)


@pytest.mark.parametrize(
    "query",
    [
        "CALL `db.labels`()",
        "CALL db . labels()",
        "CALL /* the labels */ db.labels()",
        "WITH 1 AS x$ RETURN x$",
        "CYPHER p='CREATE (:X)' RETURN $p",
        "RETURN 1 AS CREATE$",
    ],
)
def test_read(query: str) -> None:
    assert refusals(query) == []
