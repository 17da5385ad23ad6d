"""search_instances: find entities by a term in any of their properties, optionally of one class.

The planner uses it to find what the graph calls the things a question names before it writes a query.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from backends.graph_store import PROPERTY_TEXT
from contracts.tool_spec import ToolArgument, ToolSpec
from tools.ontology_tool import MAX_LIMIT, BadArguments, OntologyTool, instance, int_argument, label

if TYPE_CHECKING:
    from actions.ontology import Ontology
    from backends.graph_store import GraphStore


class SearchInstances(OntologyTool):
    spec = ToolSpec(
        name="search_instances",
        description=(
            "Find entities whose properties contain a search term (case-insensitive), e.g. to learn the exact "
            "stored name and the class of something the question mentions. Returns each match's class and "
            "properties."
        ),
        arguments=[
            ToolArgument(name="search_term", description="the text to look for, e.g. a name or an id"),
            ToolArgument(name="class_name", description="only entities of this class (optional)", required=False),
            ToolArgument(
                name="limit", description=f"at most this many matches (default 10, at most {MAX_LIMIT})", required=False
            ),
        ],
    )
    finds = "matching instances"

    async def rows(self, args: dict[str, str], graph: GraphStore, ontology: Ontology) -> list[Any]:
        term = args.get("search_term", "").strip()
        if not term:
            raise BadArguments("search_term is required")
        class_name = args.get("class_name", "").strip()
        if class_name:
            ontology.require_class(class_name)
        limit = int_argument(args, "limit", 10, 1, MAX_LIMIT)
        found = await graph.ro_query(
            f"MATCH (n{label(class_name)}) {PROPERTY_TEXT} WHERE toLower(text) CONTAINS toLower($term) "
            f"WITH DISTINCT n RETURN labels(n), properties(n) LIMIT {limit}",
            {"term": term},
            max_rows=limit,
        )
        return [instance(labels, props) for labels, props in found.rows]
