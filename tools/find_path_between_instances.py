"""find_path_between_instances: the shortest chain of relationships between two entities."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from contracts.tool_spec import ToolArgument, ToolSpec
from tools.ontology_tool import BadArguments, OntologyTool, instance, int_argument, match_instance

if TYPE_CHECKING:
    from actions.ontology import Ontology
    from backends.graph_store import GraphStore

MAX_PATH_DEPTH = 6


class FindPathBetweenInstances(OntologyTool):
    spec = ToolSpec(
        name="find_path_between_instances",
        description="How two entities (named by id or name) are connected: the shortest path between them.",
        arguments=[
            ToolArgument(name="start_name", description="the first entity's id or exact name"),
            ToolArgument(name="end_name", description="the second entity's id or exact name"),
            ToolArgument(
                name="max_depth",
                description=f"longest path to consider (1-{MAX_PATH_DEPTH}, default 4)",
                required=False,
            ),
        ],
    )
    finds = "paths"

    async def rows(self, args: dict[str, str], graph: GraphStore, ontology: Ontology) -> list[Any]:
        start, end = args.get("start_name", "").strip(), args.get("end_name", "").strip()
        if not start or not end:
            raise BadArguments("start_name and end_name are required")
        depth = int_argument(args, "max_depth", 4, 1, MAX_PATH_DEPTH)
        found = await graph.ro_query(
            f"{match_instance(ontology, 'a', 'start')} WITH a LIMIT 1 "
            f"{match_instance(ontology, 'b', 'end')} WITH a, b LIMIT 1 "
            f"MATCH p = (a)-[*1..{depth}]-(b) RETURN [n IN nodes(p) | labels(n)[0]], "
            f"[n IN nodes(p) | properties(n)], [r IN relationships(p) | type(r)], length(p) "
            f"ORDER BY length(p) LIMIT 1",
            {"start": start, "end": end},
            max_rows=1,
        )
        return [
            {
                "length": length,
                "relationships": rels,
                "nodes": [instance([lbl], props) for lbl, props in zip(labels, props_list, strict=True)],
            }
            for labels, props_list, rels, length in found.rows
        ]
