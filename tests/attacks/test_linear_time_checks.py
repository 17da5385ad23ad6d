"""Text from outside (a caller's question, the model's query, a human's override, a tool's output) is read by
checks that run on a worker's event loop or in workflow code, where a slow one stalls every activity the
worker runs or trips Temporal's deadlock detector. An attacker writes the text that makes a check slowest: a
relationship pattern of type names the pattern tried in every split (`[:S|S|S /* c */]`, seconds for three
names, a hundred times more for each further one), runs of spaces that adjacent `\\s*` split every way,
escaped quotes from each of which a search for the closing one started again, a name or a header from every
character of which a search scanned to the end.

Each check at risk is timed on adversarial texts of n and of 8n characters, in one run: linear time costs
about 8 times more for the longer one, quadratic 64, exponential never ends (a call past BUDGET_S fails the
test). The texts are the known attacks and, drawn by Hypothesis, repetitions of pieces of Cypher and prose.
Real functions on real text: nothing here is mocked."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from contracts.query_path import EntityMatch, Grounding
from contracts.redaction import redact_text
from cypher.clause_order import ranked_by, repaired
from cypher.read_only import refusals
from cypher.relationship_repair import unknown_type_hops
from cypher.row_cap import capped_rows
from cypher.text import blank_strings, broaden_cypher, ordered_by, query_literals, query_shape
from planning.conversation_memory import names_beyond
from planning.sql_habits import subquery_hint
from questions.named_terms import mentions, named_lookups
from questions.neighbourhood import entity_terms
from questions.walks import named_joins, returns_only_named, walked_times

N = 2_000  # characters of the shorter text; the longer has 8 times as many, about a planner's largest query
RATIO = 32  # linear: about 8 (a busy machine may double it); quadratic: about 64
BUDGET_S = 3.0  # one call past this is not linear in any sense that matters
NOISE_S = 0.002  # a longer text checked faster than this: timer noise, no growth to measure

GROUNDING = Grounding(
    matches=[
        EntityMatch(mention="Medici", label="Family", property="name", value="Medici", how="exact"),
        EntityMatch(mention="Albizzi", label="Family", property="name", value="Albizzi", how="exact"),
    ]
)
NODES = {"Family": ["name"], "Person": ["name", "born"]}
RELS = {("Person", "MEMBER_OF", "Family"), ("Family", "MARRIED_INTO", "Family")}

# Each check at risk, with the attacks on it: text of about `n` characters for each n.
Text = Callable[[int], str]
CHECKS: dict[str, tuple[Callable[[str], Any], list[Text]]] = {
    "redaction": (redact_text, [lambda n: "-----BEGIN PRIVATE KEY-----" * (n // 27)]),
    "relationship types walked": (
        walked_times,
        [
            lambda n: "MATCH (a)-[:" + "|".join(["SUPPLIES"] * (n // 9)) + " /* c */]->(b) RETURN a.name",
            lambda n: "MATCH (a)-[" + " " * n + "!]->(b) RETURN a",
        ],
    ),
    "names a path joins": (
        lambda q: named_joins(q, GROUNDING),
        [
            lambda n: "MATCH " + "(a {name: 'Medici'})--" * (n // 22) + "(b) RETURN b",
            lambda n: "MATCH (" + " " * n + "x RETURN a",
        ],
    ),
    "a query returning only the names": (
        lambda q: returns_only_named(q, GROUNDING),
        [lambda n: "MATCH (a {name: 'Medici'})-[:" + "|".join(["SUPPLIES"] * (n // 9)) + " /* c */]->(b) RETURN a"],
    ),
    "string literals": (blank_strings, [lambda n: "'" + "\\'" * (n // 2)]),
    "the read-only check": (
        refusals,
        [lambda n: "'" + "\\'" * (n // 2), lambda n: '"' + '\\"' * (n // 2), lambda n: "RETURN 1 " + "/*" * (n // 2)],
    ),
    "the row cap": (lambda q: capped_rows(q, 100), [lambda n: "RETURN '" + "\\'" * (n // 2)]),
    "names in a question": (entity_terms, [lambda n: "A" + " " * n + "x", lambda n: "A " * (n // 2)]),
    "names to look up": (lambda q: mentions(q, {"Family"}), [lambda n: "Albizzi" + " " * n + "x"]),
    "names beyond a conversation": (lambda q: names_beyond(q, "medici"), [lambda n: "A" + " " * n + "x"]),
    "literals a query looks up": (query_literals, [lambda n: "a" * n]),
    "a broadened query (workflow code)": (broaden_cypher, [lambda n: "MATCH (a) WHERE " + "a" * n + " RETURN a"]),
    "what rows are ordered by": (ordered_by, [lambda n: "RETURN a ORDER BY x" + " " * n + "y"]),
    "a ranking read through aliases": (
        ranked_by,
        [lambda n: "RETURN a ORDER BY x" + " " * n + "y", lambda n: "RETURN x" + " " * n + "y ORDER BY y"],
    ),
    "clause-order repairs": (repaired, [lambda n: "RETURN " * (n // 7), lambda n: "MATCH (a) AND x " * (n // 16)]),
    "hops of an unknown type": (lambda q: unknown_type_hops(q, "KNOWS"), [lambda n: "(" + " " * n + "("]),
    "a query's shape": (query_shape, [lambda n: "MATCH (a)-" + " " * n + "x"]),
    "node patterns looked up": (named_lookups, [lambda n: "MATCH (" + " " * n + "x"]),
    "SQL habits": (lambda q: subquery_hint(q, NODES, RELS), [lambda n: "MATCH (" + " " * n + "x (SELECT"]),
}
PIECES = [
    "'",
    "\\'",
    '"',
    " ",
    "a",
    "A ",
    "(",
    "( ",
    "[",
    "[:S",
    "|S",
    ")-",
    "-",
    "{",
    "}",
    ":",
    ".",
    "a.b = '",
    "RETURN ",
    "MATCH (a) ",
    "ORDER BY a ",
    " AS a",
    "DESC ",
    "AND ",
    "UNWIND ",
    "WHERE ",
    "x AS y ",
    "*",
    "count(",
    "date() = ",
    "(SELECT ",
    "://a:",
    "@",
    "password: ",
    "-----BEGIN PRIVATE KEY-----",
    "Medici ",
    "(a {name: 'Medici'})--",
    "1.",
    "which ",
    "of ",
]


class TooSlow(BaseException):
    """A call ran past BUDGET_S (a BaseException, so that no check's own `except Exception` swallows it)."""


@contextmanager
def budget(seconds: float) -> Iterator[None]:
    """Interrupt the call after `seconds`: Python's regular expression engine checks for signals as it runs."""

    def interrupt(*_: object) -> None:
        raise TooSlow()

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def timed(check: Callable[[str], Any], text: str) -> float:
    """One call's time, in seconds; a call past BUDGET_S fails the test."""
    started = time.perf_counter()
    try:
        with budget(BUDGET_S):
            check(text)
    except TooSlow:
        pytest.fail(f"one call on {len(text)} characters ({text[:60]!r}...) took over {BUDGET_S} s")
    return time.perf_counter() - started


def assert_about_linear(check: Callable[[str], Any], text: Text, runs: int = 7) -> None:
    """The fastest of `runs` calls on each length, taken in turns so that whatever else the machine runs
    slows both alike."""
    short_text, long_text = text(N), text(8 * N)
    short = long = float("inf")
    for _ in range(runs):
        short = min(short, timed(check, short_text))
        long = min(long, timed(check, long_text))
    if long < NOISE_S:
        return
    assert long / max(short, 1e-6) < RATIO, (
        f"{len(short_text)} characters took {short * 1000:.2f} ms, {len(long_text)} took {long * 1000:.2f} ms "
        f"({long / max(short, 1e-6):.0f} times as long): {text(40)[:60]!r}..."
    )


@pytest.mark.parametrize(
    ("name", "attack"), [(name, n) for name, (_, attacks) in CHECKS.items() for n in range(len(attacks))]
)
def test_each_known_attack_costs_time_linear_in_its_length(name: str, attack: int) -> None:
    check, attacks = CHECKS[name]
    assert_about_linear(check, attacks[attack])


@given(
    head=st.sampled_from(["", *PIECES]),
    piece=st.lists(st.sampled_from(PIECES), min_size=1, max_size=3),
    tail=st.sampled_from(["", "x", "!", ")", "'"]),
)
@settings(max_examples=5, deadline=None, derandomize=True, database=None, phases=[Phase.generate])
def test_repeated_pieces_of_cypher_and_prose_cost_every_check_time_linear_in_their_length(
    head: str, piece: list[str], tail: str
) -> None:
    unit = "".join(piece)
    for check, _ in CHECKS.values():
        assert_about_linear(check, lambda n: head + unit * max(1, n // len(unit)) + tail)
