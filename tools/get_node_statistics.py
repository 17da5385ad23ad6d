"""get_node_statistics: how many entities each class (or one class) has, with a few samples."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from contracts.tool_spec import ToolArgument, ToolSpec
from tools.ontology_tool import OntologyTool

if TYPE_CHECKING:
    from actions.ontology import Ontology
    from backends.graph_store import GraphStore


class GetNodeStatistics(OntologyTool):
    spec = ToolSpec(
        name="get_node_statistics",
        description="How many entities of each class (or of one class) exist, with three samples of each.",
        arguments=[ToolArgument(name="node_label", description="only this class (optional)", required=False)],
    )
    finds = "statistics"

    async def rows(self, args: dict[str, str], graph: GraphStore, ontology: Ontology) -> list[Any]:
        label = args.get("node_label", "").strip()
        names = [label] if label else list(ontology.classes)
        for name in names:
            ontology.require_class(name)
        stats = []
        for name in names:
            count = (await graph.ro_query(f"MATCH (n:`{name}`) RETURN count(n)")).rows[0][0]
            sample = await graph.ro_query(f"MATCH (n:`{name}`) RETURN properties(n) LIMIT 3", max_rows=3)
            stats.append({"class": name, "count": count, "samples": [props for (props,) in sample.rows]})
        return stats
