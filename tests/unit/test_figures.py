"""The figures a question gives that a query leaves out (questions/figures.py)."""

from __future__ import annotations

from questions.figures import unused_figures


def test_a_figure_the_query_leaves_out_is_found() -> None:
    assert unused_figures("Which countries have an area greater than 200000?", "MATCH (c) RETURN c.name") == ["200000"]


def test_a_figure_used_as_a_number_or_inside_a_value_is_used() -> None:
    assert unused_figures("Which have an area above 200,000?", "MATCH (c) WHERE c.area > 200000 RETURN c") == []
    assert unused_figures("Orders after 2024-06-01?", "MATCH (o) WHERE o.date > '2024-06-01' RETURN o") == []
    assert unused_figures("Who scored 3.5 points?", "MATCH (p) WHERE p.score = 3.5 RETURN p") == []


def test_a_question_without_figures_has_none_to_use() -> None:
    assert unused_figures("Which supplier has the most orders?", "MATCH (s) RETURN s LIMIT 5") == []
