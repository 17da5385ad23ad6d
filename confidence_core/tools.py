"""The tool catalogue the planner may choose from: names, descriptions and argument schemas."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class ToolArgument(BaseModel):
    name: str
    description: str
    required: bool = True


class ToolSpec(BaseModel):
    name: str
    description: str
    arguments: list[ToolArgument] = Field(default_factory=list)
    # A tool that dispatches to named sub-tools (McpTool: the MCP tools found at run time; Prompt: the
    # templates): the name -> JSON schema of its input. The `tool`/`template` argument must be one of them.
    choices: dict[str, dict[str, Any]] = Field(default_factory=dict)
    choice_argument: str = ""

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

KNOWLEDGE_QUERY = ToolSpec(
    name="KnowledgeQuery",
    description=(
        "Answer a question from the knowledge graph without writing Cypher: finds the entities the "
        "question names, reads their neighbourhood and answers from those facts only."
    ),
    arguments=[ToolArgument(name="question", description="the question, naming the entities it is about")],
)


def prompt_tool(templates: dict[str, str]) -> ToolSpec:
    """The Prompt tool over the named templates of the configuration."""
    return ToolSpec(
        name="Prompt",
        description="Apply a named prompt template to some input and to the results of the steps it depends on. "
                    "Templates: " + "; ".join(f"{name}: {text}" for name, text in templates.items()),
        arguments=[ToolArgument(name="template", description="one of the template names"),
                   ToolArgument(name="input", description="the text or instruction the template works on")],
        choices={name: {} for name in templates},
        choice_argument="template",
    )


def mcp_tool(tools: dict[str, tuple[str, dict[str, Any]]]) -> ToolSpec:
    """McpTool over the MCP tools discovered at run time: name -> (description, input schema)."""
    listing = "; ".join(f"{name} ({description}) input {json_schema_summary(schema)}"
                        for name, (description, schema) in tools.items())
    return ToolSpec(
        name="McpTool",
        description=f"Call a tool of a connected MCP server. Tools: {listing}",
        arguments=[ToolArgument(name="tool", description="the MCP tool name"),
                   ToolArgument(name="arguments", description="the tool's input as a JSON object")],
        choices={name: schema for name, (_, schema) in tools.items()},
        choice_argument="tool",
    )


def json_schema_summary(schema: dict[str, Any]) -> str:
    props = schema.get("properties", {})
    required = set(schema.get("required", []))
    return "{" + ", ".join(f"{k}: {v.get('type', 'any')}{'' if k in required else '?'}" for k, v in props.items()) + "}"


BUILTIN_TOOLS: dict[str, ToolSpec] = {t.name: t for t in (GRAPH_QUERY, TEXT_COMPLETION, KNOWLEDGE_QUERY)}


def trustgraph_catalogue(prompts: dict[str, str], mcp_tools: dict[str, str]) -> dict[str, ToolSpec]:
    """The tools in TrustGraph mode: graph-rag, text-completion, TrustGraph's prompt templates and MCP tools."""
    tools = {KNOWLEDGE_QUERY.name: KNOWLEDGE_QUERY, TEXT_COMPLETION.name: TEXT_COMPLETION}
    if prompts:
        tools["Prompt"] = prompt_tool(prompts)
    if mcp_tools:
        tools["McpTool"] = mcp_tool({name: (text, {"type": "object"}) for name, text in mcp_tools.items()})
    return tools
