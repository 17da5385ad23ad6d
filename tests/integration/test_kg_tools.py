"""The ontology-driven knowledge-graph tools on the real demo graph: answers checked against the deterministic dataset,
limits enforced, and Cypher injection through names, filters and search terms changing nothing."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from falkordb.asyncio import FalkorDB

from actions.ontology import Ontology
from embedded import demo_graph
from tests.tool_calls import ToolCalls, call, local_backends, results
from tools.ontology_tool import MAX_LIMIT

DATA = demo_graph.generate()
ONTOLOGY = Ontology.load(demo_graph.ONTOLOGY_PATH)


@pytest.fixture
def tools(falkordb_url: str) -> ToolCalls:
    return ToolCalls(local_backends(falkordb_url=falkordb_url, ontology=ONTOLOGY))


async def test_neighbours_follow_direction_and_hops(tools: ToolCalls) -> None:
    supplies = [
        e["to"] for e in DATA.edges[("Supplier", "supplier_id", "SUPPLIES", "Product", "sku")] if e["from"] == "SUP-001"
    ]
    out = results(
        await tools.get_instance_neighbors(
            call("get_instance_neighbors", instance_name="acme industrial", direction="out")
        )
    )
    assert sorted(r["sku"] for r in out) == sorted(supplies) and {tuple(r["via"]) for r in out} == {("SUPPLIES",)}
    incoming = results(
        await tools.get_instance_neighbors(call("get_instance_neighbors", instance_name="SUP-001", direction="in"))
    )
    assert len(incoming) == MAX_LIMIT and {r["class"] for r in incoming} == {"PurchaseOrder"}  # 135, capped


async def test_instances_by_class_with_filters_and_limits(tools: ToolCalls) -> None:
    cancelled = sum(1 for o in DATA.nodes["PurchaseOrder"] if o["status"] == "cancelled")
    out = results(
        await tools.get_instances_by_class(
            call(
                "get_instances_by_class",
                class_name="PurchaseOrder",
                filters=json.dumps({"status": "cancelled"}),
                limit=1000,
            )
        )
    )
    assert len(out) == min(cancelled, MAX_LIMIT) and {r["status"] for r in out} == {"cancelled"}


async def test_path_between_instances(tools: ToolCalls) -> None:
    [path] = results(
        await tools.find_path_between_instances(
            call("find_path_between_instances", start_name="Acme Industrial", end_name="Hamburg Distribution Center")
        )
    )
    assert path["length"] == 2 and path["relationships"] == ["ISSUED_TO", "DELIVER_TO"]
    assert [n["class"] for n in path["nodes"]] == ["Supplier", "PurchaseOrder", "Warehouse"]


async def test_ontology_and_statistics(tools: ToolCalls) -> None:
    classes = results(await tools.get_ontology_classes(call("get_ontology_classes")))
    assert {c["class"] for c in classes} == set(DATA.nodes)
    relationships = results(await tools.get_ontology_relationships(call("get_ontology_relationships")))
    assert {"type": "ISSUED_TO", "from": "PurchaseOrder", "to": "Supplier"}.items() <= relationships[1].items()
    [supplier] = results(await tools.describe_class(call("describe_class", class_name="Supplier")))
    assert supplier["instances"] == len(DATA.nodes["Supplier"]) and supplier["key"] == "supplier_id"
    [invoices] = results(await tools.get_node_statistics(call("get_node_statistics", node_label="Invoice")))
    assert invoices["count"] == len(DATA.nodes["Invoice"]) and len(invoices["samples"]) == 3


@pytest.mark.parametrize(
    ("function", "arguments", "reason"),
    [
        ("get_instances_by_class", {"class_name": "Supplier`) DETACH DELETE n //"}, "unknown class"),
        (
            "get_instances_by_class",
            {"class_name": "Supplier", "filters": json.dumps({"name` = '' OR 1=1 //": "x"})},
            "has no property",
        ),
        (
            "get_instance_neighbors",
            {"instance_name": "Acme Industrial", "hops": "2]-() DETACH DELETE n //"},
            "whole number",
        ),
        ("get_instance_neighbors", {"instance_name": "Acme Industrial", "direction": "sideways"}, "direction must be"),
        ("get_node_statistics", {"node_label": "Nope"}, "unknown class"),
    ],
)
async def test_bad_names_and_arguments_are_refused(
    tools: ToolCalls, function: str, arguments: dict[str, str], reason: str
) -> None:
    out = await getattr(tools, function)(call(function, **arguments))
    assert not out.success and reason in out.output


async def test_injection_through_values_changes_nothing(tools: ToolCalls, falkordb_url: str) -> None:
    db = FalkorDB.from_url(falkordb_url)
    graph = db.select_graph("procurement")

    async def census() -> Counter[str]:
        rows = (await graph.ro_query("MATCH (n) RETURN labels(n)[0], count(n)")).result_set
        return Counter({label: count for label, count in rows})

    before = await census()
    hostile = "x') DETACH DELETE n WITH 1 AS one MATCH (m) SET m.pwned = true //"
    await tools.get_instance_neighbors(call("get_instance_neighbors", instance_name=hostile))
    await tools.find_path_between_instances(call("find_path_between_instances", start_name=hostile, end_name=hostile))
    await tools.get_instances_by_class(
        call("get_instances_by_class", class_name="Supplier", filters=json.dumps({"name": hostile}))
    )
    after = await census()
    pwned = (await graph.ro_query("MATCH (n) WHERE n.pwned = true RETURN count(n)")).result_set[0][0]
    await db.aclose()
    assert after == before and pwned == 0


async def test_the_ontology_is_queryable_in_its_own_graph(falkordb_url: str) -> None:
    await demo_graph.load_ontology(falkordb_url, "procurement", ONTOLOGY)
    db = FalkorDB.from_url(falkordb_url)
    rows = (
        await db.select_graph("procurement__ontology").ro_query(
            "MATCH (a:Class)-[r:RELATES]->(b:Class) WHERE r.type = 'BILLS' RETURN a.name, b.name"
        )
    ).result_set
    instance_labels = {
        label for (label,) in (await db.select_graph("procurement").ro_query("CALL db.labels()")).result_set
    }
    await db.aclose()
    assert rows == [["Invoice", "PurchaseOrder"]] and "Class" not in instance_labels
