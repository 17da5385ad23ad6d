"""Parameters and filters on the action path end to end through Pulsar, Temporal and FalkorDB: planned
from the request, shown in the action plan event and the approval request, passed to every execution;
problems going back to the model once, and otherwise ending in a clear error with nothing changed.
Only the model is scripted."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest

from cli.render import render_action_event
from embedded import demo_graph
from tests.integration.test_action_path import approve_when_asked, events, run
from tests.integration.test_conversations import memory_of, turn
from tests.scripted_llm import ScriptedLLM, is_action_planning, is_follow_up, is_routing, question_of

DATA = demo_graph.generate()
ORDERS = DATA.nodes["PurchaseOrder"]
SUPPLIER = demo_graph.BATCH_SUPPLIER
OF_SUPPLIER = {
    e["from"]
    for e in DATA.edges[("PurchaseOrder", "po_number", "ISSUED_TO", "Supplier", "supplier_id")]
    if e["to"] == SUPPLIER["supplier_id"]
}
OPEN_INVOICES = [i for i in DATA.nodes["Invoice"] if i["status"] == "open"][:2]


class PlanningModel:
    """Routes everything to ACTION; answers the action planner with the scripted intents, one per call
    (the last one repeated)."""

    def __init__(self, *intents: dict[str, Any]) -> None:
        self.intents = list(intents)
        self.planning: list[dict[str, Any]] = []

    def __call__(self, body: dict[str, Any]) -> tuple[int, str]:
        if is_routing(body):
            return 200, json.dumps({"intent": "ACTION"})
        if is_action_planning(body):
            self.planning.append(body)
            return 200, json.dumps(self.intents[min(len(self.planning), len(self.intents)) - 1])
        return 200, "ok"


def intent(action: str, entity_type: str = "PurchaseOrder", **fields: Any) -> dict[str, Any]:
    return {
        "entity_type": entity_type,
        "action_name": action,
        "entity_ids": [],
        "related_class": "",
        "related_name": "",
        "filters": [],
        "parameters": {},
        **fields,
    }


async def test_hold_the_unpaid_orders_of_a_supplier_over_an_amount_with_a_reason(
    make_stack, demo_copy, unique: str
) -> None:
    graph_name, g = demo_copy
    totals = sorted(o["total_amount"] for o in ORDERS if o["po_number"] in OF_SUPPLIER)
    threshold = int(totals[len(totals) // 2])  # as a person writes it; the filter's value is a float
    expected = {
        o["po_number"]
        for o in ORDERS
        if o["po_number"] in OF_SUPPLIER
        and o["status"] == "approved"
        and not o["paid"]
        and o["total_amount"] > threshold
    }
    reason = "supplier dispute"
    model = PlanningModel(
        intent(
            "hold",
            related_class="Supplier",
            related_name=SUPPLIER["name"],
            parameters={"reason": reason},
            filters=[
                {"property": "paid", "op": "eq", "value": False},
                {"property": "total_amount", "op": "gt", "value": threshold},
            ],
        )
    )
    with ScriptedLLM(model) as llm:
        stack = await make_stack(llm.base_url, graph_name=graph_name, ontology_path=str(demo_graph.ONTOLOGY_PATH))
        request_id = f"hold-{unique}"
        question = f"Put the unpaid orders of {SUPPLIER['name']} over {threshold} on hold: {reason}"
        asking = asyncio.create_task(run(stack, question, request_id))
        pending = await approve_when_asked(stack, f"agent-{request_id}", asking)  # more than 5 targets
        messages = await asyncio.wait_for(asking, 120)

    # The request's values reached the planner's prompt through the ontology's declared types.
    system = model.planning[0]["messages"][0]["content"]
    assert "hold(reason: string)" in system and "total_amount: float" in system
    # The approval request names what will be written and how the targets were chosen.
    request = pending.pending_override
    assert request is not None
    assert request.arguments["parameters"] == f'reason="{reason}"'
    assert request.arguments["filters"] == f"paid = false and total_amount > {float(threshold)}"
    assert any(
        m.content.startswith(
            f'Approval needed before hold with reason="{reason}" (targets of Supplier '
            f"'{SUPPLIER['name']}' where paid = false"
        )
        for m in messages
    )
    # The action plan event carries both, with the values as their declared types.
    plan = events(messages)[0]
    assert plan["type"] == "action_plan"
    assert plan["plan"]["parameters"] == {"reason": reason}
    assert plan["plan"]["filters"] == [
        {"property": "paid", "op": "eq", "value": False},
        {"property": "total_amount", "op": "gt", "value": float(threshold)},
    ]
    assert {t["entity_id"] for t in plan["plan"]["targets"]} == expected
    line = render_action_event(json.dumps(plan))
    assert line is not None and line.startswith(
        f'[action plan] hold with reason="{reason}" on {len(expected)} '
        f"PurchaseOrder of Supplier '{SUPPLIER['name']}' where paid = false "
        "and total_amount > "
    )
    assert (
        f"hold on {len(expected)} PurchaseOrder entities: {len(expected)} succeeded, 0 failed." in messages[-1].content
    )

    # In the graph: exactly the matching orders hold the reason; every record keeps the parameters.
    held = (
        await g.ro_query(
            "MATCH (o:PurchaseOrder) WHERE o.hold_reason = $r AND o.status = 'on_hold' RETURN o.po_number",
            {"r": reason},
        )
    ).result_set
    assert {r[0] for r in held} == expected
    records = (await g.ro_query("MATCH (r:ActionRecord) RETURN r.entity_id, r.parameters")).result_set
    assert {r[0] for r in records} == expected
    assert all(json.loads(r[1]) == {"reason": reason} for r in records)


async def test_a_problem_goes_back_to_the_model_once_and_the_corrected_plan_runs(
    make_stack, demo_copy, unique: str
) -> None:
    graph_name, g = demo_copy
    ids = [i["invoice_number"] for i in OPEN_INVOICES]
    bad = intent(
        "reschedule",
        "Invoice",
        entity_ids=ids,
        parameters={"due_date": "end of next month"},
        filters=[{"property": "colour", "op": "eq", "value": "red"}],
    )
    good = intent("reschedule", "Invoice", entity_ids=ids, parameters={"due_date": "2031-03-31"})
    model = PlanningModel(bad, good)
    with ScriptedLLM(model) as llm:
        stack = await make_stack(llm.base_url, graph_name=graph_name, ontology_path=str(demo_graph.ONTOLOGY_PATH))
        messages = await run(
            stack, f"Move the due date of {' and '.join(ids)} to the end of March 2031", f"move-{unique}"
        )
    assert len(model.planning) == 2
    repair = model.planning[1]["messages"][-1]["content"]
    assert "parameter due_date of reschedule: 'end of next month' is not a date (YYYY-MM-DD)" in repair
    assert "Invoice has no property 'colour' to filter on" in repair
    assert events(messages)[0]["plan"]["parameters"] == {"due_date": "2031-03-31"}
    assert "reschedule on 2 Invoice entities: 2 succeeded, 0 failed." in messages[-1].content
    due = (
        await g.ro_query("MATCH (i:Invoice) WHERE i.invoice_number IN $ids RETURN DISTINCT i.due_date", {"ids": ids})
    ).result_set
    assert due == [["2031-03-31"]]


@pytest.mark.parametrize(
    ("wrong", "words"),
    [
        ({"parameters": {"due_date": "31/03/2031"}}, "parameter due_date of reschedule: '31/03/2031' is not a date"),
        ({"parameters": {"due_date": "2031-03-31", "note": "late"}}, "reschedule has no parameter 'note'"),
        ({"parameters": {}}, "reschedule needs the parameter due_date (a date (YYYY-MM-DD)), which the request must"),
        (
            {
                "parameters": {"due_date": "2031-03-31"},
                "filters": [{"property": "amount ` OR 1=1", "op": "gt", "value": 1}],
            },
            "Invoice has no property 'amount ` OR 1=1' to filter on",
        ),
    ],
)
async def test_a_plan_still_wrong_after_the_repair_ends_in_a_clear_error_and_changes_nothing(
    make_stack, demo_copy, unique: str, wrong: dict[str, Any], words: str
) -> None:
    graph_name, g = demo_copy
    ids = [i["invoice_number"] for i in OPEN_INVOICES]
    model = PlanningModel(intent("reschedule", "Invoice", entity_ids=ids, **wrong))
    with ScriptedLLM(model) as llm:
        stack = await make_stack(llm.base_url, graph_name=graph_name, ontology_path=str(demo_graph.ONTOLOGY_PATH))
        messages = await run(stack, f"Reschedule {ids[0]}", f"bad-{unique}")
    assert len(model.planning) == 2  # one repair round
    assert messages[-1].message_type == "error"
    assert messages[-1].content.startswith("Could not tell what to change: ") and words in messages[-1].content
    assert not events(messages)  # no plan, no dry run, nothing executed
    assert (await g.ro_query("MATCH (r:ActionRecord) RETURN count(r)")).result_set[0][0] == 0
    due = (
        await g.ro_query(
            "MATCH (i:Invoice) WHERE i.invoice_number IN $ids RETURN i.due_date ORDER BY i.invoice_number", {"ids": ids}
        )
    ).result_set
    assert [r[0] for r in due] == [i["due_date"] for i in sorted(OPEN_INVOICES, key=lambda i: i["invoice_number"])]


class HoldingModel:
    """A stand-in that does what the prompts ask with nothing but the prompts: plans `hold` for the ids and
    the reason the request states, and reads "the same reason" from what the conversation says was done."""

    def __call__(self, body: dict[str, Any]) -> tuple[int, str]:
        prompt = question_of(body)
        if is_follow_up(body):
            conversation, latest = prompt.split("\n\nLatest message: ", 1)
            said = re.findall(r'hold with reason="([^"]*)"', conversation)
            if "the same reason" in latest and said:
                latest = latest.replace("for the same reason", f"reason: {said[-1]}")
            return 200, json.dumps({"question": latest.strip(), "from_conversation": False})
        if is_routing(body):
            return 200, json.dumps({"intent": "ACTION"})
        if is_action_planning(body):
            request = prompt.split("Request:", 1)[-1]
            reason = request.split("reason: ", 1)[1].strip() if "reason: " in request else ""
            return 200, json.dumps(
                intent(
                    "hold", entity_ids=re.findall(r"PO-\d+", request), parameters={"reason": reason} if reason else {}
                )
            )
        return 200, "ok"


async def test_a_parameter_from_an_earlier_turn_is_read_from_the_conversation(
    make_stack, demo_copy, unique: str
) -> None:
    """'Hold PO-A, reason: R', then 'Hold PO-B for the same reason': the second request reaches the planner
    standing on its own, because the conversation remembers the parameters the first action was given."""
    graph_name, g = demo_copy
    first, second = [o["po_number"] for o in ORDERS if o["status"] == "approved" and not o["paid"]][:2]
    reason = "quality audit"
    conversation = f"hold-{unique}"
    with ScriptedLLM(HoldingModel()) as llm:
        stack = await make_stack(llm.base_url, graph_name=graph_name, ontology_path=str(demo_graph.ONTOLOGY_PATH))
        one = await turn(stack, f"Hold {first}, reason: {reason}", f"one-{unique}", conversation_id=conversation)
        two = await turn(stack, f"Hold {second} for the same reason", f"two-{unique}", conversation_id=conversation)
    assert "hold on 1 PurchaseOrder entity: 1 succeeded" in one[-1].content
    assert "hold on 1 PurchaseOrder entity: 1 succeeded" in two[-1].content
    assert events(two)[0]["plan"]["parameters"] == {"reason": reason}
    held = (
        await g.ro_query(
            "MATCH (o:PurchaseOrder) WHERE o.po_number IN $ids RETURN o.hold_reason", {"ids": [first, second]}
        )
    ).result_set
    assert [r[0] for r in held] == [reason, reason]
    memory = await memory_of(stack, conversation)
    assert memory.turns[0].action is not None and memory.turns[0].action.parameters == {"reason": reason}


async def test_a_condition_the_request_does_not_state_is_left_out_and_said(make_stack, demo_copy, unique: str) -> None:
    """The local model adds conditions nobody asked for ('submit these orders' planned with an amount
    filter that would leave them all out): the filter is dropped, the caller told, the request done."""
    graph_name, g = demo_copy
    drafts = [o["po_number"] for o in ORDERS if o["status"] == "draft"][:3]
    model = PlanningModel(
        intent("submit", entity_ids=drafts, filters=[{"property": "total_amount", "op": "gt", "value": 999_999}])
    )
    with ScriptedLLM(model) as llm:
        stack = await make_stack(llm.base_url, graph_name=graph_name, ontology_path=str(demo_graph.ONTOLOGY_PATH))
        messages = await run(stack, f"Submit orders {', '.join(drafts)}", f"submit-{unique}")
    assert any(
        m.content == "Left out the condition total_amount > 999999.0: the request does not state it." for m in messages
    )
    assert events(messages)[0]["plan"]["filters"] == []
    assert "submit on 3 PurchaseOrder entities: 3 succeeded, 0 failed." in messages[-1].content
    statuses = (
        await g.ro_query("MATCH (o:PurchaseOrder) WHERE o.po_number IN $ids RETURN DISTINCT o.status", {"ids": drafts})
    ).result_set
    assert statuses == [["submitted"]]
