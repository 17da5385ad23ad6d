"""`tg-confidence actions`: the action history listed from the graph, and undo through the inverse,
applied once, refused for irreversible actions. The real CLI against real FalkorDB."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from typing import Any

from actions.ontology import Ontology
from activities.actions import ActionTools
from backends.graph_store import GraphStore
from contracts.plan import ExecutionStep
from contracts.query_path import StepInput
from embedded import demo_graph

ORDERS = demo_graph.generate().nodes["PurchaseOrder"]
DRAFTS = [o["po_number"] for o in ORDERS if o["status"] == "draft"][:2]
APPROVED = next(o["po_number"] for o in ORDERS if o["status"] == "approved" and not o["paid"])


async def cli(falkordb_url: str, graph: str, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "cli", "actions", "--falkordb-url", falkordb_url, "--graph-name", graph, *args]
    return await asyncio.to_thread(subprocess.run, cmd, capture_output=True, text=True, timeout=60)


async def test_list_and_undo(falkordb_url: str, demo_copy: tuple[str, Any]) -> None:
    name, g = demo_copy
    store = GraphStore(falkordb_url, name)
    tools = ActionTools(store, Ontology.load(demo_graph.ONTOLOGY_PATH))
    for step, (action, entity) in enumerate([("submit", DRAFTS[0]), ("submit", DRAFTS[1]), ("makePayment", APPROVED)]):
        out = await tools.execute_action(
            StepInput(
                question="tidy up the drafts",
                workflow_id="run-h",
                step=ExecutionStep(
                    id=f"s{step}",
                    function="execute_action",
                    arguments={"entity_type": "PurchaseOrder", "action_name": action, "entity_id": entity},
                ),
            )
        )
        assert out.success, out.output
    await store.aclose()
    listed = await cli(falkordb_url, name, "list", "--run", "run-h", "--json")
    assert listed.returncode == 0, listed.stderr
    entries = [json.loads(line) for line in listed.stdout.splitlines()]
    assert sorted(e["entity_id"] for e in entries) == sorted([*DRAFTS, APPROVED])
    submitted = next(e for e in entries if e["entity_id"] == DRAFTS[0])
    assert submitted["changes"] == {"status": {"before": "draft", "after": "submitted"}}
    assert submitted["request"] == "tidy up the drafts"
    assert {e["entity_id"]: e["can_undo"] for e in entries} == {DRAFTS[0]: True, DRAFTS[1]: True, APPROVED: False}

    undone = await cli(falkordb_url, name, "undo", "--run", "run-h", "--by", "ops")
    assert undone.returncode == 1  # one of the three could not be undone
    assert f"undone: submit {DRAFTS[0]}" in undone.stdout and f"undone: submit {DRAFTS[1]}" in undone.stdout
    assert f"NOT undone: makePayment {APPROVED} - makePayment cannot be undone: it is irreversible" in undone.stdout
    statuses = (
        await g.ro_query("MATCH (o:PurchaseOrder) WHERE o.po_number IN $ids RETURN DISTINCT o.status", {"ids": DRAFTS})
    ).result_set
    assert statuses == [["draft"]]

    again = await cli(falkordb_url, name, "undo", "--key", submitted["key"])
    assert again.returncode == 1 and "no executed action to undo" in again.stderr
    records: Any = (await g.ro_query("MATCH (r:ActionRecord) RETURN count(r)")).result_set[0][0]
    assert records == 5  # three actions and two undos, none applied twice
    shown = await cli(falkordb_url, name, "list", "--entity", DRAFTS[0])
    assert "[undone by undo:" in shown.stdout and "withdraw PurchaseOrder" in shown.stdout
