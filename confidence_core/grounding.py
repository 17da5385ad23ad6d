"""Grounding: which things a question names, so they can be found in the graph before a query is
written. Names come from the question's own text (quoted strings, identifiers with digits, capitalised
phrases), minus the words of the graph's schema and of the calendar, which name kinds of things or
times, not things. Pure functions: the look-up itself is the graph backend's (backends/grounding.py).
"""

from __future__ import annotations

import re

from confidence_core.knowledge import entity_terms
from contracts.query_path import Grounding

_CALENDAR = {"january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
             "november", "december", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
             "today", "yesterday", "tomorrow"}
_LEADING = ("the ", "a ", "an ")
MIN_TOKEN = 4  # words shorter than this are too common to find a name by


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ses", "xes")):
        return word[:-2]
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def _known_words(vocabulary: set[str]) -> set[str]:
    return {v.lower() for v in vocabulary} | {_singular(v.lower()) for v in vocabulary}


def _is_vocabulary(term: str, known: set[str]) -> bool:
    """A term made only of schema words (labels, relationship types, property keys; `known`, lower-cased,
    with singulars) or calendar words."""
    words = [w.lower() for w in term.replace("_", " ").split()]
    squashed = re.sub(r"[\s_-]", "", term.lower())
    return squashed in known or _singular(squashed) in known or all(
        w in known or _singular(w) in known or w in _CALENDAR for w in words)


def _only_at_sentence_start(term: str, question: str) -> bool:
    """A single capitalised word that only ever opens a sentence ("Summarize ...", "List ..."): English
    capitalises it anyway, so it is no evidence of a name."""
    if " " in term or any(c.isdigit() for c in term):
        return False
    spots = [m.start() for m in re.finditer(rf"\b{re.escape(term)}\b", question)]
    return bool(spots) and all(question[:i].rstrip() == "" or question[:i].rstrip()[-1] in ".!?:;\n" for i in spots)


def mentions(question: str, vocabulary: set[str]) -> list[str]:
    """The names in a question that should exist in the graph, in the order they appear."""
    found: list[str] = []
    known = _known_words(vocabulary)
    quoted = {q.lower() for q in re.findall(r"[\"“']([^\"”']{2,60})[\"”']", question)}
    for term in entity_terms(question):
        if term.lower() not in quoted and _only_at_sentence_start(term, question):
            continue
        lowered = term.lower()
        for article in _LEADING:
            if lowered.startswith(article):
                term = term[len(article):]
                break
        if term.replace(".", "").replace(",", "").isdigit() or _is_vocabulary(term, known):
            continue
        if not any(term.lower() in f.lower() for f in found):  # not again, nor a piece of an earlier name
            found.append(term)
    return found


def name_tokens(mention: str) -> list[str]:
    """The words of a name long enough to find it by when the whole name is not stored as written."""
    return [w for w in mention.replace("-", " ").split() if len(w) >= MIN_TOKEN]


def describe_grounding(grounding: Grounding) -> str:
    """For the planner: each name as the graph stores it (label, property, value), and the names found
    nowhere. Empty when the question names nothing."""
    if not grounding.matches and not grounding.unmatched:
        return ""
    lines = []
    others = set(grounding.only_by_words())
    named = [m for m in grounding.matches if m.mention not in others]
    if named:
        lines.append("Names in the question, as the graph stores them (use these exact values):")
    for m in named:
        note = "" if m.how == "exact" else f" (the question says '{m.mention}')"
        lines.append(f"- {m.label}.{m.property} = '{m.value}'{note}")
    for mention in others:
        similar = ", ".join(f"{m.label}.{m.property} = '{m.value}'" for m in grounding.matches if m.mention == mention)
        lines.append(f"No stored value is or contains '{mention}'; only other names share a word with it ({similar}): "
                     f"they are different things. Match '{mention}' as the question writes it; if it is not "
                     "there, the answer is that it does not exist here.")
    if grounding.unmatched:
        lines.append("Not found anywhere in the graph, not even in part: "
                     + ", ".join(f"'{u}'" for u in grounding.unmatched)
                     + ". If the question is about them, the answer is that they do not exist here.")
    return "\n".join(lines)
