"""GraphQuery's confidence from evidence: rows, the values the query names, and the question's own names."""

from __future__ import annotations

from tools.graph_query import score_rows


def test_an_empty_result_about_a_name_that_exists_nowhere_is_a_confident_does_not_exist() -> None:
    scored = score_rows(0, None, False, literals=[("Zyxwv Holdings", "exact", False)], absent=["Zyxwv Holdings"])
    assert scored.score == 0.9 and "does not exist here" in scored.reasoning


def test_an_empty_result_whose_value_exists_nowhere_is_suspect_when_the_questions_names_exist() -> None:
    # The question's names are in the graph: the query's own value is the mistake, so the ladder should repair it.
    scored = score_rows(0, None, False, literals=[("Acme Industries", "exact", False)], absent=[])
    assert scored.score == 0.3 and "'Acme Industries' matches nothing" in scored.reasoning


def test_an_empty_result_between_entities_that_exist_is_a_genuine_answer() -> None:
    assert score_rows(0, None, False, literals=[("Entity X", "exact", True)]).score == 0.85


def test_rows_about_a_name_the_graph_lacks_are_doubtful() -> None:
    scored = score_rows(12, None, False, literals=[], absent=["Zyxwv Holdings"])
    assert scored.score == 0.5 and "may not be about what was asked" in scored.reasoning


def test_rows_matched_on_another_name_that_shares_a_word_with_the_questions_are_doubtful() -> None:
    # "Kestrel Metals" asked, only "Kestrel Foods" stored: its 17 orders are not the answer.
    scored = score_rows(1, None, False, literals=[("Kestrel Foods", "exact", True)], unnamed=["Kestrel Metals"])
    assert scored.score == 0.5 and "may be about another thing" in scored.reasoning
    assert scored.signals["absent_names"] == 1.0


def test_rows_with_every_named_value_found_are_strong_and_failures_are_zero() -> None:
    assert score_rows(3, None, False, literals=[("Acme Industrial", "exact", True)]).score == 0.9
    assert score_rows(300, None, True).score == 0.8
    assert score_rows(0, "Unknown function 'NOW'", False).score == 0.0


def test_the_names_behind_its_counts_are_kept_for_the_confidence_line() -> None:
    scored = score_rows(
        0,
        None,
        False,
        literals=[("Acme Corp", "exact", False), ("Lyon", "exact", True)],
        absent=["Zyxwv Holdings"],
        unnamed=["Kestrel Metals"],
    )
    assert scored.signals["absent_names"] == 2.0 and scored.signals["unmatched_values"] == 1.0
    assert scored.names == {"absent_names": ["Zyxwv Holdings", "Kestrel Metals"], "unmatched_values": ["Acme Corp"]}
    assert score_rows(3, None, False, literals=[("Lyon", "exact", True)]).names == {}
