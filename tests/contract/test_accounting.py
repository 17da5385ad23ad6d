"""Accounting as TrustGraph's agent does it, read with TrustGraph's own client (trustgraph-base 2.11.1): the
message that ends the dialog carries the tokens of every LLM call of the run (planning and its repair,
synthesis and its rewrite, ...) and the model, and every chunk of one entity carries that entity's one
message_id (the answer's is its provenance URI, as TrustGraph's)."""

from __future__ import annotations

from typing import Any

from trustgraph.schema import AgentRequest as TgAgentRequest
from trustgraph.schema import AgentResponse as TgAgentResponse

from tests.contract.test_trustgraph_contract import (
    ANSWER,
    GOOD_PLAN,
    tg_agent,  # noqa: F401 (a fixture)
)
from tests.scripted_llm import ScriptedLLM, is_planning, is_synthesis

QUESTION = "Which supplier has the most purchase orders?"
UNSUPPORTED = "Initech Holdings has the most purchase orders (999)."  # in no result: the answer is rewritten


class RepairingModel:
    """A plan the planner must repair, then a good one; a first answer the check rejects, then a good one. Every
    call answers with 10 prompt and 5 completion tokens (tests/scripted_llm.py)."""

    def __init__(self) -> None:
        self.plans = 0
        self.answers = 0

    def __call__(self, body: dict[str, Any]) -> tuple[int, str]:
        if is_synthesis(body):
            self.answers += 1
            return 200, UNSUPPORTED if self.answers == 1 else ANSWER
        if is_planning(body):
            self.plans += 1
            return 200, "no plan here" if self.plans == 1 else GOOD_PLAN
        return 200, "noted"


async def dialog(agent, **request: Any) -> list[TgAgentResponse]:  # type: ignore[no-untyped-def]
    seen = []
    async for response in agent._rr_client.request_stream(TgAgentRequest(question=QUESTION, **request), timeout=60):
        seen.append(response)
        if response.end_of_dialog:
            return seen
    return seen


async def test_the_final_message_carries_the_tokens_of_every_llm_call_of_the_run(make_stack, tg_agent) -> None:  # noqa: F811
    model = RepairingModel()
    with ScriptedLLM(model) as llm:
        stack = await make_stack(llm.base_url)
        agent = await tg_agent(stack)
        responses = await dialog(agent, streaming=True)
        calls = len(llm.requests)
    final = responses[-1]
    assert final.end_of_dialog and final.message_type == "answer" and final.error is None
    # The repaired plan and the rewritten answer were both asked for: more calls than the one that wrote it.
    assert model.plans >= 2 and model.answers == 2 and calls >= 4
    assert (final.in_token, final.out_token, final.model) == (10 * calls, 5 * calls, "scripted")
    assert all(r.in_token is None and r.out_token is None for r in responses[:-1])  # only on the end of dialog


async def test_a_non_streamed_answer_carries_the_run_s_tokens_too(make_stack, tg_agent) -> None:  # noqa: F811
    with ScriptedLLM(RepairingModel()) as llm:
        stack = await make_stack(llm.base_url)
        agent = await tg_agent(stack)
        responses = await dialog(agent)
        calls = len(llm.requests)
    final = responses[-1]
    assert final.end_of_dialog and final.content.startswith(ANSWER)
    assert (final.in_token, final.out_token, final.model) == (10 * calls, 5 * calls, "scripted")


async def test_the_chunks_of_one_entity_share_its_message_id_and_entities_differ(make_stack, tg_agent) -> None:  # noqa: F811
    with ScriptedLLM(RepairingModel()) as llm:
        stack = await make_stack(llm.base_url)
        agent = await tg_agent(stack)
        responses = await dialog(agent, streaming=True)
    answer = [r for r in responses if r.message_type == "answer"]
    chunks = [r for r in answer if not r.end_of_message]
    assert len(chunks) >= 2 and "".join(c.content for c in chunks).startswith(ANSWER)
    # The answer's chunks and its closing message: one entity, one id, and it is the answer's provenance URI.
    [answer_id] = {r.message_id for r in answer}
    explained = [r.explain_id for r in responses if r.message_type == "explain"]
    assert answer_id.endswith("/synthesis") and answer_id in explained
    # Every thought and observation is an entity of its own, none shares the answer's id.
    others = [r.message_id for r in responses if r.message_type in ("thought", "observation")]
    assert len(others) >= 4 and len(set(others)) == len(others) and answer_id not in others
    assert all(others)
