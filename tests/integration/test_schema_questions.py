"""Labelled questions made from a graph's live schema and data alone, against the real FalkorDB: every gold is what
its own reference query returns, a seed fixes the set, every kind of question is made where the graph allows it,
and an entity that does not exist is a name stored nowhere in the graph."""

from __future__ import annotations

from collections import Counter
from typing import Any

from falkordb.asyncio import FalkorDB

from bench.graphs.registry import load_graph
from bench.kgqa.questions import Question
from bench.kgqa.schema_questions import QUOTAS, generate
from bench.kgqa.snapshot import read_snapshot


def _names(items: list[Any]) -> set[str]:
    """Each gold item's name (the first spelling; the others are its codes)."""
    return {(item if isinstance(item, str) else item[0]).lower() for item in items}


async def _check_golds(graph: Any, questions: list[Question]) -> None:
    for q in questions:
        rows = [list(r) for r in (await graph.query(q.gold["reference"])).result_set]
        kind = q.gold["kind"]
        if kind == "absent":
            assert rows == [], q
        elif kind == "names":  # names the question itself states are dropped from the gold: a subset
            assert _names(q.gold["items"]) <= {str(r[0]).lower() for r in rows}, q
        elif kind == "topk":
            assert _names(q.gold["items"]) == {str(r[0]).lower() for r in rows[: len(q.gold["items"])]}, q
        else:
            assert len(rows) == 1 and abs(rows[0][0] - q.gold["value"]) <= 1e-3 * max(1, abs(q.gold["value"])), q


async def test_a_public_graph_s_questions_have_the_golds_their_reference_queries_give(
    falkordb_url: str, unique: str
) -> None:
    name = f"social-{unique}"
    await load_graph("social", falkordb_url, name)
    db = FalkorDB.from_url(falkordb_url)
    try:
        graph = db.select_graph(name)
        snap = await read_snapshot(graph)
        quotas = {c: 6 for c in QUOTAS}
        first, short = await generate(graph, snap, "s", 3, quotas)
        again, _ = await generate(graph, snap, "s", 3, quotas)
        other, _ = await generate(graph, snap, "s", 4, quotas)
        await _check_golds(graph, first)
        stored = snap.stored_texts()
        absent = [q.gold["entity"] for q in first if q.gold["kind"] == "absent"]
        assert absent and not any(a.lower() in t for a in absent for t in stored)
        await graph.delete()
    finally:
        await db.aclose()
    assert [(q.text, q.gold) for q in first] == [(q.text, q.gold) for q in again]
    assert {q.text for q in first} != {q.text for q in other}
    assert len({q.text for q in first}) == len(first)
    # its nodes carry no figures: no lookups, aggregations or filters, and the shortfall says so
    assert {"one-hop", "count", "path", "set", "non-existent"} <= {q.category for q in first}
    assert short["lookup"] == short["aggregation"] == short["filter"] == 6


async def test_any_graph_gets_every_kind_of_question_from_its_schema_alone(falkordb_url: str) -> None:
    """The demo graph, read as an unknown graph: names, figures and relationships found from the data."""
    db = FalkorDB.from_url(falkordb_url)
    try:
        graph = db.select_graph("procurement")
        snap = await read_snapshot(graph)
        questions, short = await generate(graph, snap, "p", 11, {c: 3 for c in QUOTAS})
        await _check_golds(graph, questions)
    finally:
        await db.aclose()
    assert not short and Counter(q.category for q in questions) == {c: 3 for c in QUOTAS}
    assert not any("`" in q.text or "MATCH" in q.text for q in questions)
    assert snap.labels["Supplier"].key == "name" and "total_amount" in snap.labels["PurchaseOrder"].figures
