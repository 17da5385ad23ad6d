"""ACTION execution on real FalkorDB: preconditions in plain words, effects with before/after, the check and
the effect in one atomic query (no race between concurrent actions), idempotency keys (never twice),
and injection through entity ids changing nothing."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from prometheus_client import REGISTRY

from activities.actions import ActionTools
from backends.graph_store import GraphStore
from confidence_core.ontology import Ontology
from contracts.plan import ExecutionStep
from contracts.query_path import StepInput
from embedded import demo_graph
from tests.tool_calls import ToolCalls, local_backends

ONTOLOGY = Ontology.load(demo_graph.ONTOLOGY_PATH)
ORDERS = demo_graph.generate().nodes["PurchaseOrder"]


def order(status: str, n: int = 0) -> dict[str, Any]:
    return [o for o in ORDERS if o["status"] == status][n]


def call(function: str, run: str = "run-1", step: str = "s1", **arguments: str) -> StepInput:
    return StepInput(question="q", workflow_id=run, step=ExecutionStep(id=step, function=function, arguments=arguments))


@pytest_asyncio.fixture
async def graph(falkordb_url: str, demo_copy: tuple[str, Any]) -> AsyncIterator[tuple[ActionTools, Any]]:
    name, g = demo_copy
    yield ActionTools(GraphStore(falkordb_url, name), ONTOLOGY), g


async def prop(g: Any, po: str, key: str) -> Any:
    return (await g.ro_query(f"MATCH (o:PurchaseOrder {{po_number: $po}}) RETURN o.{key}", {"po": po})).result_set[0][0]


async def balance(g: Any) -> float:
    return (await g.ro_query("MATCH (a:Account) RETURN a.balance")).result_set[0][0]


async def test_definitions_are_listed_with_their_preconditions(falkordb_url: str, demo_copy: tuple[str, Any]) -> None:
    tools = ToolCalls(local_backends(falkordb_url=falkordb_url, graph_name=demo_copy[0], ontology=ONTOLOGY))
    listed = json.loads((await tools.list_available_actions(call("x", entity_type="PurchaseOrder"))).output)
    names = [a["action"] for a in listed["actions"]]
    assert names == ["submit", "withdraw", "approve", "makePayment", "cancel", "hold", "release"]
    hold = next(a for a in listed["actions"] if a["action"] == "hold")
    assert hold["parameters"] == {"reason": "string"}
    details = json.loads((await tools.get_action_details(call("x", entity_type="PurchaseOrder",
                                                              action_name="makePayment"))).output)
    assert details["preconditions"] == ["Order not approved", "Order already paid", "Insufficient funds"]
    assert details["irreversible"] is True
    unknown = await tools.get_action_details(call("x", entity_type="PurchaseOrder", action_name="shred"))
    assert not unknown.success and "has no action 'shred'" in unknown.output


async def test_validation_is_a_dry_run_with_reasons(falkordb_url: str, demo_copy: tuple[str, Any]) -> None:
    tools = ToolCalls(local_backends(falkordb_url=falkordb_url, graph_name=demo_copy[0], ontology=ONTOLOGY))
    g = demo_copy[1]
    draft = order("draft")["po_number"]
    ok = json.loads((await tools.validate_action_preconditions(call(
        "x", entity_type="PurchaseOrder", action_name="submit", entity_id=draft))).output)
    no = json.loads((await tools.validate_action_preconditions(call(
        "x", entity_type="PurchaseOrder", action_name="approve", entity_id=draft))).output)
    assert ok == {"entity_id": draft, "valid": True, "failures": []}
    assert no["valid"] is False and no["failures"] == ["Order is not submitted"]
    assert await prop(g, draft, "status") == "draft"  # nothing changed


async def test_execution_reports_changes_and_a_repeat_applies_nothing(graph) -> None:
    tools, g = graph
    draft = order("draft")["po_number"]
    first = await tools.execute_action(call("x", entity_type="PurchaseOrder", action_name="submit", entity_id=draft))
    body = json.loads(first.output)
    assert first.success and body["changes"] == {"status": {"before": "draft", "after": "submitted"}}
    # The same run and step again (a retried or replayed activity): reported as applied, not applied twice.
    again = json.loads((await tools.execute_action(call("x", entity_type="PurchaseOrder", action_name="submit",
                                                        entity_id=draft))).output)
    assert again["already_applied"] is True and again["changes"] == body["changes"]
    records = (await g.ro_query("MATCH (r:ActionRecord) RETURN count(r)")).result_set[0][0]
    assert records == 1
    # Another step: the precondition no longer holds.
    other = await tools.execute_action(call("x", step="s2", entity_type="PurchaseOrder", action_name="submit",
                                            entity_id=draft))
    assert not other.success and "Order is not a draft" in other.output


async def test_payment_debits_once_and_fails_with_its_reasons(graph) -> None:
    tools, g = graph
    first, second = order("approved", 0), order("approved", 1)
    await g.query("MATCH (a:Account) SET a.balance = $b", {"b": first["total_amount"]})
    ended = {o: REGISTRY.get_sample_value("tgca_actions_total", {"action": "makePayment", "outcome": o}) or 0.0
             for o in ("applied", "failed")}
    paid = await tools.execute_action(call("x", entity_type="PurchaseOrder", action_name="makePayment",
                                           entity_id=first["po_number"]))
    assert paid.success and json.loads(paid.output)["changes"]["paid"] == {"before": False, "after": True}
    assert await balance(g) == 0
    twice = await tools.execute_action(call("x", step="s2", entity_type="PurchaseOrder", action_name="makePayment",
                                            entity_id=first["po_number"]))
    broke = await tools.execute_action(call("x", step="s3", entity_type="PurchaseOrder", action_name="makePayment",
                                            entity_id=second["po_number"]))
    draft = await tools.execute_action(call("x", step="s4", entity_type="PurchaseOrder", action_name="makePayment",
                                            entity_id=order("draft")["po_number"]))
    assert json.loads(twice.output)["failures"] == ["Order already paid", "Insufficient funds"]
    assert json.loads(broke.output)["failures"] == ["Insufficient funds"]
    assert "Order not approved" in json.loads(draft.output)["failures"]
    assert await balance(g) == 0 and await prop(g, second["po_number"], "paid") is False
    # The batch dashboard's counter: one payment applied, three failed with their reasons.
    assert {o: REGISTRY.get_sample_value("tgca_actions_total", {"action": "makePayment", "outcome": o}) - ended[o]
            for o in ended} == {"applied": 1, "failed": 3}


async def test_concurrent_payments_of_one_order_apply_exactly_once(graph) -> None:
    tools, g = graph
    target = order("approved", 2)
    start = await balance(g)
    results = await asyncio.gather(*(tools.execute_action(call(
        "x", run=f"run-{i}", entity_type="PurchaseOrder", action_name="makePayment", entity_id=target["po_number"]))
        for i in range(20)))
    assert sum(r.success for r in results) == 1
    assert all("Order already paid" in r.output for r in results if not r.success)
    assert await balance(g) == pytest.approx(start - target["total_amount"])


@pytest.mark.parametrize("entity_id", ["PO-1' OR 1=1 //", "x'}) DETACH DELETE (e) //", "' SET e.status='paid"])
async def test_injection_through_entity_ids_changes_nothing(graph, entity_id: str) -> None:
    tools, g = graph
    before = (await g.ro_query("MATCH (o:PurchaseOrder) RETURN o.status, count(o) ORDER BY o.status")).result_set
    out = await tools.execute_action(call("x", entity_type="PurchaseOrder", action_name="cancel", entity_id=entity_id))
    after = (await g.ro_query("MATCH (o:PurchaseOrder) RETURN o.status, count(o) ORDER BY o.status")).result_set
    assert not out.success and "no PurchaseOrder" in out.output and after == before
