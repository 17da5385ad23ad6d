"""The words of a question that may be stored values (questions/value_words.py): each word as said, the word a
negating prefix or word negates, and pairs of words; the graph decides which are values."""

from __future__ import annotations

from questions.value_words import MAX_WORDS, ValueWord, value_words


def test_a_negated_word_is_read_as_the_value_it_negates() -> None:
    found = value_words("total of unpaid invoices")
    assert ValueWord("unpaid") in found and ValueWord("paid", negated=True, said="unpaid") in found
    assert ValueWord("delivered", negated=True, said="not delivered") in value_words("orders not delivered")
    assert ValueWord("active", negated=True, said="non-active") in value_words("non-active accounts")


def test_pairs_of_words_and_nothing_too_short() -> None:
    found = value_words("orders on hold")
    assert ValueWord("on hold") in found and ValueWord("on") not in found
    assert ValueWord("not") not in value_words("not shipped")  # the negating word is no value of its own


def test_each_once_in_order_and_bounded() -> None:
    found = value_words("open open open")
    assert found == (ValueWord("open"), ValueWord("open open"))
    assert len(value_words(" ".join(f"w{i}xx" for i in range(500)))) == MAX_WORDS


def test_a_word_that_says_where_things_go_is_a_relationships_verb_not_a_value() -> None:
    words = {v.word for v in value_words("total value of orders delivered to warehouses")}
    assert "delivered" not in words and "delivered to" in words  # the pair is still looked up
    assert "delivered" in {v.word for v in value_words("how many delivered orders are there")}
