"""describe_class: one class in full: its properties, how many instances exist, and its relationships."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from contracts.tool_spec import ToolArgument, ToolSpec
from tools.ontology_tool import OntologyTool

if TYPE_CHECKING:
    from actions.ontology import Ontology
    from backends.graph_store import GraphStore


class DescribeClass(OntologyTool):
    spec = ToolSpec(
        name="describe_class",
        description="One class in full: description, key, properties, number of instances and relationships.",
        arguments=[ToolArgument(name="class_name", description="the class")],
    )
    finds = "class descriptions"

    async def rows(self, args: dict[str, str], graph: GraphStore, ontology: Ontology) -> list[Any]:
        class_name = args.get("class_name", "").strip()
        c = ontology.require_class(class_name)
        count = (await graph.ro_query(f"MATCH (n:`{class_name}`) RETURN count(n)")).rows[0][0]
        return [
            {
                "class": class_name,
                "description": c.description,
                "key": c.key,
                "display": c.display,
                "properties": c.properties,
                "instances": count,
                "relationships": [
                    {"type": r.type, "from": r.from_, "to": r.to} for r in ontology.relationships_of(class_name)
                ],
            }
        ]
