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
from falkordb.asyncio import FalkorDB
from prometheus_client import REGISTRY

from actions.ontology import Ontology
from activities.actions import ActionTools
from backends.graph_store import GraphQueryError, GraphStore
from contracts.action_path import ActionGroup
from contracts.plan import ExecutionStep
from contracts.query_path import StepInput, StepOutput
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
    details = json.loads(
        (await tools.get_action_details(call("x", entity_type="PurchaseOrder", action_name="makePayment"))).output
    )
    assert details["preconditions"] == ["Order not approved", "Order already paid", "Insufficient funds"]
    assert details["irreversible"] is True
    unknown = await tools.get_action_details(call("x", entity_type="PurchaseOrder", action_name="shred"))
    assert not unknown.success and "has no action 'shred'" in unknown.output


async def test_validation_is_a_dry_run_with_reasons(falkordb_url: str, demo_copy: tuple[str, Any]) -> None:
    tools = ToolCalls(local_backends(falkordb_url=falkordb_url, graph_name=demo_copy[0], ontology=ONTOLOGY))
    g = demo_copy[1]
    draft = order("draft")["po_number"]
    ok = json.loads(
        (
            await tools.validate_action_preconditions(
                call("x", entity_type="PurchaseOrder", action_name="submit", entity_id=draft)
            )
        ).output
    )
    no = json.loads(
        (
            await tools.validate_action_preconditions(
                call("x", entity_type="PurchaseOrder", action_name="approve", entity_id=draft)
            )
        ).output
    )
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
    again = json.loads(
        (
            await tools.execute_action(call("x", entity_type="PurchaseOrder", action_name="submit", entity_id=draft))
        ).output
    )
    assert again["already_applied"] is True and again["changes"] == body["changes"]
    records = (await g.ro_query("MATCH (r:ActionRecord) RETURN count(r)")).result_set[0][0]
    assert records == 1
    # Another step: the precondition no longer holds.
    other = await tools.execute_action(
        call("x", step="s2", entity_type="PurchaseOrder", action_name="submit", entity_id=draft)
    )
    assert not other.success and "Order is not a draft" in other.output


async def test_payment_debits_once_and_fails_with_its_reasons(graph) -> None:
    tools, g = graph
    first, second = order("approved", 0), order("approved", 1)
    await g.query("MATCH (a:Account) SET a.balance = $b", {"b": first["total_amount"]})
    ended = {
        o: REGISTRY.get_sample_value("tgca_actions_total", {"action": "makePayment", "outcome": o}) or 0.0
        for o in ("applied", "failed")
    }
    paid = await tools.execute_action(
        call("x", entity_type="PurchaseOrder", action_name="makePayment", entity_id=first["po_number"])
    )
    assert paid.success and json.loads(paid.output)["changes"]["paid"] == {"before": False, "after": True}
    assert await balance(g) == 0
    twice = await tools.execute_action(
        call("x", step="s2", entity_type="PurchaseOrder", action_name="makePayment", entity_id=first["po_number"])
    )
    broke = await tools.execute_action(
        call("x", step="s3", entity_type="PurchaseOrder", action_name="makePayment", entity_id=second["po_number"])
    )
    draft = await tools.execute_action(
        call(
            "x",
            step="s4",
            entity_type="PurchaseOrder",
            action_name="makePayment",
            entity_id=order("draft")["po_number"],
        )
    )
    assert json.loads(twice.output)["failures"] == ["Order already paid", "Insufficient funds"]
    assert json.loads(broke.output)["failures"] == ["Insufficient funds"]
    assert "Order not approved" in json.loads(draft.output)["failures"]
    assert await balance(g) == 0 and await prop(g, second["po_number"], "paid") is False
    # The batch dashboard's counter: one payment applied, three failed with their reasons.
    assert {
        o: REGISTRY.get_sample_value("tgca_actions_total", {"action": "makePayment", "outcome": o}) - ended[o]
        for o in ended
    } == {"applied": 1, "failed": 3}


async def test_concurrent_payments_of_one_order_apply_exactly_once(graph) -> None:
    tools, g = graph
    target = order("approved", 2)
    start = await balance(g)
    results = await asyncio.gather(
        *(
            tools.execute_action(
                call(
                    "x",
                    run=f"run-{i}",
                    entity_type="PurchaseOrder",
                    action_name="makePayment",
                    entity_id=target["po_number"],
                )
            )
            for i in range(20)
        )
    )
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


# Groups (execute_actions): one write query per entity type, action and parameters, each entity reported as
# `execute_action` reports it. Each test runs the same steps one by one, in the group's order, on a twin copy
# of the demo graph: the outputs and the graph must come out the same.


def step(action: str, entity_id: str, step_id: str = "s1", **parameters: Any) -> StepInput:
    arguments = {"entity_type": "PurchaseOrder", "action_name": action, "entity_id": entity_id}
    if parameters:
        arguments["parameters"] = json.dumps(parameters)
    return call("execute_action", run="run-g", step=step_id, **arguments)


@pytest_asyncio.fixture
async def twin(falkordb_url: str, demo_copy: tuple[str, Any]) -> AsyncIterator[tuple[ActionTools, Any]]:
    name = f"{demo_copy[0]}-twin"
    await demo_graph.load(falkordb_url, name)
    store = GraphStore(falkordb_url, name)
    db = FalkorDB.from_url(falkordb_url)
    yield ActionTools(store, ONTOLOGY), db.select_graph(name)
    await store.aclose()
    await db.select_graph(name).delete()
    await db.aclose()


def group_writes(tools: ActionTools, monkeypatch: pytest.MonkeyPatch, reject: bool = False) -> list[int]:
    """The number of entities of each group write query (`reject`: the graph refuses them)."""
    sizes: list[int] = []
    write = tools.graph.write_query

    async def counted(query: str, params: dict[str, Any], **kw: Any) -> Any:
        if query.startswith("UNWIND"):
            sizes.append(len(params["items"]))
            if reject:
                raise GraphQueryError("refused for the test")
        return await write(query, params, **kw)

    monkeypatch.setattr(tools.graph, "write_query", counted)
    return sizes


async def one_by_one(tools: ActionTools, steps: list[StepInput]) -> list[StepOutput]:
    return [await tools.execute_action(s) for s in steps]


def counted(action: str) -> dict[str, float]:
    return {
        o: REGISTRY.get_sample_value("tgca_actions_total", {"action": action, "outcome": o}) or 0.0
        for o in ("applied", "repeated", "failed")
    }


async def records(g: Any) -> list[list[Any]]:
    return (
        await g.ro_query(
            "MATCH (r:ActionRecord) RETURN r.key, r.changed_keys, r.changed_before, "
            "r.changed_after, r.parameters ORDER BY r.key"
        )
    ).result_set


async def test_a_group_is_one_write_and_each_entity_ends_as_it_would_alone(graph, twin, monkeypatch) -> None:
    (tools, g), (alone, g2) = graph, twin
    drafts = [order("draft", n)["po_number"] for n in range(4)]
    for t in (tools, alone):  # an earlier attempt of this step applied drafts[1]: its key has a record
        assert (await t.execute_action(step("submit", drafts[1]))).success
    steps = [
        step("submit", drafts[0]),
        step("submit", drafts[1]),
        step("submit", order("submitted")["po_number"]),
        step("submit", "PO-NOPE"),
        step("submit", drafts[2], reason="x"),
        step("submit", drafts[3]),
    ]
    sizes = group_writes(tools, monkeypatch)
    before, invalid = counted("submit"), counted("(invalid request)")
    out = (await tools.execute_actions(ActionGroup(steps=steps))).outputs
    assert sizes == [5]  # one query for the five valid steps
    assert {o: counted("submit")[o] - before[o] for o in before} == {"applied": 2, "repeated": 1, "failed": 2}
    assert counted("(invalid request)")["failed"] - invalid["failed"] == 1
    assert tools.peak_in_flight == 5
    assert out == await one_by_one(alone, steps)
    bodies = [json.loads(o.output) for o in out]
    submitted = {"status": {"before": "draft", "after": "submitted"}}
    assert [o.success for o in out] == [True, True, False, False, False, True]
    assert bodies[0] == {"entity_id": drafts[0], "changes": submitted, "already_applied": False}
    assert bodies[1] == {"entity_id": drafts[1], "changes": submitted, "already_applied": True}
    assert bodies[2]["failures"] == ["Order is not a draft"]
    assert out[3].error == "no PurchaseOrder 'PO-NOPE'"
    assert "submit has no parameter 'reason'" in out[4].error and await prop(g, drafts[2], "status") == "draft"
    assert bodies[5] == {"entity_id": drafts[3], "changes": submitted, "already_applied": False}
    assert await records(g) == await records(g2) and len(await records(g)) == 3


async def test_a_retried_group_reapplies_nothing(falkordb_url: str, demo_copy, monkeypatch) -> None:
    name, g = demo_copy
    tools = ActionTools(GraphStore(falkordb_url, name), ONTOLOGY, simulated_latency_s=0.3)
    targets = [o["po_number"] for o in ORDERS if o["status"] == "submitted"][:5]
    group = ActionGroup(steps=[step("approve", po) for po in targets])
    sizes = group_writes(tools, monkeypatch)
    started = asyncio.get_running_loop().time()
    first = (await tools.execute_actions(group)).outputs
    assert asyncio.get_running_loop().time() - started < 1.2  # the latency waited once, not once per entity
    again = (await tools.execute_actions(group)).outputs
    await tools.graph.aclose()
    assert sizes == [5, 5]
    approved = {"status": {"before": "submitted", "after": "approved"}}
    assert [json.loads(o.output) for o in first] == [
        {"entity_id": po, "changes": approved, "already_applied": False} for po in targets
    ]
    assert [json.loads(o.output) for o in again] == [
        {"entity_id": po, "changes": approved, "already_applied": True} for po in targets
    ]
    assert len(await records(g)) == 5
    assert [await prop(g, po, "status") for po in targets] == ["approved"] * 5


async def test_a_mixed_group_runs_one_query_per_action_and_parameters(graph, twin, monkeypatch) -> None:
    (tools, g), (alone, g2) = graph, twin
    draft, held = order("draft")["po_number"], [order("approved", n)["po_number"] for n in range(3)]
    steps = [
        step("approve", order("submitted", 0)["po_number"]),
        step("hold", held[0], reason="audit"),
        step("hold", held[1], reason="audit"),
        step("hold", held[2], reason="dispute"),
        step("approve", order("submitted", 1)["po_number"]),
        step("submit", draft),
        step("submit", draft),  # the same step twice: applied once
        step("submit", draft, step_id="s2"),
    ]  # another step on the same entity: after the first
    sizes = group_writes(tools, monkeypatch)
    out = (await tools.execute_actions(ActionGroup(steps=steps))).outputs
    assert sorted(sizes) == [1, 1, 1, 1, 2, 2]  # approve, hold audit, hold dispute, and submit in three rounds
    assert out == await one_by_one(alone, steps)
    assert [o.success for o in out] == [True, True, True, True, True, True, True, False]
    assert [json.loads(o.output).get("already_applied") for o in out[5:7]] == [False, True]
    assert out[7].error == "Order is not a draft"
    assert await prop(g, held[2], "hold_reason") == "dispute"
    assert await records(g) == await records(g2)
    reasons = (
        await g.ro_query(
            "MATCH (r:ActionRecord {action: 'hold'}) RETURN r.entity_id, r.parameters ORDER BY r.entity_id"
        )
    ).result_set
    assert reasons == sorted(
        [[held[0], '{"reason": "audit"}'], [held[1], '{"reason": "audit"}'], [held[2], '{"reason": "dispute"}']]
    )


async def test_group_payments_share_the_account_as_if_paid_one_at_a_time(graph, twin, monkeypatch) -> None:
    """The funds check of each payment sees what the payments before it in the group took (a failed one took
    nothing); the debits of one account add up; a retried group takes nothing more."""
    (tools, g), (alone, g2) = graph, twin
    approved = sorted(
        (o for o in ORDERS if o["status"] == "approved" and not o["paid"]), key=lambda o: o["total_amount"]
    )
    small, big = approved[:4], approved[-1]
    paid = next(o for o in ORDERS if o["paid"])
    funds = small[0]["total_amount"] + small[1]["total_amount"] + small[2]["total_amount"] + 0.5
    assert big["total_amount"] > funds and 0.5 < small[0]["total_amount"]
    for each in (g, g2):
        await each.query("MATCH (a:Account) SET a.balance = $b", {"b": funds})
    # small[3] is covered by the balance before the group, not by what the payments before it leave.
    steps = [step("makePayment", o["po_number"]) for o in (small[2], small[1], big, paid, small[0], small[3])]
    steps.append(step("makePayment", order("draft")["po_number"]))
    sizes = group_writes(tools, monkeypatch)
    before = counted("makePayment")
    out = (await tools.execute_actions(ActionGroup(steps=steps))).outputs
    assert sizes == [7]
    assert {o: counted("makePayment")[o] - before[o] for o in before} == {"applied": 3, "repeated": 0, "failed": 4}
    assert out == await one_by_one(alone, steps)
    assert [o.success for o in out] == [True, True, False, False, True, False, False]
    assert json.loads(out[2].output)["failures"] == ["Insufficient funds"]
    assert json.loads(out[3].output)["failures"][0] == "Order already paid"
    assert json.loads(out[5].output)["failures"] == ["Insufficient funds"]
    assert json.loads(out[6].output)["failures"] == ["Order not approved", "Insufficient funds"]
    assert await balance(g) == pytest.approx(0.5) and await balance(g2) == pytest.approx(0.5)
    again = (await tools.execute_actions(ActionGroup(steps=steps))).outputs
    assert [json.loads(o.output).get("already_applied") for o in again] == [True, True, None, None, True, None, None]
    assert await balance(g) == pytest.approx(0.5)
    assert await records(g) == await records(g2) and len(await records(g)) == 3
    # Enough for every payment: all debited from the one account.
    await g.query("MATCH (a:Account) SET a.balance = $b", {"b": 10 * big["total_amount"]})
    rest = [step("makePayment", o["po_number"], step_id="s2") for o in approved[4:14]]
    out = (await tools.execute_actions(ActionGroup(steps=rest))).outputs
    assert all(o.success for o in out)
    assert await balance(g) == pytest.approx(10 * big["total_amount"] - sum(o["total_amount"] for o in approved[4:14]))


async def test_a_group_the_graph_refuses_runs_entity_by_entity(graph, twin, monkeypatch) -> None:
    (tools, g), (alone, g2) = graph, twin
    steps = [step("approve", order("submitted", n)["po_number"]) for n in range(3)] + [step("approve", "PO-NOPE")]
    sizes = group_writes(tools, monkeypatch, reject=True)
    out = (await tools.execute_actions(ActionGroup(steps=steps))).outputs
    assert sizes == [4]
    assert out == await one_by_one(alone, steps)
    assert [o.success for o in out] == [True, True, True, False]
    assert await records(g) == await records(g2)
