"""The query for a graph step chosen instead of written: the model is shown the walks the question could mean
(enumerated from the schema, cypher/walk_space.py), each in plain words (cypher/walk_words.py), and picks one
by number under a grammar, filling in only what the walk leaves open (what to return, the property it is read
from, a condition). It first says the chain in its own words, so the number it picks follows a reading rather
than a guess. The choice is compiled to Cypher by the query form's compiler (cypher/intent.py).

bench/query_writers.py measures the choice against free Cypher and the filled-in form, question by question."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Any

from backends.grounding import shortest_connections
from contracts.query_path import Grounding
from cypher.intent import ANSWERS, OPERATORS, Condition, IntentError, Nodes, QueryIntent, Rel, compile_intent
from cypher.walk_space import Walk, candidate_walks
from cypher.walk_words import numbered
from questions.reading import QuestionReading, read_question
from service.off_loop import off_loop

if TYPE_CHECKING:
    from backends import Backends

CHOICE_TOKENS = 160  # the reading (at most READING_CHARS) and the few fields after it
READING_CHARS = 160


class WalkChoiceError(IntentError):
    """The model's reply chose no walk this question's candidates hold; the message says why."""


@dataclass(frozen=True)
class WalkChoice:
    """The chosen walk's query, which walk it is (0-based, among `candidates`), the form compiled, the
    candidates shown (for later evidence) and the chain as the model read it."""

    query: str
    chosen: int
    intent: QueryIntent
    candidates: tuple[Walk, ...]
    reading: str


def _keys(nodes: Nodes) -> list[str]:
    return sorted({key for keys in nodes.values() for key in keys})


def given_values(reading: QuestionReading) -> list[str]:
    """What a condition may test against: the figures and quoted values the question gives, nothing else."""
    return [*reading.figures, *reading.quoted]


def choice_json_schema(count: int, nodes: Nodes, values: Sequence[str] = ()) -> dict[str, Any]:
    """The reply's grammar: the chain in the model's words first (properties are written in this order), then
    the walk's number, then the query form's own enums for what the walk leaves open. A condition exists only
    when the question gives a figure or value, and tests only those: asked for a condition it does not need,
    a small model invents one (a walk chosen right returned nothing under "population > 1000")."""
    keys = _keys(nodes)
    properties: dict[str, Any] = {
        "reading": {"type": "string", "maxLength": READING_CHARS},
        "walk": {"enum": list(range(1, count + 1))},
        "answer": {"enum": list(ANSWERS)},
        "answer_key": {"enum": ["", *keys]},
    }
    if values:
        properties["condition"] = {
            "type": "object",
            "properties": {
                "key": {"enum": ["", *keys]},
                "operator": {"enum": list(OPERATORS)},
                "value": {"enum": list(values)},
            },
            "required": ["key", "operator", "value"],
        }
    return {"type": "object", "properties": properties, "required": list(properties)}


def _properties(nodes: Nodes) -> str:
    return "\n".join(f"- {label}: {', '.join(sorted(keys)) or '(none)'}" for label, keys in sorted(nodes.items()))


def _answers() -> str:
    return "\n".join(f"  - {name}: {meaning}" for name, meaning in ANSWERS.items())


def _values(reading: QuestionReading) -> str:
    """The figures and quoted values the question gives: what a condition would test."""
    given = [*reading.figures, *(json.dumps(value, ensure_ascii=False) for value in reading.quoted)]
    return f"Figures and values it gives: {', '.join(given)}\n" if given else ""


def parse_choice(
    text: str, count: int, nodes: Nodes, values: Sequence[str] = ()
) -> tuple[int, str, str, Condition | None, str]:
    """The reply as (walk index from 0, answer, answer_key, condition, reading); WalkChoiceError when it is
    not a choice among `count` walks with the form's own values, or tests a value the question never gave."""
    try:
        raw = json.loads(text)
        walk, answer, key, condition = raw["walk"], raw["answer"], raw.get("answer_key") or "", raw.get("condition")
        reading = str(raw.get("reading") or "")
    except (json.JSONDecodeError, KeyError, TypeError):
        raise WalkChoiceError("the model's reply was not a choice of walk") from None
    if isinstance(walk, bool) or not isinstance(walk, int) or not 1 <= walk <= count:
        raise WalkChoiceError(f"the model chose walk {walk!r}, not one of the {count} shown")
    keys = _keys(nodes)
    if answer not in ANSWERS:
        raise WalkChoiceError(f"the model's answer {answer!r} is none of {', '.join(ANSWERS)}")
    if key and key not in keys:
        raise WalkChoiceError(f"the model's answer_key {key!r} is no property of this graph")
    return walk - 1, answer, str(key), _condition(condition, keys, values), reading


def _condition(raw: object, keys: list[str], values: Sequence[str]) -> Condition | None:
    if raw in (None, {}):
        return None
    if not isinstance(raw, dict):
        raise WalkChoiceError("the model's condition was not a key, an operator and a value")
    key, operator, value = raw.get("key") or "", raw.get("operator") or "=", raw.get("value", "")
    if not key:
        return None
    if key not in keys or operator not in OPERATORS:
        raise WalkChoiceError(f"the model's condition ({key!r} {operator!r}) uses no property or operator of the form")
    if str(value) not in values:
        raise WalkChoiceError(f"the model's condition tests {value!r}, which the question does not give")
    return Condition(str(key), str(operator), str(value))


async def choose_walk(
    question: str,
    reading: QuestionReading,
    nodes: Nodes,
    rels: set[Rel],
    candidates: Sequence[Walk],
    backends: Backends,
) -> WalkChoice:
    """The model's choice among `candidates` for `question`, compiled; IntentError (WalkChoiceError for the
    reply itself) says why there is none."""
    if not candidates:
        raise WalkChoiceError("there is no walk to choose from")
    prompts = backends.prompts
    messages = [
        {"role": "system", "content": prompts.render("walk_system", properties=_properties(nodes), answers=_answers())},
        {
            "role": "user",
            "content": prompts.render(
                "walk_user", question=question, values=_values(reading), walks=numbered(candidates)
            ),
        },
    ]
    values = given_values(reading)
    completion = await backends.llm.chat(
        messages,
        json_schema=choice_json_schema(len(candidates), nodes, values),
        max_tokens=CHOICE_TOKENS,
        temperature=0.0,
    )
    index, answer, answer_key, condition, said = parse_choice(completion.text, len(candidates), nodes, values)
    walk = candidates[index]
    # A connection's condition is what ends it at the other named thing: the model's would replace it.
    intent = replace(walk.intent, answer=answer, answer_key=answer_key, condition=walk.intent.condition or condition)
    return WalkChoice(
        query=compile_intent(intent, nodes, rels),
        chosen=index,
        intent=intent,
        candidates=tuple(candidates),
        reading=said,
    )


async def walk_query(question: str, grounding: Grounding, backends: Backends) -> WalkChoice:
    """The walk the model chooses for `question` among those the live schema allows, compiled; with two named
    things, the connections the data holds between them are among the candidates. IntentError says why there
    is none (no schema, an empty graph, a reply that chose nothing shown)."""
    if backends.graph is None or backends.schema is None:
        raise IntentError("there is no graph schema to enumerate walks from")
    facts = await backends.schema.facts()
    if not facts.nodes:
        raise IntentError("the graph is empty")
    reading = await off_loop(
        "reading the question", partial(read_question, question, grounding, facts.nodes, facts.rels)
    )
    observed: list[tuple[str, ...]] = []
    named = grounding.described_entities(2)
    if len(named) == 2:
        paths = await shortest_connections(backends.graph, named[0], named[1])
        observed = [tuple(types) for _, _, types in paths or []]
    walks = await off_loop(
        "enumerating the walks", partial(candidate_walks, reading, facts.nodes, facts.rels, observed)
    )
    return await choose_walk(question, reading, facts.nodes, facts.rels, walks, backends)
