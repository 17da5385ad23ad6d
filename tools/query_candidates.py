"""Several candidate queries for one graph step (the `graph_candidates` setting): besides the planner's
query, the first other candidate is written the second way, as a filled-in query form compiled to Cypher
(tools/intent_writer.py), and any further ones as free Cypher sampled from the LLM independently; each is
checked like the planner's (fixed, EXPLAINed, schema-checked, never a write) and the valid ones run. Their
answers are compared by value (confidence/agreement.py): the answer most candidates share is the step's,
and how many share it is evidence for the calibrator. Two ways of writing a query that agree are stronger
evidence than two samples of one way, which tend to repeat one misreading."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import structlog

from backends.graph_store import GraphQueryError, QueryRows
from backends.grounding import described_for_writer
from confidence.agreement import answer_signature, vote
from contracts.query_path import Grounding
from tools.intent_writer import intent_query
from tools.query_doubts import QueryDoubts, query_doubts

if TYPE_CHECKING:
    from backends import Backends
    from tools.base import Tool

log = structlog.get_logger(__name__)
SAMPLING_TEMPERATURE = 0.7
QUERY_SCHEMA = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}
Writer = Callable[[], Awaitable[str]]  # writes one more query for the step's question


@dataclass
class Tally:
    """The outcome of the vote: the rows and query chosen, and what the other candidates did."""

    query: str
    rows: QueryRows
    doubts: QueryDoubts  # the chosen query's, computed for the vote: its evidence signals need no second check
    valid: int = 1  # candidates that ran, the planner's included
    agreeing: int = 1  # of those, how many returned the chosen answer
    notes: list[str] = field(default_factory=list)  # candidates that could not run, and why
    form_agrees: bool | None = None  # whether the query form's answer is the chosen one (None: it did not run)

    @property
    def agreement(self) -> float:
        return self.agreeing / self.valid

    def describe(self) -> str:
        said = f"{self.agreeing} of {self.valid} candidate queries return this answer"
        return f"{said} ({'; '.join(self.notes)})" if self.notes else said


async def _messages(question: str, grounding: Grounding, backends: Backends) -> list[dict[str, str]]:
    """The candidate writer's prompt: the same for every candidate of a step (sampling makes them differ)."""
    assert backends.graph is not None
    prompts = backends.prompts
    return [
        {
            "role": "system",
            "content": prompts.render(
                "graph_candidate_system",
                graph_schema=await backends.graph.describe_schema(),
                cypher_rules=prompts.render("cypher_rules").strip(),
            ),
        },
        {
            "role": "user",
            "content": prompts.render(
                "graph_candidate_user",
                question=question,
                grounding=await described_for_writer(question, grounding, backends),
            ),
        },
    ]


async def _free(messages: list[dict[str, str]], backends: Backends) -> str:
    completion = await backends.llm.chat(
        messages, json_schema=QUERY_SCHEMA, max_tokens=256, temperature=SAMPLING_TEMPERATURE
    )
    try:
        query = json.loads(completion.text)["query"]
    except (json.JSONDecodeError, KeyError, TypeError):
        raise ValueError("the model's reply was not a query") from None
    if not isinstance(query, str) or not query.strip():
        raise ValueError("the model's reply was not a query")
    return query.strip()


async def _writers(
    question: str, grounding: Grounding, backends: Backends, candidates: int
) -> list[tuple[str, Writer]]:
    """The `candidates - 1` other candidates' writers, by kind, in the order they are tried: the query form
    first (with a schema to fill it from), then free Cypher sampled (its prompt built only when one is)."""
    writers: list[tuple[str, Writer]] = []
    if backends.schema is not None:
        writers.append(("form", lambda: intent_query(question, grounding, backends)))
    free_count = candidates - 1 - len(writers)
    if free_count > 0:
        messages = await _messages(question, grounding, backends)
        free: Writer = lambda: _free(messages, backends)  # noqa: E731 (one closure, reused)
        writers += [("free", free)] * free_count
    return writers[: candidates - 1]


async def _candidate(tool: Tool, write: Writer, backends: Backends, timeout_ms: int) -> tuple[str, QueryRows]:
    """One more query for the question, checked and run; ValueError says why it could not be used."""
    assert backends.graph is not None
    query = await write()
    arguments = await tool.fix({"query": query}, backends) or {"query": query}
    problems = await tool.check(arguments, backends)
    if problems:
        raise ValueError(problems[0])
    try:
        rows = await backends.graph.ro_query(arguments["query"], timeout_ms=timeout_ms, max_rows=backends.max_rows)
    except GraphQueryError as exc:
        raise ValueError(f"the graph rejected it: {exc}") from None
    return arguments["query"], rows


async def cross_check(
    tool: Tool,
    question: str,
    query: str,
    rows: QueryRows,
    grounding: Grounding,
    backends: Backends,
    budget_s: float,
    timeout_ms: int,
    candidates: int,
    doubts: QueryDoubts,
) -> Tally:
    """The planner's query and up to `candidates - 1` others, within `budget_s` seconds in all (a candidate
    still being written when the budget runs out is dropped and said so). `doubts`: the planner's query's,
    computed with its rows by the step already (tools/query_doubts.py), not checked again."""
    found: list[tuple[str, QueryRows]] = [(query, rows)]
    notes: list[str] = []
    form_at: int | None = None
    deadline = time.monotonic() + budget_s
    for kind, write in await _writers(question, grounding, backends, candidates):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            notes.append("no time left for another candidate")
            break
        what = "the query form" if kind == "form" else "a candidate"
        try:
            found.append(await asyncio.wait_for(_candidate(tool, write, backends, timeout_ms), remaining))
            form_at = len(found) - 1 if kind == "form" else form_at
        except TimeoutError:
            notes.append(f"{what} timed out after {budget_s:.0f} s")
            break
        except ValueError as exc:
            notes.append(f"{what} was not usable: {exc}")
        except Exception as exc:  # the LLM unreachable, say: the planner's query still stands
            log.warning("candidate_failed", kind=kind, error=str(exc))
            notes.append(f"{what} failed: {exc}")
    # Ties go to the earliest in this order: answers with rows before empty ones (a query that matched
    # nothing more often misread the question than found that nothing exists), queries with no doubt about
    # the question before doubted ones, then the form's query, then the planner's (bench/query_writers.py:
    # where the two disagree, the form's is right more often).
    found_doubts = [doubts, *[await query_doubts(question, q, grounding, backends.schema, r) for q, r in found[1:]]]
    order = sorted(range(len(found)), key=lambda i: (not found[i][1].rows, found_doubts[i].loses_ties, i != form_at, i))
    best_in_order, agreeing = vote([answer_signature(found[i][1].rows) for i in order])
    best = order[best_in_order]
    chosen_query, chosen_rows = found[best]
    if answer_signature(rows.rows) != answer_signature(chosen_rows.rows):
        notes.append("the planner's own query returned a different answer")
    form_agrees = (
        None if form_at is None else (answer_signature(found[form_at][1].rows) == answer_signature(chosen_rows.rows))
    )
    return Tally(
        query=chosen_query,
        rows=chosen_rows,
        valid=len(found),
        agreeing=agreeing,
        notes=notes,
        form_agrees=form_agrees,
        doubts=found_doubts[best],
    )
