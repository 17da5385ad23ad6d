"""Planning activity: question + tools + live graph schema -> validated ExecutionPlan (one repair try)."""

from __future__ import annotations

import json

import structlog
from temporalio import activity

from activities.graph_store import GraphStore
from activities.llm_client import ChatModel
from activities.mcp_client import McpTools
from confidence_core.activity_io import AdjustInput, AdjustOutput, PlanningInput, PlanningOutput
from confidence_core.plan_parser import PlanParseError, parse_plan, plan_json_schema
from confidence_core.prompts import PromptTemplates
from confidence_core.tools import BUILTIN_TOOLS, ToolSpec, mcp_tool, prompt_tool

log = structlog.get_logger(__name__)


def describe_tools(tools: dict[str, ToolSpec]) -> str:
    lines = []
    for tool in tools.values():
        args = ", ".join(f'"{a.name}": {a.description}' for a in tool.arguments)
        lines.append(f"- {tool.name}: {tool.description} Arguments: {{{args}}}")
    return "\n".join(lines)


class PlanningActivities:
    def __init__(self, llm: ChatModel, graph: GraphStore | None, prompts: PromptTemplates,
                 mcp: McpTools | None = None, tools: dict[str, ToolSpec] | None = None) -> None:
        """`graph` None: the knowledge graph is TrustGraph's, reached through KnowledgeQuery (graph-rag);
        `tools` replaces the built-in catalogue (TrustGraph mode brings its own)."""
        self.llm = llm
        self.graph = graph
        self.prompts = prompts
        self.mcp = mcp
        self.base_tools = tools or BUILTIN_TOOLS
        self.own_catalogue = tools is not None

    async def catalogue(self) -> dict[str, ToolSpec]:
        """The tools the planner may use now: the built-ins, the Prompt templates, and the MCP tools that
        the connected servers offer at this moment."""
        tools = dict(self.base_tools)
        templates = self.prompts.tool_templates()
        if templates and not self.own_catalogue:
            tools["Prompt"] = prompt_tool(templates)
        if self.mcp is not None:
            found = await self.mcp.list_tools()
            if found:
                tools["McpTool"] = mcp_tool({n: (t.description, t.input_schema) for n, t in found.items()})
        return tools

    async def _schema(self) -> str:
        if self.graph is None:
            return ("(the knowledge graph is TrustGraph's: ask KnowledgeQuery questions in plain language, "
                    "naming the entities they are about)")
        return await self.graph.describe_schema()

    @activity.defn(name="plan")
    async def plan(self, request: PlanningInput) -> PlanningOutput:
        tools = await self.catalogue()
        schema_text = await self._schema()
        system = self.prompts.render(
            "planner_system", tools=describe_tools(tools), graph_schema=schema_text
        )
        messages = [
            {"role": "system", "content": system},
            {"role": "user", "content": self.prompts.render("planner_user", question=request.question)},
        ]
        json_schema = plan_json_schema(tools, request.settings.max_steps)
        problems: list[str] = []
        for attempt in (1, 2):
            completion = await self.llm.chat(messages, json_schema=json_schema, max_tokens=768)
            try:
                plan = parse_plan(completion.text, plan_id=request.plan_id, tools=tools,
                                  settings=request.settings)
                return PlanningOutput(plan=plan, attempts=attempt)
            except PlanParseError as exc:
                problems = exc.problems
                log.warning("plan_rejected", plan_id=request.plan_id, attempt=attempt, problems=problems)
                messages += [
                    {"role": "assistant", "content": completion.text},
                    {"role": "user", "content": self.prompts.render("planner_repair", problems="; ".join(problems))},
                ]
        return PlanningOutput(
            error="Could not make a usable plan for this question: " + "; ".join(problems), attempts=2
        )

    @activity.defn(name="adjust_step")
    async def adjust_step(self, request: AdjustInput) -> AdjustOutput:
        """Retry ladder rungs 2 and 3: the LLM proposes new arguments for the step, given why it was weak."""
        tool = (await self.catalogue()).get(request.step.function)
        if tool is None:
            return AdjustOutput(arguments=request.step.arguments)
        schema_text = ""
        if request.step.function in ("GraphQuery", "KnowledgeQuery"):
            schema_text = "Knowledge graph schema:\n" + await self._schema()
        names = [a.name for a in tool.arguments]
        json_schema = {
            "type": "object",
            "properties": {"arguments": {"type": "object", "properties": {n: {"type": "string"} for n in names},
                                         "required": sorted(tool.required_arguments())}},
            "required": ["arguments"],
        }
        completion = await self.llm.chat([
            {"role": "system", "content": self.prompts.render(
                "adjust_system", tool=tool.name, tool_description=tool.description, graph_schema=schema_text)},
            {"role": "user", "content": self.prompts.render(
                "adjust_user", question=request.question, arguments=json.dumps(request.step.arguments),
                last_output=request.last_output, reasoning=request.reasoning,
                instruction=self.prompts.render(f"adjust_{request.rung}"))},
        ], json_schema=json_schema, max_tokens=512)
        try:
            proposed = json.loads(completion.text)["arguments"]
        except (json.JSONDecodeError, KeyError, TypeError):
            log.warning("adjustment_unusable", step_id=request.step.id, text=completion.text[:200])
            return AdjustOutput(arguments=request.step.arguments)
        arguments = {k: str(v) for k, v in proposed.items() if k in names and str(v).strip()}
        if tool.required_arguments() - arguments.keys():
            return AdjustOutput(arguments=request.step.arguments)
        return AdjustOutput(arguments=arguments)
