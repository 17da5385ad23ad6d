"""The territories, languages and currencies graph (bench/graphs/languages.py) loaded into the real FalkorDB as the
benchmark loads it: what was built is what is stored, and the question generator makes every kind of question
on it, each gold what its reference query returns."""

from __future__ import annotations

from collections import Counter
from typing import Any

from falkordb.asyncio import FalkorDB

from bench.graphs import languages
from bench.graphs.registry import GRAPHS, load_graph
from bench.kgqa.schema_questions import QUOTAS, generate
from bench.kgqa.snapshot import read_snapshot


def _names(items: list[Any]) -> set[str]:
    return {(item if isinstance(item, str) else item[0]).lower() for item in items}


async def test_the_languages_graph_loads_and_gets_every_kind_of_question(falkordb_url: str, unique: str) -> None:
    assert GRAPHS["languages"][1] == languages.PINNED
    name = f"languages-{unique}"
    built = languages.build()
    await load_graph("languages", falkordb_url, name)
    db = FalkorDB.from_url(falkordb_url)
    try:
        graph = db.select_graph(name)
        labels = (await graph.query("MATCH (n) RETURN labels(n)[0], count(n)")).result_set
        assert dict(labels) == {label: len(rows) for label, rows in built.nodes.items()}
        types = (await graph.query("MATCH ()-[r]->() RETURN type(r), count(r)")).result_set
        assert dict(types) == {r.type: len(r.pairs) for r in built.relationships}
        share = await graph.query(
            "MATCH (:Territory {name: 'India'})-[r:SPEAKS]->(:Language {name: 'Hindi'}) "
            "RETURN r.population_percent, r.official_status"
        )
        assert share.result_set == [[41.0, "official"]]

        snap = await read_snapshot(graph)
        assert set(snap.labels["Currency"].figures) >= {"decimal_digits", "year_introduced"}
        questions, short = await generate(graph, snap, "l", 5, {c: 3 for c in QUOTAS})
        for q in questions:
            rows = [list(r) for r in (await graph.query(q.gold["reference"])).result_set]
            kind = q.gold["kind"]
            if kind == "absent":
                assert rows == [], q
            elif kind == "names":
                assert _names(q.gold["items"]) <= {str(r[0]).lower() for r in rows}, q
            elif kind == "topk":
                assert _names(q.gold["items"]) == {str(r[0]).lower() for r in rows[: len(q.gold["items"])]}, q
            else:
                assert len(rows) == 1 and abs(rows[0][0] - q.gold["value"]) <= 1e-3 * max(1, abs(q.gold["value"])), q
        await graph.delete()
    finally:
        await db.aclose()
    assert not short and Counter(q.category for q in questions) == {c: 3 for c in QUOTAS}
