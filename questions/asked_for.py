"""What kind of thing a question asks for ("Which supplier ...?" asks for a Supplier), and how the schema
reaches it from the labels a query already matches: a plan whose queries never match the label asked for
answers another question (the payment's invoice, asked for the payment's supplier). Pure functions."""

from __future__ import annotations

import re
from collections import deque

from questions.named_terms import singular

_ASKED = re.compile(r"\b(?:which|what)\s+((?:[\w-]+\s+){0,4}[\w-]+)", re.IGNORECASE)
# Words that say how many are asked for before saying what: "which three suppliers", "what top 5 cities".
# "Which other countries ...", "which remaining events": words that say which ones are meant, not what they are.
_HOW_MANY_WORDS = frozenset(
    "the top bottom first last few single one two three four five six seven eight nine ten twelve twenty".split()
    + "other others another different remaining".split()
)
MAX_ROUTE_HOPS = 3  # farther than this, a route is no hint a small model can follow


def schema_words(label: str) -> str:
    """`PurchaseOrder`, `purchase_order` and `USES_CURRENCY` as a question writes them: "purchase order",
    "uses currency"."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", label).replace("_", " ")
    return " ".join(spaced.lower().split())


def _label_at(words: str, by_words: dict[str, str]) -> str | None:
    """The label the first of `words` name ("purchase orders placed" names PurchaseOrder), the longest reading
    first; None when they name none."""
    split = words.lower().split()
    while split[1:] and (split[0] in _HOW_MANY_WORDS or split[0].isdigit()):
        split = split[1:]
    for size in range(len(split), 0, -1):
        phrase = " ".join(split[:size])
        # "movies" is a movie, though singular() reads "movy" (as "cities" is a city): both are tried
        label = by_words.get(phrase) or by_words.get(singular(phrase)) or by_words.get(phrase.removesuffix("s"))
        if label is not None:
            return label
    return None


MAX_MODIFIERS = 2  # capitalised words before the label asked for: "Which US state", "Which Western European country"


def asked_label(question: str, labels: list[str]) -> str | None:
    """The label named right after the question's first "which" or "what" ("Which suppliers ...", "what
    purchase order ..."), after up to MAX_MODIFIERS capitalised words that say which ones ("Which US state",
    "which African country"); the longest reading first; None when the words there name no label."""
    found = _ASKED.search(question)
    if found is None:
        return None
    return _modified_label(found.group(1), {schema_words(label): label for label in labels})


def _modified_label(said: str, by_words: dict[str, str]) -> str | None:
    """The label the words name, after how many are asked for and up to MAX_MODIFIERS capitalised words
    ("three US states", "Vietnamese cities")."""
    words = said.split()
    while words[1:] and (words[0].lower() in _HOW_MANY_WORDS or words[0].isdigit()):
        words = words[1:]  # "which three US states"
    for skipped in range(MAX_MODIFIERS + 1):
        if skipped >= len(words) or (skipped and not words[skipped - 1][:1].isupper()):
            break
        if words[skipped:] and (label := _label_at(" ".join(words[skipped:]), by_words)) is not None:
            return label
    return None


_COUNTED = re.compile(
    r"\b(?:how many|number of|count(?: the| all)?|list(?: the| all)?|name(?: the| all)?|every|all(?: the)?|"
    r"(?:give|show|tell) me(?: the| all(?: the)?)?)\s+"
    r"((?:[\w-]+\s+){0,3}[\w-]+)",
    re.IGNORECASE,
)


def counted_label(question: str, labels: list[str]) -> str | None:
    """The label named right after "how many", "the number of", "count", "list" or "name" ("How many
    regions ...", "List the provinces ..."), when no "which" or "what" names one; the longest reading first."""
    by_words = {schema_words(label): label for label in labels}
    return next(
        (label for found in _COUNTED.finditer(question) if (label := _modified_label(found.group(1), by_words))),
        None,
    )


def route(starts: list[str], goal: str, rels: set[tuple[str, str, str]]) -> str | None:
    """The shortest schema path from one of `starts` to `goal`, as a pattern a query can use
    ("(:Invoice)-[:BILLS]->(:PurchaseOrder)-[:ISSUED_TO]->(:Supplier)"); None when none is near."""
    queue = deque((start, f"(:{start})", 0) for start in starts)
    seen = set(starts)
    while queue:
        label, path, hops = queue.popleft()
        if label == goal:
            return path
        if hops == MAX_ROUTE_HOPS:
            continue
        for a, rel_type, b in sorted(rels):
            if a == label and b not in seen:
                seen.add(b)
                queue.append((b, f"{path}-[:{rel_type}]->(:{b})", hops + 1))
            elif b == label and a not in seen:
                seen.add(a)
                queue.append((a, f"{path}<-[:{rel_type}]-(:{a})", hops + 1))
    return None
