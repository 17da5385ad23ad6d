"""get_ontology_relationships: the relationship types of the domain and which classes they connect."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from contracts.tool_spec import ToolSpec
from tools.ontology_tool import OntologyTool

if TYPE_CHECKING:
    from actions.ontology import Ontology
    from backends.graph_store import GraphStore


class GetOntologyRelationships(OntologyTool):
    spec = ToolSpec(
        name="get_ontology_relationships",
        description="The relationship types of the domain: from which class to which, and what they mean.",
    )
    finds = "relationships"

    async def rows(self, args: dict[str, str], graph: GraphStore, ontology: Ontology) -> list[Any]:
        return [
            {"type": r.type, "from": r.from_, "to": r.to, "description": r.description} for r in ontology.relationships
        ]
