"""Action parameters and property filters on real FalkorDB: a parameter written by the atomic execution and
kept in the action record, undo restoring what was there before, a mistyped parameter changing nothing,
and targets chosen by filters (alone, with a related entity, with ids) being exactly the entities the
data says match."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest_asyncio

from actions.ontology import Ontology
from activities.actions import ActionTools
from activities.target_resolution import FILTERS_ONLY_CONFIDENCE
from backends.action_history import ActionHistory
from backends.graph_store import GraphStore
from contracts.action_path import ActionIntent, PropertyFilter, ResolveTargetsInput
from contracts.plan import ExecutionStep
from contracts.query_path import StepInput
from embedded import demo_graph
from tests.integration.test_action_history import cli

ONTOLOGY = Ontology.load(demo_graph.ONTOLOGY_PATH)
DATA = demo_graph.generate()
ORDERS = DATA.nodes["PurchaseOrder"]
SUPPLIER = demo_graph.BATCH_SUPPLIER
OF_SUPPLIER = {
    e["from"]
    for e in DATA.edges[("PurchaseOrder", "po_number", "ISSUED_TO", "Supplier", "supplier_id")]
    if e["to"] == SUPPLIER["supplier_id"]
}


def execute(action: str, entity_type: str, entity_id: str, step: str = "s1", **parameters: Any) -> StepInput:
    arguments = {"entity_type": entity_type, "action_name": action, "entity_id": entity_id}
    if parameters:
        arguments["parameters"] = json.dumps(parameters)
    return StepInput(
        question=f"{action} {entity_id}",
        workflow_id="run-p",
        step=ExecutionStep(id=step, function="execute_action", arguments=arguments),
    )


@pytest_asyncio.fixture
async def tools(falkordb_url: str, demo_copy: tuple[str, Any]) -> AsyncIterator[tuple[ActionTools, Any]]:
    name, g = demo_copy
    store = GraphStore(falkordb_url, name)
    yield ActionTools(store, ONTOLOGY), g
    await store.aclose()


async def order_props(g: Any, po: str) -> dict[str, Any]:
    rows = (await g.ro_query("MATCH (o:PurchaseOrder {po_number: $po}) RETURN properties(o)", {"po": po})).result_set
    return rows[0][0]


async def record_count(g: Any) -> int:
    return (await g.ro_query("MATCH (r:ActionRecord) RETURN count(r)")).result_set[0][0]


async def test_a_parameter_is_written_recorded_and_undone(tools) -> None:
    actions, g = tools
    target = next(o for o in ORDERS if o["status"] == "approved" and not o["paid"])["po_number"]
    reason = "supplier dispute over the invoice's quantities"
    held = await actions.execute_action(execute("hold", "PurchaseOrder", target, reason=reason))
    assert held.success, held.output
    assert json.loads(held.output)["changes"] == {
        "status": {"before": "approved", "after": "on_hold"},
        "hold_reason": {"before": None, "after": reason},
    }
    props = await order_props(g, target)
    assert (props["status"], props["hold_reason"]) == ("on_hold", reason)

    history = ActionHistory(actions)
    [entry] = await history.list(run_id="run-p")
    assert entry.parameters == {"reason": reason} and entry.changes["hold_reason"]["after"] == reason
    listed = await cli(actions.graph.url, actions.graph.graph_name, "list", "--run", "run-p")
    assert f'hold with reason="{reason}" PurchaseOrder {target}' in listed.stdout, listed.stderr
    undone = await history.undo(entry, "ops")
    assert undone.success, undone.detail
    props = await order_props(g, target)
    assert props["status"] == "approved" and "hold_reason" not in props  # as before the hold


async def test_undo_of_a_reschedule_restores_the_earlier_date(tools) -> None:
    actions, g = tools
    invoice = next(i for i in DATA.nodes["Invoice"] if i["status"] == "open")
    number, old_due = invoice["invoice_number"], invoice["due_date"]
    moved = await actions.execute_action(execute("reschedule", "Invoice", number, due_date="2031-02-28"))
    assert json.loads(moved.output)["changes"] == {"due_date": {"before": old_due, "after": "2031-02-28"}}
    history = ActionHistory(actions)
    [entry] = await history.list(run_id="run-p")
    outcome = await history.undo(entry, "ops")  # its inverse is itself, given the recorded earlier date
    assert outcome.success, outcome.detail
    due = (await g.ro_query("MATCH (i:Invoice {invoice_number: $n}) RETURN i.due_date", {"n": number})).result_set
    assert due == [[old_due]]
    undo_entry = next(e for e in await history.list(run_id="run-p") if e.undoes)
    assert undo_entry.parameters == {"due_date": old_due}


async def test_a_mistyped_or_missing_parameter_changes_nothing(tools) -> None:
    actions, g = tools
    invoice = next(i for i in DATA.nodes["Invoice"] if i["status"] == "open")["invoice_number"]
    order = next(o for o in ORDERS if o["status"] == "approved" and not o["paid"])["po_number"]
    bad_date = await actions.execute_action(execute("reschedule", "Invoice", invoice, due_date="next friday"))
    missing = await actions.execute_action(execute("hold", "PurchaseOrder", order, step="s2"))
    unknown = await actions.execute_action(execute("hold", "PurchaseOrder", order, step="s3", reason="x", colour="red"))
    assert not bad_date.success and "'next friday' is not a date (YYYY-MM-DD)" in bad_date.output
    assert not missing.success and "hold needs the parameter reason" in missing.output
    assert not unknown.success and "hold has no parameter 'colour'" in unknown.output
    assert await record_count(g) == 0
    assert (await order_props(g, order))["status"] == "approved"


async def resolve(actions: ActionTools, limit: int = 1000, **intent: Any) -> Any:
    return await actions.resolve_action_targets(
        ResolveTargetsInput(intent=ActionIntent(entity_type="PurchaseOrder", **intent), max_targets=limit)
    )


async def test_filters_with_a_related_entity_select_exactly_the_matching_orders(tools) -> None:
    """'the unpaid orders of Northwind Traders over <median>': the expected set comes from the data."""
    actions, _ = tools
    totals = sorted(o["total_amount"] for o in ORDERS if o["po_number"] in OF_SUPPLIER)
    threshold = totals[len(totals) // 2]
    expected = {
        o["po_number"]
        for o in ORDERS
        if o["po_number"] in OF_SUPPLIER
        and o["status"] == "approved"
        and not o["paid"]
        and o["total_amount"] > threshold
    }
    found = await resolve(
        actions,
        action_name="makePayment",
        related_class="Supplier",
        related_name=SUPPLIER["name"],
        filters=[
            PropertyFilter(property="status", value="approved"),
            PropertyFilter(property="paid", value=False),
            PropertyFilter(property="total_amount", op="gt", value=str(threshold)),
        ],
    )
    assert found.error is None
    assert {t.entity_id for t in found.targets} == expected and 0 < len(expected) < len(OF_SUPPLIER)
    assert found.confidence == 0.95 and "total_amount > " in found.reasoning


async def test_filters_alone_select_across_the_class_and_ask_for_a_human(tools) -> None:
    actions, _ = tools
    drafts = sorted(o["total_amount"] for o in ORDERS if o["status"] == "draft")
    ceiling = drafts[len(drafts) // 3]
    expected = {o["po_number"] for o in ORDERS if o["status"] == "draft" and o["total_amount"] <= ceiling}
    filters = [
        PropertyFilter(property="status", op="in", value=["draft"]),
        PropertyFilter(property="total_amount", op="le", value=ceiling),
    ]
    found = await resolve(actions, action_name="submit", filters=filters)
    assert {t.entity_id for t in found.targets} == expected
    assert found.confidence == FILTERS_ONLY_CONFIDENCE and "selected by property filters alone" in found.reasoning
    too_many = await resolve(actions, limit=len(expected) - 1, action_name="submit", filters=filters)
    assert too_many.error and "narrow the request" in too_many.error


async def test_filters_narrow_named_ids_and_say_which_they_left_out(tools) -> None:
    actions, _ = tools
    named = [o["po_number"] for o in ORDERS[:12]]
    matching = [o["po_number"] for o in ORDERS[:12] if o["status"] == "approved"]
    found = await resolve(
        actions, action_name="hold", entity_ids=named, filters=[PropertyFilter(property="status", value="approved")]
    )
    assert [t.entity_id for t in found.targets] == matching and 0 < len(matching) < len(named)
    left_out = [po for po in named if po not in matching]
    assert found.confidence == 0.95 and f'not matching status = "approved": {", ".join(left_out)}' in found.reasoning


async def test_hostile_or_undeclared_filters_select_nothing_and_change_nothing(tools) -> None:
    actions, g = tools
    hostile = await resolve(
        actions,
        action_name="cancel",
        filters=[PropertyFilter(property="status", value="x' OR 1=1 WITH e MATCH (n) DETACH DELETE n //")],
    )
    assert hostile.error is None and hostile.targets == []
    undeclared = await resolve(
        actions, action_name="cancel", filters=[PropertyFilter(property="status` <> '' OR true //", value="x")]
    )
    assert undeclared.error and "PurchaseOrder has no property" in undeclared.error
    assert (await g.ro_query("MATCH (n) RETURN count(n)")).result_set[0][0] == sum(
        len(rows) for rows in DATA.nodes.values()
    )
