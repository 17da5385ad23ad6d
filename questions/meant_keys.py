"""The property a question means without naming it ("How high is Denver airport?" means `elevation_ft`,
"the densest element" `density`, "how many people live in Brazil" `population`), read from the whole
sentence: its words one by one are too weak a sign ("high" is near nothing in the schema), but the sentence,
with each name said as the kind of thing it is ("how high is the airport"), lies near "airport elevation ft"
and well apart from the airport's other keys. Only a clear winner is kept; nothing here knows a graph or a
wording. Pure functions but for the sentence vectors passed in."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from contracts.query_path import Grounding
from cypher.intent import identifying_key
from questions.asked_for import schema_words

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

Encode = Callable[[Sequence[str]], "NDArray[np.float32]"]
Nodes = dict[str, list[str]]

# all-MiniLM-L6-v2 cosines between the sentence and "<label> <key>": the nearest key must reach MEANT_FLOOR and
# lead the next key by MEANT_MARGIN (on the development graphs, keys meant led by 0.1 to 0.25; a sentence that
# asks no key at all lies about as near several).
MEANT_FLOOR = 0.6
MEANT_MARGIN = 0.05


def said_with_kinds(question: str, grounding: Grounding) -> str:
    """The question with each name it gives said as the kind of thing it is ("How high is the airport?")."""
    said = question
    for match in sorted(grounding.matches, key=lambda m: len(m.mention), reverse=True):
        if match.mention.strip():
            kind = f"the {schema_words(match.label)}"
            said = re.sub(rf"(?<!\w){re.escape(match.mention)}(?!\w)", kind, said, flags=re.IGNORECASE)
    return said


def key_descriptions(labels: Sequence[str], nodes: Nodes) -> list[tuple[str, str]]:
    """(key, "<label> <key>") for every key of each label but the one that names its nodes (asked for a
    thing's name, a question asks for the thing), each label's keys in their order."""
    return [
        (key, f"{schema_words(label)} {schema_words(key)}")
        for label in labels
        for key in nodes.get(label, [])
        if key != identifying_key(nodes[label])
    ]


WINDOW_BEFORE, WINDOW_AFTER = 1, 3  # words kept around a word nothing explains: "how high are the airports"
_WORD = re.compile(r"\S+")


def around(sentence: str, words: Sequence[str]) -> list[str]:
    """The short spans of the sentence around each of `words` (those nothing in the schema explains), where
    they are said: the rest of a long sentence only dilutes what they mean ("On average, how high are the
    airports serving cities in the country?" is nearer the airport's latitude than its elevation)."""
    said = _WORD.findall(sentence)
    spans: dict[str, None] = {}
    for word in words:
        for i, token in enumerate(said):
            if token.lower().strip("?.,;:!'’") == word:
                spans.setdefault(" ".join(said[max(0, i - WINDOW_BEFORE) : i + WINDOW_AFTER + 1]))
    return list(spans)


def meant_keys(sentences: Sequence[str], labels: Sequence[str], nodes: Nodes, encode: Encode) -> tuple[str, ...]:
    """The one key of `labels` the first of `sentences` that clearly means one means, or none."""
    described = key_descriptions(labels, nodes)
    if not described or not sentences:
        return ()
    vectors = encode([*sentences, *(text for _, text in described)])
    keys = vectors[len(sentences) :]
    for row in range(len(sentences)):
        nearest: dict[str, float] = {}
        for (key, _), similarity in zip(described, keys @ vectors[row], strict=True):
            nearest[key] = max(nearest.get(key, -1.0), float(similarity))
        ranked = sorted(nearest.items(), key=lambda item: -item[1])
        best, runner_up = ranked[0][1], ranked[1][1] if len(ranked) > 1 else -1.0
        if best >= MEANT_FLOOR and best - runner_up >= MEANT_MARGIN:
            return (ranked[0][0],)
    return ()
