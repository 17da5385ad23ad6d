"""Graph RAG helpers: which terms of a question name entities, and how to write a neighbourhood as facts."""

from __future__ import annotations

import re
from typing import Any

# Quotes that open and close outside a word: "Germany's neighbours don't" quotes nothing.
_QUOTED = re.compile(r"(?<!\w)[\"“']([^\"”']{2,60})[\"”'](?!\w)")
# A capitalised word may hold a slash between its parts: one name ("Asia/Samarkand", "AC/DC"), not two.
# Possessive (`*+`, `++`): what each part matches cannot start the next, so giving it back never helps, and a
# run of spaces is not tried in every split (time linear in the question).
# Capitals of every script up to U+1FFF, not only A-Z: "Thủ Đức" is one name, not "Thủ" alone.
_UPPER = "A-Z" + "".join(re.escape(chr(c)) for c in range(0xC0, 0x2000) if chr(c).isupper())
_CAPITALISED = re.compile(
    rf"\b([{_UPPER}][\w&.\-]*+(?:/[\w&.\-]++)*+(?:\s++(?:(?:of|de|du|van|von)\s*+)?+[{_UPPER}][\w&.\-]*+"
    r"(?:/[\w&.\-]++)*+)*+)"
)
_JOINING = frozenset({"of", "de", "du", "van", "von"})  # words a capitalised name may hold between its words
_IDENTIFIER = re.compile(r"\b([A-Za-z]{1,6}-?\d[\w\-]*)\b")
_QUESTION_WORDS = {
    "What",
    "Which",
    "Who",
    "Whom",
    "Whose",
    "When",
    "Where",
    "Why",
    "How",
    "Is",
    "Are",
    "Does",
    "Do",
    "Did",
    "Can",
    "Could",
    "List",
    "Show",
    "Tell",
    "Give",
    "Find",
    "The",
    "A",
    "An",
    "In",
    "On",
    "Of",
    "For",
    "And",
    "Or",
    "To",
    "From",
    "By",
    "With",
    "All",
    "Any",
    "I",
    "Me",
    "My",
    "Please",
}
MAX_TERMS = 6


def entity_terms(question: str) -> list[str]:
    """Quoted strings, identifiers with digits, then capitalised phrases (minus question words), in order."""
    terms: list[str] = []

    def add(term: str) -> None:
        term = term.strip(" ?.,;:!")
        # Past MAX_TERMS nothing is kept: comparing each of thousands of terms with all before it is quadratic.
        if len(terms) < MAX_TERMS and len(term) >= 2 and term.lower() not in (t.lower() for t in terms):
            terms.append(term)

    for match in _QUOTED.finditer(question):
        add(match.group(1))
    for match in _IDENTIFIER.finditer(question):
        add(match.group(1))
    for match in _CAPITALISED.finditer(question):
        words = match.group(1).split()
        # "Which of Germany": the question word goes, and the "of" that joined it
        first = next((i for i, word in enumerate(words) if word not in _QUESTION_WORDS), len(words))
        while words[first:] and words[first] in _JOINING:
            first += 1
        if words[first:]:
            add(" ".join(words[first:]))
    return terms


def describe_node(labels: list[str], props: dict[str, Any], max_props: int = 8) -> str:
    shown = ", ".join(f"{k}: {v}" for k, v in list(props.items())[:max_props])
    return f"{':'.join(labels) or 'Node'} {{{shown}}}"
