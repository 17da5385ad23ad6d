"""Candidate queries agree when their answers hold the same values, whatever the columns or row order."""

from __future__ import annotations

import pytest

from confidence.agreement import answer_signature, vote

pytestmark = pytest.mark.unit


def test_the_same_values_in_another_order_or_form_agree() -> None:
    assert answer_signature([["Acme", 7], ["Globex", 3]]) == answer_signature([[3.0, "globex "], [7, "ACME"]])
    assert answer_signature([[4.33333]]) == answer_signature([[4.33]])
    assert answer_signature([[["b", "a"]]]) == answer_signature([[["a", "b"]]])


def test_different_values_or_counts_of_rows_disagree() -> None:
    assert answer_signature([["Acme", 7]]) != answer_signature([["Acme", 8]])
    assert answer_signature([["Acme"]]) != answer_signature([["Acme"], ["Acme"]])
    assert answer_signature([[True]]) != answer_signature([[1]])


def test_the_majority_wins_and_a_tie_goes_to_the_first() -> None:
    a, b = answer_signature([[1]]), answer_signature([[2]])
    assert vote([a, b, b]) == (1, 2)
    assert vote([a, b]) == (0, 1)
    assert vote([a]) == (0, 1)
    with pytest.raises(ValueError):
        vote([])
