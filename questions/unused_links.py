"""The question's words that a program leaves unused: words linked to a part of the schema (by spelling or by
meaning, questions/linking.py) that the program neither walks, reads, tests nor names. "ICAO code for LHR?"
answered by the airport's name leaves "icao" unused; "capital of New Zealand?" answered by its neighbours
leaves "capital" unused. Like a word nothing explains, such a word says the answer may be to another question.
And the reverse: a word no part of the schema explains may be explained by the program's form ("share" by a
walk both named things take, "greater" by a compared figure), which is then no word the reading left out.

Pure functions over a program's form (cypher/intent.py) and its walk's labels; nothing here knows a graph."""

from __future__ import annotations

from collections.abc import Iterable

from cypher.intent import Anchor, Nodes, QueryIntent, identifying_key
from questions.answer_shape import form_cued
from questions.asked_for import schema_words
from questions.linking import Linking, SchemaTerm, stem_shared
from questions.named_terms import singular, word_forms


def _anchors(intent: QueryIntent) -> list[Anchor]:
    found = [intent.start] + ([intent.other] if intent.other is not None else [])
    if intent.lacks is not None and intent.lacks.other is not None:
        found.append(intent.lacks.other)
    return found


def used_parts(intent: QueryIntent, labels: Iterable[frozenset[str]], nodes: Nodes) -> set[tuple[str, str]]:
    """(kind, name) of every part of the schema the program uses: the labels its nodes can have, the
    relationships it follows or denies, the keys it reads, tests or names things by, and the values it tests."""
    walked = {label for group in labels for label in group}
    walked |= {a.label for a in _anchors(intent)}
    if intent.lacks is not None and intent.lacks.label:
        walked.add(intent.lacks.label)
    parts = {("label", label) for label in walked}
    parts |= {("relationship", hop.relationship) for hop in intent.hops}
    if intent.lacks is not None:
        parts.add(("relationship", intent.lacks.hop.relationship))
    keys = {intent.answer_key} | {a.key for a in _anchors(intent)}
    keys |= {key for label in walked if (key := identifying_key(nodes.get(label, [])))}  # what names its nodes
    values = {a.value.lower() for a in _anchors(intent) if a.value}
    if intent.condition is not None:
        keys.add(intent.condition.key)
        values.add(intent.condition.value.lower())
    parts |= {("property", key) for key in keys if key}
    parts |= {("value", value) for value in values}
    return parts


def _used(words: str, term: SchemaTerm, by: str, parts: set[tuple[str, str]]) -> bool:
    """Whether the program uses the term, or (for a word linked by its spelling, which may spell several terms:
    "discovered" both DISCOVERED_BY and DISCOVERED_IN) any part whose words it spells."""
    name = term.name.lower() if term.kind == "value" else term.name
    if (term.kind, name) in parts:
        return True
    if by != "spelling" or term.kind == "value":
        return False
    said = [singular(w) for w in words.split()]
    spelled = {f for kind, part in parts if kind != "value" for w in schema_words(part).split() for f in word_forms(w)}
    return all(any(stem_shared(w, p) for p in spelled) for w in said)


def unused_words(
    linking: Linking | None, intent: QueryIntent, labels: Iterable[frozenset[str]], nodes: Nodes
) -> tuple[str, ...]:
    """The question's words linked to a part of the schema the program does not use, in the question's order."""
    if linking is None:
        return ()
    parts = used_parts(intent, labels, nodes)
    return tuple(
        dict.fromkeys(link.words for link in linking.links if not _used(link.words, link.term, link.by, parts))
    )


# How a program combines two named things, as the form whose cue words it realises.
_COMBINED = {
    "also_reached_from_other": "shared",
    "not_reached_from_other": "excluded",
    "through_to_other": "connection",
}


def _forms(kind: str, intent: QueryIntent) -> list[str]:
    """The forms whose cue words the program realises: a compared figure, and how it combines two named things."""
    compared = intent.condition is not None and intent.condition.operator != "="
    forms = ["comparison"] if compared or intent.count_test is not None or intent.contrast is not None else []
    forms += [_COMBINED[intent.combine]] if intent.combine in _COMBINED else []
    forms += ["excluded"] if intent.lacks is not None else []
    forms += [kind] if kind in ("shared", "excluded", "connection") else []
    return forms


def unplaced_words(linking: Linking | None, intent: QueryIntent, kind: str) -> tuple[str, ...]:
    """The question's words nothing in the schema explains (Linking.unexplained), but for those the program's
    form does ("share" by a shared walk, "greater" by a compared figure)."""
    if linking is None:
        return ()
    forms = _forms(kind, intent)
    return tuple(w for w in linking.unexplained if not any(form_cued(w, form) for form in forms))
