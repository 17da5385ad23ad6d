"""get_instance_neighbors: the entities around one entity, up to a few hops, in one direction or both."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from contracts.tool_spec import ToolArgument, ToolSpec
from tools.ontology_tool import MAX_LIMIT, BadArguments, OntologyTool, instance, int_argument, match_instance

if TYPE_CHECKING:
    from actions.ontology import Ontology
    from backends.graph_store import GraphStore

MAX_HOPS = 3


class GetInstanceNeighbors(OntologyTool):
    spec = ToolSpec(
        name="get_instance_neighbors",
        description="The entities connected to one entity (named by its id or name), with the relationships "
        "that lead to each.",
        arguments=[
            ToolArgument(name="instance_name", description="the entity's id or exact name"),
            ToolArgument(name="hops", description=f"how far to look (1-{MAX_HOPS}, default 1)", required=False),
            ToolArgument(name="direction", description="out, in or both (default both)", required=False),
        ],
    )
    finds = "neighbours"

    async def rows(self, args: dict[str, str], graph: GraphStore, ontology: Ontology) -> list[Any]:
        name = args.get("instance_name", "").strip()
        if not name:
            raise BadArguments("instance_name is required")
        hops = int_argument(args, "hops", 1, 1, MAX_HOPS)
        direction = args.get("direction", "both").strip().lower() or "both"
        pattern = {"out": f"-[*1..{hops}]->", "in": f"<-[*1..{hops}]-", "both": f"-[*1..{hops}]-"}.get(direction)
        if pattern is None:
            raise BadArguments(f"direction must be in, out or both, got {direction!r}")
        found = await graph.ro_query(
            f"{match_instance(ontology, 'n', 'name')} WITH n LIMIT 1 MATCH p = (n){pattern}(m) "
            f"RETURN DISTINCT [x IN relationships(p) | type(x)], labels(m), properties(m) LIMIT {MAX_LIMIT}",
            {"name": name},
            max_rows=MAX_LIMIT,
        )
        return [{"via": via, **instance(labels, props)} for via, labels, props in found.rows]
