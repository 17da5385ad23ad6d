"""get_instances_by_class: the entities of one class, optionally filtered by exact property values."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from contracts.tool_spec import ToolArgument, ToolSpec
from tools.ontology_tool import MAX_LIMIT, BadArguments, OntologyTool, int_argument

if TYPE_CHECKING:
    from actions.ontology import Ontology
    from backends.graph_store import GraphStore


class GetInstancesByClass(OntologyTool):
    spec = ToolSpec(
        name="get_instances_by_class",
        description="The entities of one class, optionally only those whose properties equal given values.",
        arguments=[
            ToolArgument(name="class_name", description="the class"),
            ToolArgument(
                name="filters",
                description='a JSON object of property -> value, e.g. {"status": "open"}',
                required=False,
            ),
            ToolArgument(
                name="limit", description=f"at most this many (default 20, at most {MAX_LIMIT})", required=False
            ),
        ],
    )
    finds = "instances"

    async def rows(self, args: dict[str, str], graph: GraphStore, ontology: Ontology) -> list[Any]:
        class_name = args.get("class_name", "").strip()
        ontology.require_class(class_name)
        try:
            filters = json.loads(args.get("filters") or "{}")
        except json.JSONDecodeError as exc:
            raise BadArguments(f"filters must be a JSON object: {exc}") from exc
        if not isinstance(filters, dict):
            raise BadArguments("filters must be a JSON object of property -> value")
        conditions, params = [], {}
        for i, (prop, value) in enumerate(filters.items()):
            ontology.require_property(class_name, prop)
            conditions.append(f"n.`{prop}` = $f{i}")
            params[f"f{i}"] = value
        limit = int_argument(args, "limit", 20, 1, MAX_LIMIT)
        where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
        found = await graph.ro_query(
            f"MATCH (n:`{class_name}`){where} RETURN properties(n) LIMIT {limit}", params, max_rows=limit
        )
        return [{"class": class_name, **props} for (props,) in found.rows]
