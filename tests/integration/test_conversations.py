"""Conversations through Pulsar: each turn is its own run, and sees the turns before it (the service's
memory for a conversation id, or the request's own TrustGraph `history`). Follow-ups that only make sense
with the previous turn ("which of those failed, and why?", "pay them") are answered or executed right.
Only the model is scripted; it reads what the agent put in its prompts, so the memory must carry it."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from temporalio.client import WorkflowExecutionStatus

from cli.ask import ask
from contracts.conversation import ConversationMemory, conversation_workflow_id
from contracts.wire import AgentRequest, AgentResponse, AgentStep
from embedded import demo_graph
from service.run_recovery import RunLookup
from tests.integration.test_action_path import ALREADY_PAID, ORDERS, SUPPLIER, TOO_DEAR, approve_when_asked, events
from tests.scripted_llm import (
    ScriptedLLM,
    is_action_planning,
    is_conversation_answer,
    is_follow_up,
    is_planning,
    is_routing,
    is_synthesis,
    question_of,
)

UNPAID = (
    "MATCH (o:PurchaseOrder)-[:ISSUED_TO]->(s:Supplier {name: 'Northwind Traders'}) WHERE o.paid = false "
    "RETURN o.po_number ORDER BY o.po_number"
)
PO = re.compile(r"PO-\d+")


class ConversationalModel:
    """A stand-in model that does what the prompts ask, with nothing but the prompts to go on."""

    def __call__(self, body: dict[str, Any]) -> tuple[int, str]:
        prompt = question_of(body)
        if is_follow_up(body):
            conversation, latest = prompt.split("\n\nLatest message: ", 1)
            return 200, json.dumps(self.read(conversation, latest.strip()))
        if is_conversation_answer(body):
            failed = re.findall(r"failed: (PO-\d+) \(([^)]*)\)", prompt)
            return 200, "Not paid: " + "; ".join(f"{po} ({why})" for po, why in failed) + "."
        if is_routing(body):
            return 200, json.dumps({"intent": "ACTION" if "question: pay" in prompt.lower() else "QUERY"})
        if is_action_planning(body):
            ids = PO.findall(prompt.split("Request:", 1)[-1]) if "Request:" in prompt else PO.findall(prompt)
            return 200, json.dumps(
                {
                    "entity_type": "PurchaseOrder",
                    "action_name": "makePayment",
                    "entity_ids": ids,
                    "related_class": "" if ids else "Supplier",
                    "related_name": "" if ids else SUPPLIER,
                }
            )
        if is_planning(body):
            return 200, json.dumps(
                {"steps": [{"id": "s1", "function": "GraphQuery", "dependencies": [], "arguments": {"query": UNPAID}}]}
            )
        if is_synthesis(body):
            return 200, "Unpaid: " + ", ".join(dict.fromkeys(PO.findall(prompt.split("[s1 GraphQuery", 1)[-1])))
        return 200, "ok"

    @staticmethod
    def read(conversation: str, latest: str) -> dict[str, Any]:
        if latest.lower().startswith("which of those") and "failed: " in conversation:
            return {
                "question": "Which of the orders paid in the previous turn were not paid, and why?",
                "from_conversation": True,
            }
        if latest.lower() == "pay them":
            used = conversation.rsplit("Results the agent used:", 1)[-1]
            return {
                "question": "Pay purchase orders " + ", ".join(dict.fromkeys(PO.findall(used))),
                "from_conversation": False,
            }
        if latest.lower().startswith("which of them") and "Northwind Traders" in conversation:
            return {"question": "Which orders of Northwind Traders are unpaid?", "from_conversation": False}
        return {"question": latest, "from_conversation": False}


async def turn(stack, question: str, request_id: str, **request: Any) -> list[AgentResponse]:  # type: ignore[no-untyped-def]
    return [
        m
        async for m in ask(
            stack.config.pulsar_url,
            AgentRequest(question=question, **request),
            request_topic=stack.request_topic,
            response_topic=stack.config.response_topic,
            timeout_s=300,
            request_id=request_id,
            runs=RunLookup(stack.client),
        )
    ]


async def memory_of(stack, conversation_id: str) -> ConversationMemory:  # type: ignore[no-untyped-def]
    handle = stack.client.get_workflow_handle(conversation_workflow_id(conversation_id))
    return await handle.query("memory", result_type=ConversationMemory)


async def test_which_of_those_failed_and_why_is_answered_from_the_conversation(
    make_stack, demo_copy, unique: str
) -> None:
    """Seed 002's conversation: pay 20 orders, approve, 18 paid and 2 failed; then "which of those were not
    paid, and why?" is answered from what the batch reported, with no new graph query."""
    graph_name, _ = demo_copy
    conversation = f"conv-{unique}"
    with ScriptedLLM(ConversationalModel()) as llm:
        stack = await make_stack(llm.base_url, graph_name=graph_name, ontology_path=str(demo_graph.ONTOLOGY_PATH))
        paying = asyncio.create_task(
            turn(stack, f"Pay all orders of supplier {SUPPLIER}", f"pay-{unique}", conversation_id=conversation)
        )
        await approve_when_asked(stack, f"agent-pay-{unique}", paying)
        paid = await asyncio.wait_for(paying, 120)
        assert "18 succeeded, 2 failed" in paid[-1].content
        asked_before = len(llm.requests)

        followup = await turn(
            stack, "Which of those orders were not paid, and why?", f"why-{unique}", conversation_id=conversation
        )
        second_turn = llm.requests[asked_before:]

    answer = followup[-1]
    assert answer.message_type == "answer" and answer.end_of_dialog
    assert f"{TOO_DEAR} (Insufficient funds)" in answer.content
    assert f"{ALREADY_PAID} (Order already paid)" in answer.content
    assert "Confidence: 0.95" in answer.content  # as sure as the outcomes it restates, every one found in them
    assert not any(is_planning(body) or is_routing(body) for body in second_turn)  # no graph, no new plan
    assert not events(followup)
    memory = await memory_of(stack, conversation)
    assert memory.turn_count == 2
    assert memory.turns[0].action is not None and memory.turns[0].action.failed == 2
    assert memory.turns[1].standalone_question.startswith("Which of the orders paid in the previous turn")


async def test_pay_them_acts_on_the_orders_the_previous_answer_listed(make_stack, demo_copy, unique: str) -> None:
    graph_name, g = demo_copy
    conversation = f"conv-{unique}"
    unpaid = sorted(o["po_number"] for o in ORDERS if o["po_number"] != ALREADY_PAID)
    with ScriptedLLM(ConversationalModel()) as llm:
        stack = await make_stack(llm.base_url, graph_name=graph_name, ontology_path=str(demo_graph.ONTOLOGY_PATH))
        listed = await turn(
            stack, f"Which orders of {SUPPLIER} are unpaid?", f"list-{unique}", conversation_id=conversation
        )
        assert all(po in listed[-1].content for po in unpaid)

        paying = asyncio.create_task(turn(stack, "pay them", f"them-{unique}", conversation_id=conversation))
        await approve_when_asked(stack, f"agent-them-{unique}", paying, decision="skip")
        messages = await asyncio.wait_for(paying, 120)

    assert any(
        m.content == "Read in the conversation's context: Pay purchase orders " + ", ".join(unpaid) for m in messages
    )
    plan = events(messages)[0]["plan"]
    assert sorted(t["entity_id"] for t in plan["targets"]) == unpaid
    assert "was not executed (skipped at approval)" in messages[-1].content
    assert (await g.ro_query("MATCH (r:ActionRecord) RETURN count(r)")).result_set[0][0] == 0
    memory = await memory_of(stack, conversation)
    assert memory.turns[-1].action is not None and not memory.turns[-1].action.executed


async def test_a_trustgraph_client_s_own_history_is_honoured(make_stack, unique: str) -> None:
    """A client that sends `history` (TrustGraph's shape) and no conversation id: the follow-up is read with
    that history, and the service keeps no memory of its own."""
    history = [
        AgentStep(
            thought="find the supplier",
            action="knowledge-query",
            arguments={"question": "who delivers bearings?"},
            observation=f"{SUPPLIER} delivers bearings",
        )
    ]
    with ScriptedLLM(ConversationalModel()) as llm:
        stack = await make_stack(llm.base_url)
        messages = await turn(stack, "Which of them are unpaid?", f"hist-{unique}", history=history)
        follow_ups = [b for b in llm.requests if is_follow_up(b)]
        planned = [question_of(b) for b in llm.requests if is_planning(b)]
    assert len(follow_ups) == 1 and f"{SUPPLIER} delivers bearings" in question_of(follow_ups[0])
    assert any("Which orders of Northwind Traders are unpaid?" in p for p in planned)
    assert messages[-1].message_type == "answer"


async def test_a_new_conversation_asks_no_follow_up_question_and_expired_memory_starts_afresh(
    make_stack, unique: str
) -> None:
    conversation = f"conv-{unique}"
    with ScriptedLLM(ConversationalModel()) as llm:
        stack = await make_stack(llm.base_url)
        await turn(stack, f"Which orders of {SUPPLIER} are unpaid?", f"first-{unique}", conversation_id=conversation)
        assert not any(is_follow_up(b) for b in llm.requests)  # nothing before it to read it against
        handle = stack.client.get_workflow_handle(conversation_workflow_id(conversation))
        await handle.terminate("expired")  # what the idle TTL does, without waiting a day
        await turn(stack, f"Which orders of {SUPPLIER} are unpaid?", f"again-{unique}", conversation_id=conversation)
        assert not any(is_follow_up(b) for b in llm.requests)
    described = await stack.client.get_workflow_handle(conversation_workflow_id(conversation)).describe()
    assert described.status == WorkflowExecutionStatus.RUNNING
    assert (await memory_of(stack, conversation)).turn_count == 1


async def test_the_cli_continues_a_conversation_it_started(make_stack, unique: str, capsys) -> None:  # type: ignore[no-untyped-def]
    """`tg-confidence ask --conversation new` prints the id to continue with; the next `ask` with it is read
    against the first turn ("which of them" means the supplier's orders)."""
    from cli.ask_command import conversation_of, run_ask

    with ScriptedLLM(ConversationalModel()) as llm:
        stack = await make_stack(llm.base_url)
        common = {"request_topic": stack.request_topic, "response_topic": stack.config.response_topic, "timeout_s": 300}
        first = await run_ask(
            stack.config.pulsar_url,
            f"Which orders of {SUPPLIER} are due?",
            conversation_id=conversation_of("new"),
            **common,
        )
        printed = capsys.readouterr().out
        continued = re.search(r"tg-confidence ask --conversation (\S+) ", printed)
        assert first == 0 and continued is not None
        second = await run_ask(
            stack.config.pulsar_url,
            "Which of them are unpaid?",
            conversation_id=conversation_of(continued.group(1)),
            json_output=True,
            **common,
        )
        planned = [question_of(b) for b in llm.requests if is_planning(b)]
    assert second == 0
    # --json: each response one line in TrustGraph's wire format (the in-process services log here too)
    responses = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    assert responses and responses[-1]["end_of_dialog"] is True and responses[-1]["answer"]
    assert any("Which orders of Northwind Traders are unpaid?" in p for p in planned)
    assert (await memory_of(stack, continued.group(1))).turn_count == 2
