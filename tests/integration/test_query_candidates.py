"""Several candidate queries per graph step (graph_candidates): written by the (scripted) model through the
real client (the first as a filled-in query form, the others as free Cypher), checked and run on the real
graph, compared by value; agreement is reported as evidence."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from contracts.query_path import StepOutput
from tests.scripted_llm import ScriptedLLM
from tests.tool_calls import ToolCalls, call, local_backends

SUPPLIERS = "MATCH (s:Supplier) RETURN count(s) AS suppliers"
SUPPLIERS_TOO = "MATCH (s:Supplier) WITH s.name AS name RETURN count(name) AS n"
PRODUCTS = "MATCH (p:Product) RETURN count(p) AS products"


def replies(*texts: str, delay_s: float = 0.0) -> Any:
    queue: Iterator[str] = iter(texts)

    def respond(body: dict[str, Any]) -> tuple[int, str]:
        time.sleep(delay_s)
        return 200, next(queue)

    return respond


def query(text: str) -> str:
    return json.dumps({"query": text})


def form(label: str, answer: str = "count", value: str = "", steps: tuple[tuple[str, str], ...] = ()) -> str:
    """A filled-in query form: every node of `label` (or the one named `value`), the (relationship, direction)
    steps from it, and what to return."""
    walk = [{"relationship": r, "direction": d} for r, d in steps]
    return json.dumps(
        {
            "start": {"label": label, "key": "name" if value else "", "value": value},
            "steps": walk,
            "condition": {"key": "", "operator": "=", "value": ""},
            "combine": "none",
            "other": {"label": label, "key": "", "value": ""},
            "answer": answer,
            "answer_key": "",
        }
    )


async def run_graph_query(
    falkordb_url: str,
    llm: ScriptedLLM,
    planned: str,
    candidates: int = 3,
    timeout_ms: int = 30000,
    question: str = "How many suppliers are there?",
    form_when_doubted: bool = True,
) -> StepOutput:
    backends = local_backends(llm_url=llm.base_url, falkordb_url=falkordb_url)
    backends.graph_candidates = candidates
    backends.form_when_doubted = form_when_doubted
    request = call("GraphQuery", query=planned)
    request.step.timeout_ms = timeout_ms
    request.question = question
    try:
        return await ToolCalls(backends).GraphQuery(request)
    finally:
        await backends.aclose()


def rows_of(out: StepOutput) -> list[list[Any]]:
    return json.loads(out.output)["rows"]


async def test_candidates_that_agree_are_counted_as_evidence(falkordb_url: str) -> None:
    with ScriptedLLM(replies(form("Supplier"), query(SUPPLIERS_TOO))) as llm:
        out = await run_graph_query(falkordb_url, llm, SUPPLIERS)
    assert out.success and out.confidence.signals["candidates"] == 3 and out.confidence.signals["agreement"] == 1
    assert "3 of 3 candidate queries return this answer" in out.confidence.reasoning
    assert "returned a different answer" not in out.confidence.reasoning  # the form's is chosen, and the same
    assert out.confidence.signals["form_agrees"] == 1  # evidence for the calibrator (form_disagrees)
    [filled, written] = llm.requests
    for request in (filled, written):
        assert "Question: How many suppliers are there?" in request["messages"][-1]["content"]
        assert "(:PurchaseOrder)-[:ISSUED_TO]->(:Supplier)" in request["messages"][0]["content"]  # the live schema
    assert "Supplier" in json.dumps(filled["response_format"])  # the form's labels: the live schema's, as enums
    assert filled["temperature"] == 0 and written["temperature"] > 0  # free Cypher sampled, so it can differ


async def test_the_answer_most_candidates_share_wins_over_the_planners(falkordb_url: str) -> None:
    with ScriptedLLM(replies(form("Supplier"), query(SUPPLIERS_TOO))) as llm:
        out = await run_graph_query(falkordb_url, llm, PRODUCTS)
    with ScriptedLLM(replies()) as none:
        alone = await run_graph_query(falkordb_url, none, SUPPLIERS, candidates=1)
    assert rows_of(out) == rows_of(alone)  # the suppliers' count, not the products'
    assert out.confidence.signals["agreement"] == pytest.approx(2 / 3)
    assert "2 of 3 candidate queries" in out.confidence.reasoning
    assert "the planner's own query returned a different answer" in out.confidence.reasoning
    assert "candidates" not in alone.confidence.signals and not none.requests  # off: no extra LLM call


async def test_on_a_tie_the_forms_answer_wins_unless_it_is_empty(falkordb_url: str) -> None:
    with ScriptedLLM(replies(form("Supplier"))) as llm:
        out = await run_graph_query(falkordb_url, llm, PRODUCTS, candidates=2)
    with ScriptedLLM(replies()) as none:
        suppliers = await run_graph_query(falkordb_url, none, SUPPLIERS, candidates=1)
    assert rows_of(out) == rows_of(suppliers) and out.confidence.signals["agreement"] == 0.5
    assert "the planner's own query returned a different answer" in out.confidence.reasoning
    with ScriptedLLM(replies(form("Supplier", answer="names", value="No Such Supplier Ltd"))) as llm:
        kept = await run_graph_query(falkordb_url, llm, SUPPLIERS, candidates=2)
    assert rows_of(kept) == rows_of(suppliers)  # an empty answer does not win a tie
    assert "1 of 2 candidate queries" in kept.confidence.reasoning


async def test_a_tie_goes_to_the_query_that_uses_every_figure_the_question_gives(falkordb_url: str) -> None:
    question = "How many purchase orders have a total amount above 5000?"
    above = "MATCH (p:PurchaseOrder) WHERE p.total_amount > 5000 RETURN count(p) AS orders"
    with ScriptedLLM(replies(form("PurchaseOrder"))) as llm:  # the form leaves the amount out
        out = await run_graph_query(falkordb_url, llm, above, candidates=2, question=question)
    with ScriptedLLM(replies()) as none:
        planned = await run_graph_query(falkordb_url, none, above, candidates=1, question=question)
        every = await run_graph_query(falkordb_url, none, "MATCH (p:PurchaseOrder) RETURN count(p)", candidates=1)
    assert rows_of(out) == rows_of(planned) != rows_of(every)
    assert out.confidence.signals["agreement"] == 0.5


async def test_a_tie_goes_to_the_query_that_names_what_a_which_question_asks_for(falkordb_url: str) -> None:
    question = "Which supplier has the most purchase orders?"
    ranked = (
        "MATCH (p:PurchaseOrder)-[:ISSUED_TO]->(s:Supplier) RETURN s.name AS supplier, count(p) AS orders "
        "ORDER BY orders DESC LIMIT 3"
    )
    with ScriptedLLM(replies(form("Supplier"))) as llm:  # the form counts the suppliers: figures only
        out = await run_graph_query(falkordb_url, llm, ranked, candidates=2, question=question)
    assert isinstance(rows_of(out)[0][0], str) and len(rows_of(out)) == 3
    assert out.confidence.signals["form_agrees"] == 0


async def test_with_candidates_off_only_a_doubted_step_is_cross_checked_with_the_form(falkordb_url: str) -> None:
    question = "Which supplier has the most purchase orders?"
    counted = "MATCH (p:PurchaseOrder) RETURN count(p) AS orders"  # no supplier in it: doubted
    ranking = form("Supplier", answer="most_connected", steps=(("ISSUED_TO", "incoming"),))
    with ScriptedLLM(replies(ranking)) as llm:
        out = await run_graph_query(falkordb_url, llm, counted, candidates=1, question=question)
    assert len(llm.requests) == 1 and isinstance(rows_of(out)[0][0], str)  # the suppliers, ranked
    assert out.confidence.signals["candidates"] == 2 and out.confidence.signals["form_agrees"] == 1
    with ScriptedLLM(replies()) as none:
        kept = await run_graph_query(
            falkordb_url, none, counted, candidates=1, question=question, form_when_doubted=False
        )
    assert not none.requests and "candidates" not in kept.confidence.signals
    # a query that ignores a name the question gives is doubted too
    named = "How many purchase orders does Acme Industrial have?"
    with ScriptedLLM(replies(form("PurchaseOrder"))) as llm:
        out = await run_graph_query(
            falkordb_url, llm, "MATCH (p:PurchaseOrder) RETURN count(p)", candidates=1, question=named
        )
    assert len(llm.requests) == 1 and out.confidence.signals["candidates"] == 2


async def test_steps_of_one_question_are_cross_checked_with_the_form_written_once(falkordb_url: str) -> None:
    """A plan whose steps answer one question (a small model's multi-hop plan repeats the same walk) asked the
    form once per step: six identical calls of ~8 s each."""
    question = "Which supplier has the most purchase orders?"
    counted = "MATCH (p:PurchaseOrder) RETURN count(p) AS orders"  # no supplier in it: doubted
    ranking = form("Supplier", answer="most_connected", steps=(("ISSUED_TO", "incoming"),))
    with ScriptedLLM(replies(ranking)) as llm:
        backends = local_backends(llm_url=llm.base_url, falkordb_url=falkordb_url)
        try:
            outs = []
            for step in ("s1", "s2", "s3"):
                request = call("GraphQuery", query=counted)
                request.step.id, request.question = step, question
                outs.append(await ToolCalls(backends).GraphQuery(request))
        finally:
            await backends.aclose()
    assert len(llm.requests) == 1
    assert all(out.confidence.signals["form_agrees"] == 1 and isinstance(rows_of(out)[0][0], str) for out in outs)
    # steps running side by side share the one call still being written
    with ScriptedLLM(replies(ranking, delay_s=1.0)) as slow:
        backends = local_backends(llm_url=slow.base_url, falkordb_url=falkordb_url)
        try:
            requests = [call("GraphQuery", query=counted) for _ in range(2)]
            for n, request in enumerate(requests):
                request.step.id, request.question = f"s{n + 1}", question
            side_by_side = await asyncio.gather(*(ToolCalls(backends).GraphQuery(r) for r in requests))
        finally:
            await backends.aclose()
    assert len(slow.requests) == 1 and all(out.confidence.signals["form_agrees"] == 1 for out in side_by_side)


async def test_unusable_candidates_are_said_and_never_run(falkordb_url: str) -> None:
    writes = "MATCH (s:Supplier) SET s.name = 'pwned' RETURN s"
    with ScriptedLLM(replies("not json at all", query(writes))) as llm:
        out = await run_graph_query(falkordb_url, llm, SUPPLIERS)
    assert out.success and out.confidence.signals["candidates"] == 1
    assert "the query form was not usable: the model's reply was not a filled-in query form" in out.confidence.reasoning
    assert "the query writes (SET)" in out.confidence.reasoning
    with ScriptedLLM(replies()) as check:
        names = await run_graph_query(falkordb_url, check, "MATCH (s:Supplier {name: 'pwned'}) RETURN s", candidates=1)
    assert rows_of(names) == []


async def test_a_candidate_that_takes_too_long_is_dropped_and_said(falkordb_url: str) -> None:
    with ScriptedLLM(replies(query(SUPPLIERS), query(SUPPLIERS), delay_s=10.0)) as llm:
        started = time.monotonic()
        out = await run_graph_query(falkordb_url, llm, SUPPLIERS, timeout_ms=4000)
        took = time.monotonic() - started
    assert out.success and out.confidence.signals["candidates"] == 1
    assert "the query form timed out" in out.confidence.reasoning
    assert took < 4.0  # inside the step's own timeout (unbounded, it would take 10 s or more)
