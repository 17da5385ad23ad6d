"""The words of a question that may be stored values rather than names or schema words: "open invoices",
"cancelled orders", "unpaid invoices" ("paid", negated), "orders not delivered". Each is only a candidate: the
graph says which are values of a property (backends/held_values.py), and a walk that ends at nodes holding one
may be conditioned on it (cypher/programs.py). Pure, linear in the question; nothing here knows a domain.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_WORDS = 80  # candidates looked up (words and pairs): a longer question says its values early enough
MIN_LETTERS = 3  # "on", "is": too short to be a value worth a condition
# Prefixes that negate the word they begin: "unpaid" is not "paid", "inactive" not "active".
NEGATING_PREFIXES = ("non-", "non", "un", "in")
NEGATING_WORDS = ("not", "non", "never")
_WORD = re.compile(r"[a-z][a-z0-9-]*")
# A word followed by one of these says where something goes ("orders delivered to warehouses", "sent to"): it is
# the verb of a relationship there, not a value the things hold.
DIRECTING = frozenset({"to", "into", "onto", "towards", "from"})


@dataclass(frozen=True)
class ValueWord:
    """A word that may be a stored value, as the graph would store it (lower case), and whether the question
    negates it ("unpaid" asks for what is not "paid")."""

    word: str
    negated: bool = False
    said: str = ""  # a negated word as the question says it ("unpaid", "not paid")


def value_words(plain: str) -> tuple[ValueWord, ...]:
    """The candidate values in `plain` (the question without its names), each word as said and, for a word
    that begins with a negating prefix or follows a negating word, the word it negates; pairs of words too
    ("on hold"). In the question's order, each once."""
    words = _WORD.findall(plain.lower())
    found: dict[ValueWord, None] = {}
    for i, word in enumerate(words):
        if i and words[i - 1] in NEGATING_WORDS:
            found.setdefault(ValueWord(word, negated=True, said=f"{words[i - 1]} {word}"))
            continue
        directs = i + 1 < len(words) and words[i + 1] in DIRECTING
        if len(word) >= MIN_LETTERS and word not in NEGATING_WORDS and not directs:
            found.setdefault(ValueWord(word))
        for prefix in NEGATING_PREFIXES:
            rest = word[len(prefix) :]
            if word.startswith(prefix) and len(rest) >= MIN_LETTERS:
                found.setdefault(ValueWord(rest, negated=True, said=word))
                break
        if i + 1 < len(words) and word not in NEGATING_WORDS:
            found.setdefault(ValueWord(f"{word} {words[i + 1]}"))
    return tuple(found)[:MAX_WORDS]
