"""Action targets are exactly what the request says, on the real demo graph: the planner's model is scripted
(through the real client) to make the plans a small model makes (the named supplier dropped, a supplier
nobody named, a negation), and the targets are compared with the set computed from the data."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest_asyncio

from actions.ontology import Ontology
from activities.action_planning import ActionPlanningActivities
from activities.actions import LEFT_OUT_CONFIDENCE, ActionTools
from activities.target_resolution import FILTERS_ONLY_CONFIDENCE
from backends.graph_store import GraphStore
from backends.llm import LLMClient
from contracts.action_path import ActionPlanningOutput, ResolveTargetsInput, TargetsOutput
from contracts.routing import RouteInput
from embedded import demo_graph
from service.prompts import PromptTemplates
from tests.scripted_llm import ScriptedLLM, is_action_planning

ONTOLOGY = Ontology.load(demo_graph.ONTOLOGY_PATH)
DATA = demo_graph.generate()
ORDERS = {o["po_number"]: o for o in DATA.nodes["PurchaseOrder"]}
SUPPLIERS = {s["supplier_id"]: s for s in DATA.nodes["Supplier"]}
SUPPLIER_OF = {
    e["from"]: e["to"] for e in DATA.edges[("PurchaseOrder", "po_number", "ISSUED_TO", "Supplier", "supplier_id")]
}
NORTHWIND = demo_graph.BATCH_SUPPLIER["name"]


def orders(where: Callable[[dict[str, Any], dict[str, Any]], bool]) -> set[str]:
    """The orders whose (order, supplier) the condition holds for: the gold set, from the data."""
    return {po for po, o in ORDERS.items() if where(o, SUPPLIERS[SUPPLIER_OF[po]])}


def planned_as(**intent: Any) -> Callable[[dict[str, Any]], tuple[int, str]]:
    plan = {
        "entity_type": "PurchaseOrder",
        "entity_ids": [],
        "related_class": "",
        "related_name": "",
        "filters": [],
        "parameters": {},
        **intent,
    }

    def respond(body: dict[str, Any]) -> tuple[int, str]:
        assert is_action_planning(body)
        return 200, json.dumps(plan)

    return respond


@pytest_asyncio.fixture
async def demo(falkordb_url: str, demo_copy: tuple[str, Any]) -> AsyncIterator[GraphStore]:
    store = GraphStore(falkordb_url, demo_copy[0])
    yield store
    await store.aclose()


async def plan_and_resolve(
    graph: GraphStore, request: str, **intent: Any
) -> tuple[ActionPlanningOutput, TargetsOutput]:
    with ScriptedLLM(planned_as(**intent)) as server:
        llm = LLMClient(server.base_url, "scripted")
        try:
            planner = ActionPlanningActivities(llm, ONTOLOGY, PromptTemplates.load(), graph)
            planned = await planner.plan_action(RouteInput(question=request))
        finally:
            await llm.aclose()
    assert planned.intent is not None, planned.error
    found = await ActionTools(graph, ONTOLOGY).resolve_action_targets(
        ResolveTargetsInput(intent=planned.intent, max_targets=1000, left_out=planned.left_out)
    )
    assert found.error is None, found.error
    return planned, found


async def test_the_named_supplier_the_plan_dropped_narrows_239_orders_to_its_20(demo: GraphStore) -> None:
    """The demo's own request, planned as the small model plans it: every approved order of every supplier."""
    planned, found = await plan_and_resolve(
        demo,
        f"Pay all approved purchase orders of {NORTHWIND}",
        action_name="makePayment",
        filters=[{"property": "status", "op": "eq", "value": "approved"}],
    )
    gold = orders(lambda o, s: s["name"] == NORTHWIND and o["status"] == "approved")
    assert {t.entity_id for t in found.targets} == gold and len(gold) == 20
    assert len(orders(lambda o, s: o["status"] == "approved")) == 239  # what the plan alone selected
    assert (planned.intent.related_class, planned.intent.related_name) == ("Supplier", NORTHWIND)
    assert f"Added Supplier '{NORTHWIND}' to the selection" in " ".join(planned.notes)
    assert planned.left_out == [] and found.confidence == 0.95


async def test_a_stated_status_and_a_country_of_the_suppliers_are_used(demo: GraphStore) -> None:
    """'Suppliers in Germany': Germany is a supplier's country and a warehouse's; the request says which."""
    planned, found = await plan_and_resolve(
        demo, "Cancel the draft purchase orders of suppliers in Germany", action_name="cancel"
    )
    gold = orders(lambda o, s: s["country"] == "Germany" and o["status"] == "draft")
    assert {t.entity_id for t in found.targets} == gold and gold
    assert planned.intent.related_class == "Supplier" and planned.left_out == []
    assert 'Added the condition status = "draft"' in " ".join(planned.notes)


async def test_an_excluded_supplier_leaves_its_orders_out(demo: GraphStore) -> None:
    """'Every approved order except those of Northwind Traders': all but that supplier's, however the small
    model planned it, and as broad a selection as filters alone, so a human confirms it."""
    for plan in ({}, {"related_class": "Supplier", "related_name": NORTHWIND}):
        planned, found = await plan_and_resolve(
            demo,
            f"Pay all approved purchase orders except those of {NORTHWIND}",
            action_name="makePayment",
            filters=[{"property": "status", "op": "eq", "value": "approved"}],
            **plan,
        )
        gold = orders(lambda o, s: s["name"] != NORTHWIND and o["status"] == "approved")
        assert {t.entity_id for t in found.targets} == gold and len(gold) == 219
        assert planned.intent.related_excluded and planned.left_out == []
        assert found.confidence == FILTERS_ONLY_CONFIDENCE
        assert found.reasoning.startswith(f"219 PurchaseOrder of no Supplier {NORTHWIND} matching status")


async def test_what_cannot_be_added_holds_the_targets_far_below_approval(demo: GraphStore) -> None:
    invented, found = await plan_and_resolve(
        demo,
        "Pay all approved purchase orders",
        action_name="makePayment",
        related_class="Supplier",
        related_name="Acme Industrial",
        filters=[{"property": "status", "op": "eq", "value": "approved"}],
    )
    assert invented.left_out == ["the plan selects through Supplier 'Acme Industrial', which the request does not name"]
    assert found.confidence == LEFT_OUT_CONFIDENCE

    amount, found = await plan_and_resolve(
        demo,
        f"Pay the approved purchase orders of {NORTHWIND} over $5,000",
        action_name="makePayment",
        related_class="Supplier",
        related_name=NORTHWIND,
        filters=[{"property": "status", "op": "eq", "value": "approved"}],
    )
    assert amount.left_out == ["the number 5000"] and found.confidence == LEFT_OUT_CONFIDENCE

    two = f"Pay all approved purchase orders except those of {NORTHWIND} and Acme Industrial"
    negated, found = await plan_and_resolve(
        demo, two, action_name="makePayment", filters=[{"property": "status", "op": "eq", "value": "approved"}]
    )
    assert not negated.intent.related_excluded and len(found.targets) == 239
    assert negated.left_out[0] == "the exclusion the request states ('except'): the selection excludes nothing"
    assert found.confidence == LEFT_OUT_CONFIDENCE


async def test_the_approval_card_opens_with_what_was_left_out(make_stack, demo_copy, unique: str) -> None:
    """Through Pulsar and Temporal: the plan event, the approval request and its first line say what the
    selection ignores, and skipping changes nothing."""
    from cli.override_choice import describe
    from tests.integration.test_action_parameters_path import PlanningModel, intent
    from tests.integration.test_action_path import approve_when_asked, events, run

    graph_name, g = demo_copy
    model = PlanningModel(
        intent(
            "makePayment",
            related_class="Supplier",
            related_name=NORTHWIND,
            filters=[{"property": "status", "op": "eq", "value": "approved"}],
        )
    )
    with ScriptedLLM(model) as llm:
        stack = await make_stack(llm.base_url, graph_name=graph_name, ontology_path=str(demo_graph.ONTOLOGY_PATH))
        request_id = f"amount-{unique}"
        asking = asyncio.create_task(
            run(stack, f"Pay the approved purchase orders of {NORTHWIND} over $5,000", request_id)
        )
        pending = await approve_when_asked(stack, f"agent-{request_id}", asking, decision="skip")
        messages = await asyncio.wait_for(asking, 120)
    request = pending.pending_override
    assert request is not None and request.score == LEFT_OUT_CONFIDENCE
    left_out = "the number 5000"
    assert request.arguments["left_out"] == left_out
    assert describe(request)[0].startswith(f"LEFT OUT of the selection: {left_out}.")
    asked = next(m.content for m in messages if "Approval needed before makePayment" in m.content)
    assert asked.startswith(f"Left out of the selection: {left_out}.")
    plan = events(messages)[0]["plan"]
    assert plan["left_out"] == [left_out] and plan["target_count"] == 20
    paid = (await g.ro_query("MATCH (o:PurchaseOrder) WHERE o.paid = true RETURN count(o)")).result_set[0][0]
    assert paid == sum(o["paid"] for o in ORDERS.values())  # skipped: nothing changed


async def test_a_related_classs_lower_case_category_value_narrows_when_the_request_speaks_of_the_class(
    demo: GraphStore,
) -> None:
    """'Invoices of payments whose method is X': X is a payment's method, written in lower case."""
    invoices = {i["invoice_number"]: i for i in DATA.nodes["Invoice"]}
    settles = DATA.edges[("Payment", "payment_id", "SETTLES", "Invoice", "invoice_number")]
    methods = {p["payment_id"]: p["method"] for p in DATA.nodes["Payment"]}
    method = sorted(set(methods.values()))[0]
    gold = {e["to"] for e in settles if methods[e["from"]] == method and invoices[e["to"]]["status"] == "paid"}
    planned, found = await plan_and_resolve(
        demo,
        f"Reschedule the paid invoices of payments whose method is {method}, due date: 2031-03-31",
        entity_type="Invoice",
        action_name="reschedule",
        parameters={"due_date": "2031-03-31"},
        filters=[{"property": "status", "op": "eq", "value": "paid"}],
    )
    assert {t.entity_id for t in found.targets} == gold and gold
    assert planned.intent.related_filters[0].value == method and planned.left_out == []


async def test_a_warehouse_named_after_its_city_is_one_name(demo: GraphStore) -> None:
    """'Hamburg' inside 'Hamburg Distribution Center' is part of the name, not a city of its own to narrow by."""
    warehouses = {w["warehouse_id"]: w for w in DATA.nodes["Warehouse"]}
    name = next(w["name"] for w in warehouses.values() if w["city"] in w["name"])
    delivered_to = {
        e["from"]: warehouses[e["to"]]["name"]
        for e in DATA.edges[("PurchaseOrder", "po_number", "DELIVER_TO", "Warehouse", "warehouse_id")]
    }
    planned, found = await plan_and_resolve(
        demo,
        f"Approve every submitted purchase order that is not of warehouse {name}",
        action_name="approve",
        filters=[{"property": "status", "op": "eq", "value": "submitted"}],
    )
    gold = {po for po, o in ORDERS.items() if o["status"] == "submitted" and delivered_to.get(po) != name}
    assert {t.entity_id for t in found.targets} == gold and planned.left_out == []
    assert planned.intent.related_excluded and planned.intent.related_class == "Warehouse"
