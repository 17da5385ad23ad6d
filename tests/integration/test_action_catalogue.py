"""'Which actions are available for a PurchaseOrder?' through Pulsar and Temporal: answered from the action
definitions whether the router calls it a direct answer or a change (the planner then finds nothing to
change in a question), with nothing looked up or changed. Only the model is scripted."""

from __future__ import annotations

import json
from typing import Any

import pytest

from embedded import demo_graph
from tests.integration.test_action_path import events, run
from tests.scripted_llm import ScriptedLLM, is_action_planning, is_routing

QUESTION = "Which actions are available for a PurchaseOrder?"


def model(route: str) -> Any:
    def respond(body: dict[str, Any]) -> tuple[int, str]:
        if is_routing(body):
            return 200, json.dumps({"intent": route})
        if is_action_planning(body):  # what a small model makes of a question: an action, no targets
            return 200, json.dumps(
                {
                    "entity_type": "PurchaseOrder",
                    "action_name": "submit",
                    "entity_ids": [],
                    "related_class": "",
                    "related_name": "",
                    "filters": [],
                    "parameters": {},
                }
            )
        raise AssertionError("a catalogue question needs no other model call")

    return respond


@pytest.mark.parametrize("route", ["ANSWER", "ACTION"])
async def test_a_question_about_actions_is_answered_from_their_definitions(
    make_stack, demo_copy, unique: str, route: str
) -> None:
    graph_name, g = demo_copy
    with ScriptedLLM(model(route)) as llm:
        stack = await make_stack(llm.base_url, graph_name=graph_name, ontology_path=str(demo_graph.ONTOLOGY_PATH))
        messages = await run(stack, QUESTION, f"catalogue-{route.lower()}-{unique}")
    answer = messages[-1]
    assert answer.message_type == "answer" and answer.end_of_dialog, [m.content for m in messages]
    assert answer.content.startswith(
        "Actions on PurchaseOrder: submit, withdraw, approve, makePayment, cancel, hold, release."
    )
    assert (
        "- makePayment: Pay an approved or delivered order from the operating account; refused when: "
        "order not approved; order already paid; insufficient funds; cannot be undone." in answer.content
    )
    assert "- hold: Put an approved, unpaid order on hold, with the reason; needs reason (string)" in answer.content
    assert answer.content.endswith("Confidence: 0.95 - read from the action definitions; nothing was changed")
    assert events(messages) == []  # no plan, no targets
    records = (await g.ro_query("MATCH (r:ActionRecord) RETURN count(r)")).result_set[0][0]
    assert records == 0
