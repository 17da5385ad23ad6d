"""Tool activities: one activity per tool, each returning its output and an evidence-based confidence."""

from __future__ import annotations

import time

from temporalio import activity

from activities.graph_store import GraphQueryError, GraphStore
from activities.llm_client import LLMClient
from confidence_core.activity_io import StepInput, StepOutput
from confidence_core.confidence import graph_result_confidence, text_result_confidence
from confidence_core.cypher_text import query_literals
from confidence_core.memory import format_context
from confidence_core.prompts import PromptTemplates

MAX_LITERAL_CHECKS = 6


def _elapsed_ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


class ToolActivities:
    def __init__(self, llm: LLMClient, graph: GraphStore, prompts: PromptTemplates, max_rows: int = 200) -> None:
        self.llm = llm
        self.graph = graph
        self.prompts = prompts
        self.max_rows = max_rows

    @activity.defn(name="GraphQuery")
    async def graph_query(self, request: StepInput) -> StepOutput:
        started = time.monotonic()
        query = request.step.arguments.get("query", "")
        try:
            rows = await self.graph.ro_query(
                query, timeout_ms=request.step.timeout_ms, max_rows=self.max_rows
            )
        except GraphQueryError as exc:
            # The query's own fault (syntax, a write, an unknown function): no transport retry helps.
            error = str(exc)
            return StepOutput(
                success=False,
                output=f"Query rejected by the graph: {error}",
                confidence=graph_result_confidence(0, error, False, request.retry_count),
                execution_time_ms=_elapsed_ms(started),
                error=error,
            )
        literals = [(value, mode, await self.graph.value_exists(value, mode))
                    for value, mode in query_literals(query)[:MAX_LITERAL_CHECKS]]
        return StepOutput(
            success=True,
            output=rows.to_json(),
            confidence=graph_result_confidence(rows.total_rows, None, rows.truncated, request.retry_count,
                                               literals),
            execution_time_ms=_elapsed_ms(started),
        )

    @activity.defn(name="TextCompletion")
    async def text_completion(self, request: StepInput) -> StepOutput:
        started = time.monotonic()
        context = format_context(request.context)
        completion = await self.llm.chat([
            {"role": "system", "content": self.prompts.render("text_completion_system")},
            {"role": "user", "content": self.prompts.render(
                "text_completion_user", prompt=request.step.arguments.get("prompt", ""), context=context)},
        ])
        evidence = "\n".join(request.context.values())
        return StepOutput(
            success=bool(completion.text.strip()),
            output=completion.text,
            confidence=text_result_confidence(completion.text, evidence, request.retry_count),
            execution_time_ms=_elapsed_ms(started),
        )
