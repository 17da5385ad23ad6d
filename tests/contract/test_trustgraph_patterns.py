"""The `pattern` a request asks for, as TrustGraph 2.11.1's agent reads it (orchestrator/service.py): `react` is
its ReAct loop, which this service does not run, so such a request goes to TrustGraph's own agent
(react_request_topic) and starts no run here; without that agent it gets an error saying what was asked and what
this service runs, never a plan-then-execute answer passed off as ReAct's. A request that names no pattern (the
agent's choice) and one for plan-then-execute are planned and answered here."""

from __future__ import annotations

import asyncio
import json
import uuid

from bridge.relay import Routing
from contracts.names import workflow_id_for
from tests.contract.test_trustgraph_contract import ANSWER, answers, dialog, react_stand_in
from tests.scripted_llm import ScriptedLLM

QUESTION = "Which supplier has the most purchase orders?"


async def test_a_request_for_react_goes_to_trustgraphs_agent_and_one_naming_no_pattern_is_answered_here(
    make_stack,
) -> None:
    react_topic = f"non-persistent://tg/request/agent-react:{uuid.uuid4().hex[:6]}:default"
    with ScriptedLLM(answers) as llm:
        stack = await make_stack(llm.base_url, routing=Routing(react_request_topic=react_topic))
        forwarded: list[str] = []
        react = asyncio.create_task(react_stand_in(stack, react_topic, forwarded))
        await asyncio.sleep(0.5)
        react_id, chosen_id, planned_id = (str(uuid.uuid4()) for _ in range(3))
        as_react = await dialog(stack, react_id, send=json.dumps({"question": QUESTION, "pattern": "react"}).encode())
        unnamed = await dialog(stack, chosen_id, send=json.dumps({"question": QUESTION}).encode())
        planned = await dialog(
            stack, planned_id, send=json.dumps({"question": QUESTION, "pattern": "plan-then-execute"}).encode()
        )
        react.cancel()
        runs = [w async for w in stack.client.list_workflows(f"WorkflowId = '{workflow_id_for(react_id)}'")]
    assert forwarded == [react_id] and as_react[-1]["content"] == "answered by react" and runs == []
    assert unnamed[-1]["content"].startswith(ANSWER) and planned[-1]["content"].startswith(ANSWER)


async def test_without_trustgraphs_agent_a_request_for_react_gets_an_error_saying_what_runs_here(make_stack) -> None:
    with ScriptedLLM(answers) as llm:
        stack = await make_stack(llm.base_url)
        request_id = str(uuid.uuid4())
        messages = await dialog(stack, request_id, send=json.dumps({"question": QUESTION, "pattern": "react"}).encode())
        runs = [w async for w in stack.client.list_workflows(f"WorkflowId = '{workflow_id_for(request_id)}'")]
        asked = len(llm.requests)
    said = messages[-1]["error"]["message"]
    assert messages[-1]["message_type"] == "error" and runs == [] and asked == 0
    assert "TrustGraph's react pattern" in said and "plans and executes" in said and "react_request_topic" in said
