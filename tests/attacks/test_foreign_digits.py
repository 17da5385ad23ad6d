"""A figure in digits of another script ("١٢", Arabic-Indic twelve) passed the compiler's number test, which
used `\\d`, and went into the query unquoted: Cypher reads it as no number, so the query failed or read it as a
name. Only ASCII digits are a number; anything else is quoted as text."""

from __future__ import annotations

from cypher.intent import Anchor, Condition, QueryIntent, compile_intent

NODES = {"Country": ["name", "population"]}


def test_digits_of_another_script_are_quoted_as_text() -> None:
    for figure in ("١٢", "１２"):
        query = compile_intent(
            QueryIntent(start=Anchor("Country"), condition=Condition("population", ">", figure), answer="names"),
            NODES,
            set(),
        )
        assert f"> '{figure}'" in query, query
    plain = compile_intent(
        QueryIntent(start=Anchor("Country"), condition=Condition("population", ">", "12"), answer="names"), NODES, set()
    )
    assert "> 12" in plain
