"""Seeded random Cypher for the read-only check's differential test: small queries of a few clauses, about half
with a write in them (CREATE, MERGE, SET, DELETE, REMOVE, FOREACH, CALL { }, a write procedure, LOAD CSV), put
together from pieces with the lexical corners between them that a check can read differently from FalkorDB:
names with `$` (`x$ CREATE`) and in backticks (with quotes, comment marks and doubled backticks inside),
strings in both quotes with escapes, `/* */` and `//` comments holding writes and quote marks, parameters,
and now and then a stray quote or comment mark. Each write here changes the scratch graph (tests/attacks/
scratch_graph.py) or makes a connection to its listener when FalkorDB runs it. Two things that stop FalkorDB
4.16 itself are left out: a comment inside a dotted name (the check refuses it: tests/attacks/
test_parser_abort.py), and a write in a query that also reads a full-text index (an assertion on the index's
lock, which only a write trips: the agent's own queries reach FalkorDB read-only)."""

from __future__ import annotations

import random

# Text a comment may hold: writes, and the marks that open strings, names, parameters and comments.
BAIT = [
    "CREATE (:Pwned)",
    "SET s.pwned = 1",
    "x$ DETACH DELETE s",
    "'",
    '"',
    "`",
    "$",
    "\\",
    "/*",
    "//",
    "*",
    "MERGE (:Pwned)",
    "CALL db.idx.fulltext.drop('Person')",
    "LOAD CSV FROM 'https://127.0.0.1:9/' AS r",
]
NAMES = [
    "x",
    "x$",
    "x$y",
    "a$$",
    "_$",
    "`x`",
    "`x$`",
    "`CREATE (:Pwned)`",
    "`it's`",
    '`say "hi"`',
    "`/* no`",
    "`// no`",
    "CREATE$",
    "set$x",
    "`a``b`",
    "`a\nb`",
    "v1",
    "`$ SET s.pwned = 1`",
    "set",
    "row$",
]
STRINGS = [
    "'CREATE (:Pwned)'",
    '"SET s.pwned = 1"',
    r"'it\'s'",
    r'"say \"hi\" CREATE (:Pwned)"',
    "'a`b'",
    '"/* no comment"',
    "'// no comment'",
    r"'a\\'",
    r"'\\'",
    "'x$ CREATE (:Pwned)'",
    "'$x'",
    '"it\'s"',
    "'say \"hi\"'",
    r"'\''",
    "'line\nbreak'",
    r"'\z'",
    r"'a\\' + '\''",
    r'"\\" + "\""',
]
EXPRESSIONS = [
    *STRINGS,
    "1",
    "2.5",
    "1e3",
    ".5",
    "0x1F",
    "[1, 2]",
    "{set: 1, create: 'x'}",
    "{`CREATE`: 1}",
    "toUpper('set')",
    "$p",
    "$ p",
    "$`p`",
    "$/* CREATE (:Pwned) */p",
    "size('DELETE')",
    "1 + 1",
    "[i IN [1] | i]",
]
LISTS = ["[1, 2, 3]", "range(1, 40)", "range(1, 40)", "['CREATE (:Pwned)']", "[]"]
# Marks that open or close something, dropped between pieces now and then.
STRAYS = ["'", '"', "`", "$", "/*", "*/", "\\", "//"]
WRITES = [
    ["CREATE", "(:Pwned {k: 1})"],
    ["MERGE", "(:Pwned {k: 2})"],
    ["MATCH", "(s:Seed)", "SET", "s.pwned", "=", "1"],
    ["MATCH", "(s:Seed)", "SET", "s:Pwned"],
    ["MATCH", "(s:Seed)", "SET", "s", "+=", "{pwned: 1}"],
    ["MATCH", "(s:Seed)", "REMOVE", "s.name"],
    ["MATCH", "(s:Seed)", "REMOVE", "s:Seed"],
    ["MATCH", "(s:Seed)", "DETACH", "DELETE", "s"],
    ["MATCH", "(:Seed)-[r:LINKS]->()", "DELETE", "r"],
    ["MERGE", "(p:Person {name: 'p'})", "ON", "MATCH", "SET", "p.pwned", "=", "1"],
    ["FOREACH", "(i IN [1] |", "CREATE", "(:Pwned))"],
    ["CALL", "{", "CREATE", "(:Pwned)", "}"],
    ["CALL", "db.idx.fulltext.drop('Person')"],
    ["CALL", "db.idx.fulltext.createNodeIndex('Seed', 'name')"],
    ["LOAD", "CSV", "FROM", "{url}", "AS", "row"],
    ["LOAD", "CSV", "WITH", "HEADERS", "FROM", "{url}", "AS", "row"],
]


def _comment(rng: random.Random) -> str:
    if rng.random() < 0.6:
        return f"/*{rng.choice(BAIT)}*/"
    # a lone carriage return ends no line comment in FalkorDB: what follows it stays in the comment
    text = rng.choice([*BAIT, "\rCREATE (:Pwned)"])
    return "//" + text + rng.choice(["\n", "\r\n"])


def _separator(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.7:
        return rng.choice([" ", " ", " ", "\n", "\t", "\r\n", "  "])
    if roll < 0.95:
        return rng.choice(["", " "]) + _comment(rng) + rng.choice(["", " "])
    if roll < 0.98:
        return f" {rng.choice(STRAYS)} "
    return ""  # pieces run together


def _first(rng: random.Random, name: str) -> list[str]:
    """A clause (or two) that binds `name`."""
    return rng.choice(
        [
            ["UNWIND", rng.choice(LISTS), "AS", name],
            ["WITH", rng.choice(EXPRESSIONS), "AS", name],
            ["MATCH", "(s:Seed)", "WITH", "s", ",", rng.choice(EXPRESSIONS), "AS", name],
            ["OPTIONAL", "MATCH", "(s:Seed)", "WITH", "count(s)", "AS", name],
            ["CALL", "db.labels()", "YIELD", "label", "WITH", "label", "AS", name],
        ]
    )


def _last(rng: random.Random, name: str) -> list[str]:
    other = rng.choice([n for n in NAMES if n != name])
    return rng.choice(
        [
            ["RETURN", name],
            ["RETURN", name, ",", rng.choice(EXPRESSIONS), "AS", other],
            ["RETURN", rng.choice(EXPRESSIONS), "AS", other],
            ["RETURN", "count(*)"],
            ["RETURN", name, "ORDER", "BY", name, "LIMIT", "3"],
            ["RETURN", name, "SKIP", "1"],
        ]
    )


def fuzzed_query(rng: random.Random, csv_url: str) -> str:
    """One query: maybe parameters, a clause that binds a name, maybe a write, then a RETURN (or none after a
    write), its pieces joined by random separators."""
    name = rng.choice(NAMES)
    pieces = ["CYPHER p=1"] if rng.random() < 0.4 else []  # FalkorDB reads this prefix itself, as written
    pieces += _first(rng, name)
    write = rng.choice(WRITES) if rng.random() < 0.5 else []
    if write:
        url = rng.choice([f"'{csv_url}'", f'"{csv_url}"'])
        pieces += [url if piece == "{url}" else piece for piece in write]
    elif rng.random() < 0.5:
        pieces += ["WITH", name, ",", rng.choice(EXPRESSIONS), "AS", rng.choice([n for n in NAMES if n != name])]
    if not write or "LOAD" in write or rng.random() < 0.85:  # a query may end with a write, not LOAD CSV
        pieces += _last(rng, name)
    return "".join(piece + _separator(rng) for piece in pieces).rstrip(" ")


def fuzzed_queries(seed: int, count: int, csv_url: str) -> list[str]:
    rng = random.Random(seed)
    return [fuzzed_query(rng, csv_url) for _ in range(count)]
