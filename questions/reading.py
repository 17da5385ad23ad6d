"""One reading of a question, computed once and passed down instead of reading the question again at each
step: the things it names as the graph stores them, the figures and quoted values it gives, the kind of thing
it asks for, the relationship types and labels its words name, and the words left over. A pure function of the
question, its grounding and the schema, built from this package's readings; nothing here knows a graph or a
domain. The walks a question could mean are enumerated from it (cypher/walk_space.py).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from contracts.query_path import EntityMatch, Grounding
from cypher.intent import Anchor, Nodes, Rel
from questions.answer_shape import SHAPE_WORDS, AnswerShape, answer_shape, without_key_phrases
from questions.asked_for import asked_label, counted_label, schema_words
from questions.figures import unused_figures
from questions.linking import FUNCTION_WORDS, Linking, stem_shared
from questions.named_terms import MIN_TOKEN, singular, word_forms
from questions.value_words import ValueWord, value_words
from questions.walks import spelled_walk, unmatched_labels, without_names

MAX_NAMED = 4  # named things walked from; a question naming more is no walk of three relationships
_WORD = re.compile(r"[a-z0-9]+")
# A quoted value: quotes that open and close outside a word, so that "Sweden's ... Peru's" is no value.
_QUOTED = re.compile(r"(?<!\w)[\"“']([^\"”']{2,60})[\"”'](?!\w)")


@dataclass(frozen=True)
class QuestionReading:
    """What a question says, read once; cypher/walk_space.py reads it as its `Reading`."""

    question: str
    named: tuple[Anchor, ...]  # the things named, as the graph stores them (label, key, value), in order
    unmatched: tuple[str, ...]  # names the graph holds nowhere, not even in part
    figures: tuple[str, ...]  # numbers the question gives outside its names, smallest first
    quoted: tuple[str, ...]  # values the question quotes that name no thing in the graph
    asked: str | None  # the label asked for ("which suppliers ..." asks for Supplier)
    relationships: tuple[str, ...]  # relationship types its words spell out, each time, in order
    labels: tuple[str, ...]  # labels its words spell out
    hinted: tuple[str, ...]  # labels and relationship types one of its words shares a stem with, spelled or not
    words: tuple[str, ...]  # its other words (singular, lower case, MIN_TOKEN letters or more), in order
    shape: AnswerShape  # the answers it may ask for, most likely first; the keys it names; a comparison
    values: tuple[ValueWord, ...] = ()  # words that may be stored values ("open", "unpaid"): the graph says
    linking: Linking | None = None  # its content words linked to the schema by meaning, or unexplained
    counted: tuple[str, ...] = ()  # labels and relationship types the noun a compared figure counts hints
    denied: tuple[str, ...] = ()  # labels and relationship types the words after a denial hint
    ranked_by: tuple[str, ...] = ()  # ... and those the plural a superlative counts hints ("the most airports")
    # For each relationship type, how many words of its name the question does not say ("formerly" of
    # FORMERLY_USED_CURRENCY, asked which currency a country uses): walks otherwise alike rank the one said.
    unsaid: tuple[tuple[str, int], ...] = ()
    # Each word that hints a relationship type, with the types it hints: one word accounts for one hop of a walk
    # ("used" hints USES_CURRENCY and FORMERLY_USED_CURRENCY, and a walk along both is not said twice).
    hint_sources: tuple[tuple[str, tuple[str, ...]], ...] = ()


def read_question(
    question: str,
    grounding: Grounding,
    nodes: Nodes,
    rels: set[Rel],
    rel_keys: Mapping[str, Sequence[str]] | None = None,
) -> QuestionReading:
    """The question read once against its grounding and the schema (each label's property keys, the
    (source, type, target) relationships, each relationship type's property keys)."""
    labels = sorted(nodes)
    rel_types = {rel[1] for rel in rels}
    names = {m.mention.lower() for m in grounding.matches} | {m.value.lower() for m in grounding.matches}
    quoted = tuple(dict.fromkeys(q for q in _QUOTED.findall(question) if q.lower() not in names))
    plain = _QUOTED.sub(" ", without_names(question, grounding))
    figures = tuple(unused_figures(plain, ""))  # an empty query uses none of them: every figure
    words = tuple(
        w for w in (singular(w) for w in _WORD.findall(plain.lower())) if len(w) >= MIN_TOKEN and w not in figures
    )
    asked = asked_label(question, labels) or counted_label(question, labels)
    keys = sorted({key for props in [*nodes.values(), *(rel_keys or {}).values()] for key in props})
    spelled = tuple(spelled_walk(plain, rel_types))
    shape = answer_shape(plain, keys, asked is not None, labels, sorted(rel_types))
    alike = shape.contrast is not None  # two names set against each other are of one kind where they can be
    named = tuple(
        dict.fromkeys(
            Anchor(m.label, m.property, m.value)
            for m in (_placed(question, m, grounding) for m in grounding.described_entities(MAX_NAMED, alike))
        )
    )
    return QuestionReading(
        question=question,
        named=named,
        unmatched=tuple(grounding.unmatched),
        figures=figures,
        quoted=quoted,
        asked=asked,
        relationships=spelled,
        labels=tuple(unmatched_labels(plain, set(), labels)),  # none matched yet: every label spelled out
        hinted=_hinted(_hint_words(plain, shape.keys, figures), labels, sorted(rel_types), _spent(spelled)),
        words=words,
        shape=shape,
        values=value_words(plain),
        counted=_hinted(tuple(singular(w) for w in shape.counted.split()), labels, sorted(rel_types)),
        denied=_hinted(_hint_words(shape.denied, shape.keys, figures), labels, sorted(rel_types)),
        ranked_by=_hinted((singular(shape.ranked_by),), labels, sorted(rel_types)) if shape.ranked_by else (),
        unsaid=_unsaid(words, sorted(rel_types)),
        hint_sources=_hint_sources(_hint_words(plain, shape.keys, figures), labels, sorted(rel_types), _spent(spelled)),
    )


PLACED_REACH = 4  # words before a name that may say what kind of thing holds it ("warehouses in Germany")


def _placed(question: str, chosen: EntityMatch, grounding: Grounding) -> EntityMatch:
    """The match of a value that the words just before it place: "warehouses in Germany" is a warehouse's
    country, though suppliers' countries hold "Germany" too; else the match as chosen (always a thing found by
    its own name)."""
    at = question.lower().find(chosen.mention.lower())
    if at < 0 or chosen.property.lower().endswith(("name", "title")):
        return chosen  # a thing's own name ("provinces does Thailand have": Thailand, the country)
    before = _WORD.findall(question[:at].lower())[-PLACED_REACH:]
    same = [
        m
        for m in grounding.matches
        if m.mention == chosen.mention and m.value == chosen.value and m.how == chosen.how and m != chosen
    ]
    said = [m for m in same if _says(before, m.label)]
    return said[0] if said and not _says(before, chosen.label) else chosen


def _says(words: list[str], label: str) -> bool:
    """Whether `words` say the label, each of its words in the singular or the plural ("warehouses")."""
    return all(
        any(w == part or w.removesuffix("s") == part or singular(w) == singular(part) for w in words)
        for part in schema_words(label).split()
    )


def _unsaid(words: tuple[str, ...], rel_types: list[str]) -> tuple[tuple[str, int], ...]:
    """Each relationship type with the number of its name's words (MIN_TOKEN letters or more) that share a
    stem with no word of the question."""
    said = set(words)
    counts = []
    for rel_type in rel_types:
        parts = [w for w in schema_words(rel_type).split() if len(w) >= MIN_TOKEN]
        counts.append((rel_type, sum(not any(_says_part(part, w) for w in said) for part in parts)))
    return tuple(counts)


def _says_part(part: str, word: str) -> bool:
    """Whether a word of the question says a word of a schema name, in one of its forms ("uses" is "use",
    which "used" says)."""
    return any(stem_shared(form, word) for form in (part, *word_forms(part)))


def _stem_key(word: str) -> str:
    return word[:MIN_TOKEN]


def _hint_words(plain: str, keys: tuple[str, ...], figures: tuple[str, ...]) -> tuple[str, ...]:
    """The words that may hint a label or relationship type: not shape words, nor the words of a property the
    question names in two words or more where it names it ("discovery year" is no DISCOVERED_BY)."""
    text = without_key_phrases(plain.lower(), keys)
    said = (_hint_form(w) for w in _WORD.findall(text))
    return tuple(w for w in said if w and w not in figures and w not in SHAPE_WORDS)


def _hint_form(word: str) -> str:
    """The form of a word a schema name is compared with: its singular, but a short verb as said ("uses" is no
    "us", and "use" in "which countries use ..." hints USES_CURRENCY); "" for a word too short or too common."""
    if len(one := singular(word)) >= MIN_TOKEN:
        return one
    return word if len(word) >= MIN_TOKEN - 1 and word not in FUNCTION_WORDS else ""


def _spent(spelled: tuple[str, ...]) -> dict[str, set[str]]:
    """The words a relationship the question spells has spent, each with the one it may still hint:
    "discovered by" says nothing of DISCOVERED_IN."""
    spent: dict[str, set[str]] = {}
    for rel_type in spelled:
        for word in schema_words(rel_type).split():
            spent.setdefault(singular(word), set()).add(rel_type)
    return spent


def _hint_sources(
    words: tuple[str, ...], labels: list[str], rel_types: list[str], spent: dict[str, set[str]]
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Each word with the relationship types it hints (as `_hinted` reads them), the words that hint none left
    out."""
    types = set(rel_types)
    found = ((word, _hinted((word,), labels, rel_types, spent)) for word in dict.fromkeys(words))
    return tuple((word, kept) for word, hinted in found if (kept := tuple(name for name in hinted if name in types)))


def _hinted(
    words: tuple[str, ...], labels: list[str], rel_types: list[str], spent: dict[str, set[str]] | None = None
) -> tuple[str, ...]:
    """The labels and relationship types one of `words` shares a stem with, in the order the words first do.
    A word that is a label's own word hints that label, not the relationship types that contain it: "region"
    in "which region ..." says nothing of IN_REGION; a `spent` word hints only the relationship types it is
    kept for. Words are compared only with schema words that begin alike (time linear in the question)."""
    spent = spent or {}
    label_words = {singular(w) for label in labels for w in schema_words(label).split()}
    by_start: dict[str, list[tuple[str, str, bool]]] = {}
    for names, is_label in ((labels, True), (rel_types, False)):
        for name in names:
            for part in dict.fromkeys(f for w in schema_words(name).split() for f in word_forms(w)):
                if len(part) >= MIN_TOKEN:
                    by_start.setdefault(_stem_key(part), []).append((part, name, is_label))
                elif len(part) == MIN_TOKEN - 1:  # "use" of USES_CURRENCY: its inflections hint it ("used")
                    by_start.setdefault(part, []).append((part, name, is_label))
    found: dict[str, None] = {}
    for word in dict.fromkeys(words):
        for part, name, is_label in by_start.get(_stem_key(word), []) + by_start.get(word[: MIN_TOKEN - 1], []):
            if not stem_shared(word, part):
                continue
            if is_label or (word not in label_words and (word not in spent or name in spent[word])):
                found.setdefault(name)
    return tuple(found)
