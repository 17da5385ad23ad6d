"""Planning activity: question + tools + live graph schema -> validated ExecutionPlan (one repair try)."""

from __future__ import annotations

import structlog
from temporalio import activity

from activities.graph_store import GraphStore
from activities.llm_client import LLMClient
from confidence_core.activity_io import PlanningInput, PlanningOutput
from confidence_core.plan_parser import PlanParseError, parse_plan, plan_json_schema
from confidence_core.prompts import PromptTemplates
from confidence_core.tools import BUILTIN_TOOLS, ToolSpec

log = structlog.get_logger(__name__)


def describe_tools(tools: dict[str, ToolSpec]) -> str:
    lines = []
    for tool in tools.values():
        args = ", ".join(f'"{a.name}": {a.description}' for a in tool.arguments)
        lines.append(f"- {tool.name}: {tool.description} Arguments: {{{args}}}")
    return "\n".join(lines)


class PlanningActivities:
    def __init__(self, llm: LLMClient, graph: GraphStore, prompts: PromptTemplates,
                 tools: dict[str, ToolSpec] | None = None) -> None:
        self.llm = llm
        self.graph = graph
        self.prompts = prompts
        self.tools = tools or BUILTIN_TOOLS

    @activity.defn(name="plan")
    async def plan(self, request: PlanningInput) -> PlanningOutput:
        schema_text = await self.graph.describe_schema()
        system = self.prompts.render(
            "planner_system", tools=describe_tools(self.tools), graph_schema=schema_text
        )
        messages = [
            {"role": "system", "content": system},
            {"role": "user", "content": self.prompts.render("planner_user", question=request.question)},
        ]
        json_schema = plan_json_schema(self.tools, request.settings.max_steps)
        problems: list[str] = []
        for attempt in (1, 2):
            completion = await self.llm.chat(messages, json_schema=json_schema, max_tokens=768)
            try:
                plan = parse_plan(completion.text, plan_id=request.plan_id, tools=self.tools,
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
