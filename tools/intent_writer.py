"""The query a graph step needs, written the second way: the LLM fills in the query form (cypher/intent.py)
under a grammar whose labels, relationship types and keys are the live schema's, and the form is compiled
to Cypher here. Its answer is compared with the free-Cypher queries' (tools/query_candidates.py): two ways
of writing the query that reach the same rows are stronger evidence than two samples of one way."""

from __future__ import annotations

import asyncio
import json
from collections import OrderedDict
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

from backends.grounding import described_for_writer
from contracts.query_path import Grounding
from cypher.intent import (
    IntentError,
    compile_intent,
    describe_form,
    intent_json_schema,
    parse_intent,
    with_spelled_steps,
)
from questions.walks import spelled_walk, without_names

if TYPE_CHECKING:
    from backends import Backends
    from backends.llm import Completion

FORM_TOKENS = 320  # a filled-in form with three steps is ~200 tokens
# The forms each model wrote lately, by the exact prompt and grammar: written at temperature 0, the same prompt
# gets the same form, and a plan whose steps all answer one question cross-checked each with the same form (six
# identical ~8 s calls for one multi-hop question, measured). Kept as the call's task, so that steps running
# side by side share one call; a failed call is forgotten. Bounded, per worker process; the prompt holds the
# schema and the grounding, so a changed graph is a new prompt.
_WRITTEN: WeakKeyDictionary[object, OrderedDict[tuple[str, str, str], asyncio.Task[Completion]]] = WeakKeyDictionary()
WRITTEN_KEPT = 64


async def form_system_prompt(backends: Backends) -> str:
    """The form writer's system prompt: the same for every question on one graph (warmed at start)."""
    assert backends.graph is not None
    return backends.prompts.render(
        "intent_system", graph_schema=await backends.graph.describe_schema(), form=describe_form()
    )


async def intent_query(question: str, grounding: Grounding, backends: Backends) -> str:
    """The compiled query for `question`; IntentError says why there is none (no schema, a form that does
    not fit it)."""
    if backends.graph is None or backends.schema is None:
        raise IntentError("there is no graph schema to fill the form from")
    facts = await backends.schema.facts()
    if not facts.nodes:
        raise IntentError("the graph is empty")
    names = await described_for_writer(question, grounding, backends)
    messages = [
        {"role": "system", "content": await form_system_prompt(backends)},
        {"role": "user", "content": backends.prompts.render("intent_user", question=question, grounding=names)},
    ]
    intent = parse_intent(await _form_text(messages, intent_json_schema(facts.nodes, facts.rels), backends))
    completed = with_spelled_steps(intent, spelled_walk(without_names(question, grounding), {r[1] for r in facts.rels}))
    if completed != intent:
        try:
            return compile_intent(completed, facts.nodes, facts.rels)
        except IntentError:
            pass  # the question's words name a walk the schema does not hold: the model's own form stands
    return compile_intent(intent, facts.nodes, facts.rels)


async def _form_text(messages: list[dict[str, str]], schema: dict[str, Any], backends: Backends) -> str:
    """The model's form for these messages under this grammar: asked once, then read from _WRITTEN. A step that
    stops waiting (its time ran out) leaves the call running for the others (shielded)."""
    written = _WRITTEN.setdefault(backends.llm, OrderedDict())
    key = (messages[0]["content"], messages[1]["content"], json.dumps(schema, sort_keys=True))
    call = written.get(key)
    if call is None:
        call = asyncio.ensure_future(
            backends.llm.chat(messages, json_schema=schema, max_tokens=FORM_TOKENS, temperature=0.0)
        )
        call.add_done_callback(lambda done: _forget_failed(written, key, done))
        written[key] = call
        while len(written) > WRITTEN_KEPT:
            written.popitem(last=False)
    else:
        written.move_to_end(key)
    return (await asyncio.shield(call)).text


def _forget_failed(
    written: OrderedDict[tuple[str, str, str], asyncio.Task[Completion]],
    key: tuple[str, str, str],
    done: asyncio.Task[Completion],
) -> None:
    if (done.cancelled() or done.exception() is not None) and written.get(key) is done:
        del written[key]
