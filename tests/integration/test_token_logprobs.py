"""The model's sureness of its words reaches the answer's confidence, through the real workflow, client and demo
graph (the model scripted): log-probabilities of the plan's query and of the answer become evidence, and a
server that gives none leaves that evidence out without costing the answer its calibrated confidence."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from contracts.run import AgentRunResult
from tests.agent_harness import plan
from tests.integration.test_grounded_answers import GRAPH, Conversation
from tests.scripted_llm import is_planning, is_synthesis

QUERY = "MATCH (s:Supplier) RETURN count(s) AS suppliers"


class SureOfSome(Conversation):
    """Plans at one log-probability per token and answers at another."""

    def __init__(self, plan_logprob: float, answer_logprob: float) -> None:
        super().__init__([plan(("s1", "GraphQuery", {"query": QUERY}, []))], answer="ANSWER")
        self.logprobs = {"plan": plan_logprob, "answer": answer_logprob}

    def token_logprob(self, body: dict[str, Any]) -> float:
        return self.logprobs["plan" if is_planning(body) else "answer" if is_synthesis(body) else "plan"]


async def answer(harness_factory: Any, llm: Conversation) -> AgentRunResult:
    probe = await harness_factory(Conversation([plan(("s1", "GraphQuery", {"query": QUERY}, []))]), GRAPH)
    output = (await (await probe.start("Count suppliers")).result()).step_results[0].output
    llm.answer = f"There are {json.loads(output)['rows'][0][0]} suppliers."
    harness = await harness_factory(llm, GRAPH)
    return await (await harness.start("How many suppliers are there?")).result()


async def test_the_plans_query_and_the_answer_are_scored_by_how_sure_the_model_was(harness_factory) -> None:
    sure = await answer(harness_factory, SureOfSome(plan_logprob=-0.01, answer_logprob=-0.02))
    unsure = await answer(harness_factory, SureOfSome(plan_logprob=-1.5, answer_logprob=-1.2))
    assert sure.evidence["query_token_p"] == pytest.approx(math.exp(-0.01), abs=1e-3)
    assert sure.evidence["answer_token_p"] == pytest.approx(math.exp(-0.02), abs=1e-3)
    assert unsure.evidence["query_weakest_p"] == pytest.approx(math.exp(-1.5), abs=1e-3)
    assert unsure.evidence["answer_weakest_p"] == pytest.approx(math.exp(-1.2), abs=1e-3)
    assert sure.confidence is not None and unsure.confidence is not None


async def test_a_server_without_log_probabilities_leaves_them_out_says_so_and_stays_calibrated(
    harness_factory, tmp_path: Path
) -> None:
    result = await answer(harness_factory, Conversation([plan(("s1", "GraphQuery", {"query": QUERY}, []))]))
    assert not {"query_token_p", "query_weakest_p", "answer_token_p", "answer_weakest_p"} & set(result.evidence)
    assert result.confidence is not None and "not calibrated" not in result.answer
    said = "The LLM server gave no token log-probabilities for this plan"
    records = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert any(said in note for note in records[-1]["notes"])  # the audit record of the run asked last


async def test_a_server_that_gives_them_is_not_said_to_lack_them(harness_factory, tmp_path: Path) -> None:
    await answer(harness_factory, SureOfSome(plan_logprob=-0.1, answer_logprob=-0.1))
    records = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert not any("token log-probabilities" in note for note in records[-1]["notes"])
