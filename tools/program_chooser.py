"""The query for a graph step chosen instead of written: code enumerates the whole programs the question could
mean and ranks them by evidence (cypher/programs.py); the model is shown the best few, each in plain words
(cypher/walk_words.py), says the chain in its own words, then picks one by number under a grammar, or 0 when
none answers the question. Nothing is left for it to fill in: what to return, the property read and any
condition are part of each program, so a small model cannot invent a condition or a key.

The shown order is code's ranking, so a model that leans to the first choice leans to code's best; a choice
other than the first is the model overruling the ranking, which the caller keeps as evidence.
bench/query_writers.py measures the choice against code's first program, the query form and free Cypher."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Any

from backends.grounding import shortest_connections
from backends.held_values import held_values
from backends.schema_meaning import shared_meaning
from contracts.query_path import Grounding
from cypher.intent import IntentError, Nodes
from cypher.programs import Program, programs
from cypher.walk_words import describe_program
from questions.linking import Linking, SchemaTerm, canonical_question, schema_terms
from questions.meant_keys import around, said_with_kinds
from questions.reading import QuestionReading, read_question
from questions.walks import without_names
from service.off_loop import off_loop
from tools.link_judge import judge_links
from tools.tied_programs import answering_first

if TYPE_CHECKING:
    from backends import Backends
    from backends.graph_store import GraphStore
    from backends.schema_check import SchemaCheck

SHOWN = 6  # programs the model chooses among: code's first is right far more often than its seventh
READING_CHARS = 160
CHOICE_TOKENS = 120  # the reading (at most READING_CHARS) and the number after it
# The first link of a process loads the sentence encoder and a graph's first encodes its schema's parts: about
# 2 s on an idle 2-core machine, several times that under load. Later links take milliseconds.
LINKING_TIMEOUT_S = 30.0


# Decides the links the sentence vectors leave open: (question, linking, the schema's terms) -> the linking.
LinkJudge = Callable[[str, Linking, tuple[SchemaTerm, ...]], Awaitable[Linking]]


class ProgramChoiceError(IntentError):
    """The model's reply chose nothing the candidates hold; the message says why."""


@dataclass(frozen=True)
class ProgramChoice:
    """The programs shown (code's ranking), which one the model chose (0-based; None: it said none answers
    the question) and the chain as it read it."""

    candidates: tuple[Program, ...]
    chosen: int | None
    reading: str

    @property
    def program(self) -> Program | None:
        return None if self.chosen is None else self.candidates[self.chosen]

    @property
    def query(self) -> str:
        return "" if self.program is None else self.program.query

    @property
    def overrules_code(self) -> bool:
        """The model chose a program other than code's first (or none)."""
        return self.chosen != 0


def numbered_programs(candidates: Sequence[Program]) -> str:
    """The programs, one a line, numbered from 1 as the model chooses them."""
    return "\n".join(
        f"{n}. {describe_program(program.walk, program.intent)}" for n, program in enumerate(candidates, start=1)
    )


def choice_json_schema(count: int) -> dict[str, Any]:
    """The reply's grammar: the chain in the model's words first (properties are written in this order), then
    the number of a program, 0 for none."""
    properties = {
        "reading": {"type": "string", "maxLength": READING_CHARS},
        "program": {"enum": list(range(0, count + 1))},
    }
    return {"type": "object", "properties": properties, "required": list(properties)}


def parse_choice(text: str, count: int) -> tuple[int | None, str]:
    """The reply as (program index from 0, or None for none; the reading); ProgramChoiceError when it is not a
    choice among `count` programs."""
    try:
        raw = json.loads(text)
        number, reading = raw["program"], str(raw.get("reading") or "")
    except (json.JSONDecodeError, KeyError, TypeError):
        raise ProgramChoiceError("the model's reply was not a choice of program") from None
    if isinstance(number, bool) or not isinstance(number, int) or not 0 <= number <= count:
        raise ProgramChoiceError(f"the model chose program {number!r}, not one of the {count} shown (or 0)")
    return (None if number == 0 else number - 1), reading


def _properties(nodes: Nodes) -> str:
    return "\n".join(f"- {label}: {', '.join(sorted(keys)) or '(none)'}" for label, keys in sorted(nodes.items()))


async def choose_program(
    question: str, nodes: Nodes, candidates: Sequence[Program], backends: Backends
) -> ProgramChoice:
    """The model's choice among `candidates` for `question`; ProgramChoiceError says why there is none."""
    if not candidates:
        raise ProgramChoiceError("there is no program to choose from")
    prompts = backends.prompts
    messages = [
        {"role": "system", "content": prompts.render("program_system", properties=_properties(nodes))},
        {
            "role": "user",
            "content": prompts.render("program_user", question=question, programs=numbered_programs(candidates)),
        },
    ]
    completion = await backends.llm.chat(
        messages, json_schema=choice_json_schema(len(candidates)), max_tokens=CHOICE_TOKENS, temperature=0.0
    )
    chosen, said = parse_choice(completion.text, len(candidates))
    return ProgramChoice(candidates=tuple(candidates), chosen=chosen, reading=said)


async def ranked_programs(
    question: str, grounding: Grounding, backends: Backends, k: int = SHOWN
) -> tuple[QuestionReading, Nodes, list[Program]]:
    """The question read once and its `k` best programs on the live schema; with two named things, the
    connections the data holds between them rank among them; with `link_judge` set, the words the sentence
    vectors link to no part for sure are judged by the model (tools/link_judge.py). IntentError: no schema,
    or an empty graph."""
    if backends.graph is None or backends.schema is None:
        raise IntentError("there is no graph schema to enumerate programs from")
    judge = partial(judge_links, backends=backends) if backends.link_judge else None
    return await ranked_programs_on(question, grounding, backends.graph, backends.schema, k, judge)


async def ranked_programs_on(
    question: str,
    grounding: Grounding,
    graph: GraphStore,
    schema: SchemaCheck,
    k: int = SHOWN,
    judge: LinkJudge | None = None,
) -> tuple[QuestionReading, Nodes, list[Program]]:
    """ranked_programs on a graph and its schema check, with no other backend (bench/walk_recall.py); `judge`
    decides the links the vectors leave open (none: the vectors' links stand)."""
    facts = await schema.facts()
    if not facts.nodes:
        raise IntentError("the graph is empty")
    reading = await off_loop(
        "reading the question", partial(read_question, question, grounding, facts.nodes, facts.rels, facts.rel_props)
    )
    observed: list[tuple[str, ...]] = []
    named = grounding.described_entities(2)
    if len(named) == 2:
        paths = await shortest_connections(graph, named[0], named[1])
        observed = [tuple(types) for _, _, types in paths or []]
    held = await held_values(graph, reading.values)
    stored = {h.value.lower() for h in held}
    spent = [*reading.figures, *reading.quoted, *stored, *(v.said for v in reading.values if v.word in stored)]
    terms = schema_terms(facts.nodes, facts.rels, rel_keys=facts.rel_props)
    plain = without_names(question, grounding)
    linking = await off_loop(
        "linking the question's words", partial(shared_meaning().link, plain, terms, spent), LINKING_TIMEOUT_S
    )
    if judge is not None:
        linking = await judge(question, linking, terms)
    canonical = canonical_question(question, linking)
    if canonical != question:  # read again as the schema says it: every reading below matches the schema's words
        reading = await off_loop(
            "reading the question",
            partial(read_question, canonical, grounding, facts.nodes, facts.rels, facts.rel_props),
        )
    reading = replace(reading, linking=linking)
    # No key named, nor a connection asked: the one key the sentence means, of the things it names, asks for or
    # speaks of.
    if not reading.shape.keys and "connection" not in reading.shape.combines:
        spoken = [label for label in (*reading.labels, *reading.hinted) if label in facts.nodes]
        labels = [
            *dict.fromkeys([*(a.label for a in reading.named), *([reading.asked] if reading.asked else []), *spoken])
        ]
        sentence = said_with_kinds(question, grounding)
        sentences = [*around(sentence, linking.unexplained), sentence]  # where the unexplained words are said first
        meant = await off_loop(
            "reading the key meant",
            partial(shared_meaning().meant_keys, sentences, labels or sorted(facts.nodes), facts.nodes),
            LINKING_TIMEOUT_S,
        )
        reading = replace(reading, shape=replace(reading.shape, meant=meant))
    found = await off_loop(
        "enumerating the programs",
        partial(programs, reading, reading.shape, facts.nodes, facts.rels, observed, k, held, facts.rel_props),
    )
    return reading, facts.nodes, await answering_first(found, graph)


async def program_query(question: str, grounding: Grounding, backends: Backends, k: int = SHOWN) -> ProgramChoice:
    """The program the model chooses for `question` among the `k` best code proposes."""
    _, nodes, found = await ranked_programs(question, grounding, backends, k)
    return await choose_program(question, nodes, found, backends)
