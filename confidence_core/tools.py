"""The tool catalogue the planner may choose from: names, descriptions and argument schemas."""

from __future__ import annotations

from pydantic import BaseModel, Field


class ToolArgument(BaseModel):
    name: str
    description: str
    required: bool = True


class ToolSpec(BaseModel):
    name: str
    description: str
    arguments: list[ToolArgument] = Field(default_factory=list)

    def required_arguments(self) -> set[str]:
        return {a.name for a in self.arguments if a.required}

    def argument_names(self) -> set[str]:
        return {a.name for a in self.arguments}


GRAPH_QUERY = ToolSpec(
    name="GraphQuery",
    description=(
        "Run one read-only openCypher query against the knowledge graph and return the rows. "
        "Use the graph schema given below: only its labels, relationship types and properties exist."
    ),
    arguments=[ToolArgument(name="query", description="a read-only openCypher query (MATCH ... RETURN ...)")],
)

TEXT_COMPLETION = ToolSpec(
    name="TextCompletion",
    description=(
        "Ask the language model to reason over text. It sees the outputs of the steps it depends on, "
        "so use it to interpret, compare or summarise earlier results."
    ),
    arguments=[ToolArgument(name="prompt", description="the instruction for the language model")],
)

BUILTIN_TOOLS: dict[str, ToolSpec] = {t.name: t for t in (GRAPH_QUERY, TEXT_COMPLETION)}
