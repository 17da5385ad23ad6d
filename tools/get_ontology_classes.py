"""get_ontology_classes: the classes of the domain, with their descriptions, keys and properties."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from contracts.tool_spec import ToolSpec
from tools.ontology_tool import OntologyTool

if TYPE_CHECKING:
    from actions.ontology import Ontology
    from backends.graph_store import GraphStore


class GetOntologyClasses(OntologyTool):
    spec = ToolSpec(
        name="get_ontology_classes", description="The classes of entities in the domain, with their key and properties."
    )
    finds = "classes"

    async def rows(self, args: dict[str, str], graph: GraphStore, ontology: Ontology) -> list[Any]:
        return [
            {"class": n, "description": c.description, "key": c.key, "properties": c.properties}
            for n, c in ontology.classes.items()
        ]
