"""An answer states what was asked, through the real workflow, tools and demo graph (the model scripted): the
superlative's answer names the row the query ranked first, a query that ignores a name the question gives is
recorded as evidence against its answer, and a "which" answered with figures only is stated as no answer."""

from __future__ import annotations

import json

from confidence.calibrator import INADEQUATE_CEILING
from contracts.run import AgentRunResult
from tests.agent_harness import plan
from tests.integration.test_grounded_answers import GRAPH, Conversation

MOST_ORDERS = (
    "MATCH (po:PurchaseOrder)-[:ISSUED_TO]->(s:Supplier) RETURN s.name AS supplier, count(po) AS orders "
    "ORDER BY orders DESC LIMIT 5"
)


async def test_a_superlative_answered_with_another_row_is_read_from_the_ranking(harness_factory) -> None:
    """The demo's "which supplier has the most purchase orders": the model named the fourth row, at 0.63. The
    answer now names the first, says it was read from the ranking, and the evidence records both."""
    llm = Conversation([plan(("s1", "GraphQuery", {"query": MOST_ORDERS}, []))], answer="PLACEHOLDER")
    probe = await harness_factory(Conversation([plan(("s1", "GraphQuery", {"query": MOST_ORDERS}, []))]), GRAPH)
    rows = json.loads((await (await probe.start("List suppliers by orders")).result()).step_results[0].output)["rows"]
    llm.answer = f"{rows[3][0]} has the most purchase orders with {rows[3][1]}."  # true values, wrong row

    harness = await harness_factory(llm, GRAPH)
    result: AgentRunResult = await (await harness.start("Which supplier has the most purchase orders?")).result()

    assert json.loads(result.step_results[0].output)["ordered_by"] == "orders DESC"
    assert result.answer.startswith(f"{rows[0][0]} (orders: {rows[0][1]}): first of the 5 rows the query ranked")
    assert result.evidence["reranked"] == 1.0 and result.evidence["ranked_first"] == 1.0
    assert "the answer is read from the ranking" in harness.messages[-1].content


async def test_a_query_that_ignores_a_name_the_question_gives_is_evidence_against_it(harness_factory) -> None:
    """The demo's "total of unpaid invoices of Globex Supply", answered with the total of every supplier's."""
    everyone = "MATCH (i:Invoice) WHERE i.status = 'open' RETURN sum(i.amount) AS total"
    theirs = (
        "MATCH (i:Invoice)-[:BILLS]->(:PurchaseOrder)-[:ISSUED_TO]->(s:Supplier {name: 'Globex Supply'}) "
        "WHERE i.status = 'open' RETURN sum(i.amount) AS total"
    )
    question = "What is the total amount of unpaid invoices of Globex Supply?"
    results = []
    for query in (everyone, theirs):
        harness = await harness_factory(
            Conversation([plan(("s1", "GraphQuery", {"query": query}, []))], answer="The total is as shown."), GRAPH
        )
        results.append(await (await harness.start(question)).result())
    ignored, used = results
    assert ignored.step_results[0].confidence.signals["unused_names"] == 1.0 and ignored.evidence["unused_name"] == 1.0
    assert used.step_results[0].confidence.signals["unused_names"] == 0.0 and used.evidence["unused_name"] == 0.0
    total = json.loads(used.step_results[0].output)["rows"][0][0]
    assert f"{total}" in used.answer  # no figure written: the answer is restated from the row


async def test_a_which_answered_by_figures_only_is_stated_as_no_answer(harness_factory) -> None:
    """ "Which is the largest order" answered with an amount and no order: the rows hold no name at all. The step
    scores below its threshold with the reason and the ladder asks for a repair; with none found, the run says
    it could not establish an answer, instead of an answer that names no order (tests/unit/test_answer_fit.py
    checks the answer-level judgement that catches it where no step does)."""
    query = "MATCH (po:PurchaseOrder) RETURN max(po.total_amount) AS largest"
    llm = Conversation([plan(("s1", "GraphQuery", {"query": query}, []))], answer="The largest is shown above.")
    harness = await harness_factory(llm, GRAPH)
    result: AgentRunResult = await (await harness.start("Which purchase order is the largest?")).result()
    step = result.step_results[0]
    assert not step.success and "the rows hold no name" in step.confidence.reasoning
    assert "repairing the arguments" in harness.text()
    assert result.confidence is not None and result.confidence <= INADEQUATE_CEILING
    assert harness.messages[-1].content.startswith("I could not establish an answer")


async def test_a_how_many_about_a_thing_that_does_not_exist_is_not_held_to_stating_a_figure(harness_factory) -> None:
    """'The knowledge graph has nothing named ...' is the whole answer: no figure is missing from it."""
    query = (
        "MATCH (po:PurchaseOrder)-[:ISSUED_TO]->(s:Supplier) WHERE s.name = 'Zyxwv Holdings' RETURN count(po) AS orders"
    )
    llm = Conversation([plan(("s1", "GraphQuery", {"query": query}, []))])
    harness = await harness_factory(llm, GRAPH)
    result: AgentRunResult = await (await harness.start("How many purchase orders does Zyxwv Holdings have?")).result()
    assert result.answer.startswith("The knowledge graph has nothing named 'Zyxwv Holdings'")
    assert result.evidence["inadequate"] == 0.0
    assert result.confidence is not None and result.confidence > INADEQUATE_CEILING
