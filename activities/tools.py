"""Tool activities: one activity per tool, each returning its output and an evidence-based confidence.

Transport failures raise (Temporal retries them with the step's RetryPolicy); a result the tool itself
judged bad comes back with success=False or a low score, for the workflow's confidence ladder.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.cache import ResultCache
from activities.graph_store import GraphQueryError, GraphStore
from activities.llm_client import ChatModel
from activities.mcp_client import McpTools
from activities.trustgraph import TrustGraphServices
from confidence_core.activity_io import StepInput, StepOutput
from confidence_core.confidence import (
    graph_rag_confidence,
    graph_result_confidence,
    knowledge_confidence,
    mcp_result_confidence,
    text_result_confidence,
)
from confidence_core.cypher_text import query_literals
from confidence_core.knowledge import describe_node, entity_terms
from confidence_core.memory import format_context
from confidence_core.prompts import PromptTemplates

MAX_LITERAL_CHECKS = 6
ENTITIES_PER_TERM = 3
NEIGHBOURS = 60


def _elapsed_ms(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


class ToolActivities:
    def __init__(self, llm: ChatModel, graph: GraphStore | None, prompts: PromptTemplates,
                 mcp: McpTools | None = None, cache: ResultCache | None = None, max_rows: int = 200,
                 trustgraph: TrustGraphServices | None = None) -> None:
        """With `trustgraph`, KnowledgeQuery, Prompt and McpTool call TrustGraph's services instead."""
        self.llm = llm
        self.graph = graph
        self.prompts = prompts
        self.mcp = mcp
        self.trustgraph = trustgraph
        self.cache = cache or ResultCache(0)
        self.max_rows = max_rows

    async def _cached(self, request: StepInput, compute: Callable[[], Awaitable[StepOutput]]) -> StepOutput:
        hit = self.cache.get(request)
        if hit is not None:
            return hit
        started = time.monotonic()
        output = await compute()
        output.execution_time_ms = _elapsed_ms(started)
        self.cache.put(request, output)
        return output

    def all(self) -> list[Callable[..., Awaitable[StepOutput]]]:
        return [self.graph_query, self.text_completion, self.knowledge_query, self.prompt, self.mcp_tool]

    # -- GraphQuery ------------------------------------------------------------------------------

    @activity.defn(name="GraphQuery")
    async def graph_query(self, request: StepInput) -> StepOutput:
        return await self._cached(request, lambda: self._graph_query(request))

    async def _graph_query(self, request: StepInput) -> StepOutput:
        query = request.step.arguments.get("query", "")
        if self.graph is None:
            raise ApplicationError("GraphQuery needs a local graph; this worker uses TrustGraph's (KnowledgeQuery)",
                                   type="ToolUnavailable", non_retryable=True)
        try:
            rows = await self.graph.ro_query(query, timeout_ms=request.step.timeout_ms, max_rows=self.max_rows)
        except GraphQueryError as exc:
            # The query's own fault (syntax, a write, an unknown function): no transport retry helps.
            error = str(exc)
            return StepOutput(success=False, output=f"Query rejected by the graph: {error}", error=error,
                              confidence=graph_result_confidence(0, error, False, request.retry_count))
        literals = [(value, mode, await self.graph.value_exists(value, mode))
                    for value, mode in query_literals(query)[:MAX_LITERAL_CHECKS]]
        return StepOutput(
            success=True, output=rows.to_json(),
            confidence=graph_result_confidence(rows.total_rows, None, rows.truncated, request.retry_count, literals),
        )

    # -- TextCompletion and Prompt ---------------------------------------------------------------

    @activity.defn(name="TextCompletion")
    async def text_completion(self, request: StepInput) -> StepOutput:
        return await self._cached(request, lambda: self._complete(
            request, self.prompts.render("text_completion_user", prompt=request.step.arguments.get("prompt", ""),
                                         context=format_context(request.context)),
            system=self.prompts.render("text_completion_system")))

    @activity.defn(name="Prompt")
    async def prompt(self, request: StepInput) -> StepOutput:
        name = request.step.arguments.get("template", "")
        if self.trustgraph is not None:
            return await self._cached(request, lambda: self._trustgraph_prompt(request, name))
        if name not in self.prompts.tool_templates():
            known = ", ".join(self.prompts.tool_templates())
            return StepOutput(success=False, output=f"unknown template {name!r}; known: {known}", error="template",
                              confidence=text_result_confidence("", "", request.retry_count))
        text = self.prompts.render(PromptTemplates.TOOL_PREFIX + name, input=request.step.arguments.get("input", ""),
                                   context=format_context(request.context))
        return await self._cached(request, lambda: self._complete(request, text))

    async def _trustgraph_prompt(self, request: StepInput, template: str) -> StepOutput:
        assert self.trustgraph is not None
        text = await self.trustgraph.prompt(template, {"input": request.step.arguments.get("input", ""),
                                                       "context": format_context(request.context)})
        evidence = "\n".join(request.context.values())
        return StepOutput(success=bool(text.strip()), output=text,
                          confidence=text_result_confidence(text, evidence, request.retry_count))

    async def _complete(self, request: StepInput, prompt: str, system: str | None = None) -> StepOutput:
        messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": prompt}]
        completion = await self.llm.chat(messages)
        evidence = "\n".join(request.context.values())
        return StepOutput(success=bool(completion.text.strip()), output=completion.text,
                          confidence=text_result_confidence(completion.text, evidence, request.retry_count))

    # -- KnowledgeQuery (graph RAG) --------------------------------------------------------------

    @activity.defn(name="KnowledgeQuery")
    async def knowledge_query(self, request: StepInput) -> StepOutput:
        return await self._cached(request, lambda: self._knowledge_query(request))

    async def _knowledge_query(self, request: StepInput) -> StepOutput:
        question = request.step.arguments.get("question") or request.question
        if self.trustgraph is not None:
            rag = await self.trustgraph.graph_rag(question)
            return StepOutput(success=bool(rag.text.strip()), output=rag.text,
                              confidence=graph_rag_confidence(rag.text, rag.sources, rag.explained,
                                                              request.retry_count))
        assert self.graph is not None
        ids: list[int] = []
        facts: list[str] = []
        for term in entity_terms(question):
            found = await self.graph.ro_query(
                "MATCH (n) WHERE any(k IN keys(n) WHERE toLower(toString(n[k])) CONTAINS toLower($term)) "
                f"RETURN id(n), labels(n), properties(n) LIMIT {ENTITIES_PER_TERM}", {"term": term})
            for node_id, labels, props in found.rows:
                if node_id not in ids:
                    ids.append(node_id)
                    facts.append(describe_node(labels, props))
        if ids:
            around = await self.graph.ro_query(
                "MATCH (n)-[r]-(m) WHERE id(n) IN $ids "
                "RETURN labels(n), properties(n), type(r), startNode(r) = n, labels(m), properties(m) "
                f"LIMIT {NEIGHBOURS}", {"ids": ids})
            for n_labels, n_props, rel, outgoing, m_labels, m_props in around.rows:
                arrow = f"-[:{rel}]->" if outgoing else f"<-[:{rel}]-"
                facts.append(f"{describe_node(n_labels, n_props, 2)} {arrow} {describe_node(m_labels, m_props)}")
        facts_text = "\n".join(facts) or "(no matching entities)"
        if not ids:
            return StepOutput(success=True, output="No entity named in the question was found in the graph.",
                              confidence=knowledge_confidence(0, "", "", request.retry_count))
        completion = await self.llm.chat([
            {"role": "system", "content": self.prompts.render("knowledge_system")},
            {"role": "user", "content": self.prompts.render("knowledge_user", question=question, facts=facts_text)},
        ])
        return StepOutput(success=bool(completion.text.strip()),
                          output=f"{completion.text}\n\nFacts used:\n{facts_text}",
                          confidence=knowledge_confidence(len(ids), completion.text, facts_text, request.retry_count))

    # -- McpTool ---------------------------------------------------------------------------------

    @activity.defn(name="McpTool")
    async def mcp_tool(self, request: StepInput) -> StepOutput:
        return await self._cached(request, lambda: self._mcp_tool(request))

    async def _mcp_tool(self, request: StepInput) -> StepOutput:
        name = request.step.arguments.get("tool", "")
        if self.trustgraph is not None:
            text = await self.trustgraph.mcp_tool(name, json.loads(request.step.arguments.get("arguments") or "{}"))
            return StepOutput(success=bool(text.strip()), output=text,
                              confidence=mcp_result_confidence(False, text, None, None, request.retry_count))
        if self.mcp is None:
            return StepOutput(success=False, output="no MCP servers are configured", error="mcp",
                              confidence=mcp_result_confidence(True, "no MCP servers", None, None, request.retry_count))
        try:
            arguments = json.loads(request.step.arguments.get("arguments") or "{}")
        except json.JSONDecodeError as exc:
            return StepOutput(success=False, output=f"arguments are not JSON: {exc}", error="arguments",
                              confidence=mcp_result_confidence(True, str(exc), None, None, request.retry_count))
        result = await self.mcp.call(name, arguments, timeout_s=request.step.timeout_ms / 1000)
        return StepOutput(success=not result.is_error, output=result.text,
                          error=result.text if result.is_error else None,
                          confidence=mcp_result_confidence(result.is_error, result.text, result.structured,
                                                           result.output_schema, request.retry_count))
