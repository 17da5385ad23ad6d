"""Which LIMIT the question never asked for (tools/unasked_limit.py): only a literal final LIMIT of 2 or more,
reached exactly, in a question with no number and no superlative."""

from __future__ import annotations

import pytest

from tools.unasked_limit import final_limit, unasked_limit_lifted

pytestmark = pytest.mark.unit

WRITTEN = (
    "MATCH (c:Character {name: 'Gillenormand'})-[:APPEARS_WITH]->(n) RETURN n.name AS connected, "
    "count(*) AS order_key1 ORDER BY order_key1 DESC LIMIT 5"
)
LIST = "Which characters is Gillenormand connected to through its appears with relationships?"


def test_a_list_question_cut_at_the_querys_limit_is_read_without_it() -> None:
    # the clause blanked in place, every other character where it was (tests/attacks/test_checked_text_runs.py)
    assert unasked_limit_lifted(WRITTEN, LIST, 5) == WRITTEN.removesuffix("LIMIT 5") + " " * len("LIMIT 5")


@pytest.mark.parametrize(
    ("question", "rows"),
    [
        (LIST, 4),  # fewer rows than the LIMIT: nothing was cut
        ("Which 5 characters appear most often with Gillenormand?", 5),
        ("Which five characters does Gillenormand appear with?", 5),
        ("Which character appears with Gillenormand the most?", 5),
        ("List the top characters by appearances with Gillenormand.", 5),
        ("Top characters by appearances with Gillenormand?", 5),  # a superlative first word, capitalised
        ("Most connected characters of Gillenormand's?", 5),
        ("Which are the first characters Gillenormand appears with?", 5),
        ("Give some examples of characters Gillenormand appears with.", 5),
    ],
)
def test_a_limit_the_question_may_have_asked_for_or_that_cut_nothing_stays(question: str, rows: int) -> None:
    assert unasked_limit_lifted(WRITTEN, question, rows) is None


@pytest.mark.parametrize(
    "query",
    [
        "MATCH (n) RETURN n.name LIMIT 1",  # one row is a choice
        "MATCH (n) RETURN n.name LIMIT $k",  # not a literal
        "MATCH (n) RETURN n.name AS a UNION MATCH (m) RETURN m.name AS a LIMIT 3",  # a UNION's part
        "CALL { MATCH (n) RETURN n LIMIT 3 } RETURN n.name",  # not the query's own
        "MATCH (n) WITH n LIMIT 3 RETURN n.name",  # before the RETURN
        "MATCH (n) RETURN n.name ORDER BY n.name SKIP 3 LIMIT 3",  # a page: without the LIMIT, every row after it
    ],
)
def test_only_the_final_literal_limit_of_two_or_more_is_lifted(query: str) -> None:
    assert unasked_limit_lifted(query, LIST, 1 if "LIMIT 1" in query else 3) is None


def test_a_limit_spelled_in_a_string_is_no_limit() -> None:
    assert final_limit("MATCH (n {name: 'LIMIT 5'}) RETURN n LIMIT 7;") == (7, 37, 44)
    assert final_limit("MATCH (n {name: 'RETURN x LIMIT 5'}) RETURN n") is None
