"""The model judges the links the sentence vectors leave undecided (questions/linking.py): for each such word of a
question, which of the schema's parts nearest it the word means, or none. The parts are put in plain words with
the labels they join ("in subdivision: from a City to a Subdivision"), and the model names its choice by those
words under a grammar, never by a number or a place in a list, so it cannot lean to the first one shown; the
parts are listed in the schema's own order, not by how near the vectors put them.

Why a model: the vectors link synonyms of a part's name well ("client" to Customer, 0.61) but not the words a
part stands for without being one ("state" is nearer Country than the Subdivision it means, "high" nearer
nothing than elevation). A word the model says means none of them is what the reading did not understand."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import structlog

from questions.asked_for import schema_words
from questions.linking import Linking, SchemaTerm

if TYPE_CHECKING:
    from backends import Backends

log = structlog.get_logger(__name__)

MAX_JUDGED = 6  # words judged in one call: a question has few that the vectors leave open
NONE = "none of these"
# A word that says how the question is asked, not what about ("exactly", "currently"): explained by nothing,
# and nothing the reading left out.
FRAMING = "only frames the question"
TOKENS_PER_WORD = 24
MAX_RELATIONSHIPS = 12  # relationship types offered for every word, beside its nearest parts


def _a(label: str) -> str:
    words = schema_words(label)
    return f"an {words}" if words[:1] in "aeiou" else f"a {words}"


def described(term: SchemaTerm) -> str:
    """A part of the schema in plain words, as the model chooses it."""
    if term.kind == "label":
        return f"{term.words} (a kind of thing)"
    if term.kind == "relationship":
        source, _, target = term.owner.partition("->")
        return f"{term.words} (from {_a(source)} to {_a(target)})"
    if term.kind == "property" and term.of_relationship:
        return f"{term.words} (a property of each {schema_words(term.owner)} relationship)"
    if term.kind == "property":
        return f"{term.words} (a property of {_a(term.owner)})"
    return f"{term.words} (a stored value)"


def candidates(linking: Linking, words: tuple[str, ...], order: tuple[SchemaTerm, ...]) -> dict[str, list[SchemaTerm]]:
    """Each word's nearest terms and every relationship type (MAX_RELATIONSHIPS at most), in the schema's order
    (`order`): a verb that says how two things are joined ("placed with", "received") is rarely near the
    relationship's own name in the vectors, and a schema has few relationships."""
    place = {term: i for i, term in enumerate(order)}
    joins = [t for t in order if t.kind == "relationship"][:MAX_RELATIONSHIPS]
    offered = {w: dict.fromkeys([*(t for t, _ in linking.near[w]), *joins]) for w in words}
    return {w: sorted(terms, key=lambda t: place.get(t, len(place))) for w, terms in offered.items()}


def judge_schema(options: dict[str, list[SchemaTerm]]) -> dict[str, Any]:
    """The reply's grammar: one field a word, each the words of one of its candidates, or NONE."""
    properties = {w: {"enum": [*(described(t) for t in terms), FRAMING, NONE]} for w, terms in options.items()}
    return {"type": "object", "properties": properties, "required": list(properties)}


def parse_judgement(text: str, options: dict[str, list[SchemaTerm]]) -> tuple[dict[str, SchemaTerm | None], set[str]]:
    """The model's choices (a term, or None: the word means nothing the graph holds) and the words it said only
    frame the question; a word it left out or answered outside its candidates stays undecided."""
    try:
        raw = json.loads(text)
    except json.JSONDecodeError:
        return {}, set()
    if not isinstance(raw, dict):
        return {}, set()
    judged: dict[str, SchemaTerm | None] = {}
    framing: set[str] = set()
    for word, terms in options.items():
        said = raw.get(word)
        if said == FRAMING:
            framing.add(word)
        elif said == NONE:
            judged[word] = None
        else:
            chosen = [t for t in terms if described(t) == said]
            if chosen:
                judged[word] = chosen[0]
    return judged, framing


async def judge_links(question: str, linking: Linking, order: tuple[SchemaTerm, ...], backends: Backends) -> Linking:
    """`linking` with its undecided words judged by the model (as it was, when none is undecided or the model's
    reply is unusable)."""
    words = linking.undecided()[:MAX_JUDGED]
    if not words or backends.llm is None:
        return linking
    options = candidates(linking, words, order)
    listing = "\n".join(f'- "{w}": ' + "; ".join(described(t) for t in terms) for w, terms in options.items())
    messages = [
        {"role": "system", "content": backends.prompts.render("link_judge_system")},
        {"role": "user", "content": backends.prompts.render("link_judge_user", question=question, words=listing)},
    ]
    try:
        completion = await backends.llm.chat(
            messages,
            json_schema=judge_schema(options),
            max_tokens=TOKENS_PER_WORD * len(words) + 16,
            temperature=0.0,
        )
    except Exception as exc:  # the vectors' links stand; the planning goes on without the judgement
        log.warning("link_judge_failed", error=str(exc))
        return linking
    judged, framing = parse_judgement(completion.text, options)
    log.info(
        "links_judged",
        words=list(words),
        judged={w: t.name if t else None for w, t in judged.items()},
        framing=sorted(framing),
    )
    return linking.decided(judged, framing)
