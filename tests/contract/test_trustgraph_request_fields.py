"""TrustGraph's AgentRequest fields beyond the question, sent with TrustGraph's own client classes
(trustgraph-base 2.11.1) to the bridge on the broker: `group` chooses the tools the planner is offered, as
TrustGraph's agent filters its tools, and `framing` reaches the planner; `collection` does not choose what
TrustGraph's graph-RAG searches, as in TrustGraph."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from trustgraph.schema import AgentRequest as TgAgentRequest

from embedded.processes import free_port
from tests.contract.test_trustgraph_contract import answers, tg_agent  # noqa: F401 (a fixture)
from tests.integration.test_trustgraph_mode import GRAPH_RAG_ANSWER, trustgraph_stand_in
from tests.scripted_llm import ScriptedLLM, is_planning
from tools.registry import all_tools

QUESTION = "Which supplier has the most purchase orders?"


async def dialog(agent: Any, request: TgAgentRequest) -> list[Any]:
    """Every response to one request, up to the end of the dialog."""
    received = []
    async for response in agent._rr_client.request_stream(request, timeout=60):
        received.append(response)
        if response.end_of_dialog:
            return received
    return received


def planner_tools(body: dict[str, Any]) -> set[str]:
    """The tools the planner's system prompt lists (`- Name: ...`)."""
    listed = re.findall(r"^- (\w+): ", body["messages"][0]["content"], re.MULTILINE)
    return {name for name in listed if name in all_tools()}


async def test_group_chooses_the_tools_the_planner_is_offered(make_stack, tg_agent) -> None:  # noqa: F811
    """GraphQuery is put in the group `analytics`; the other tools stay in TrustGraph's `default` group. A
    request for `analytics` plans with GraphQuery alone, `*` sees every tool, and a group no tool is in gets an
    error naming it (TrustGraph's agent would have no tool either)."""
    with ScriptedLLM(answers) as llm:
        stack = await make_stack(llm.base_url, service={"tool_groups": {"GraphQuery": ["analytics"]}})
        agent = await tg_agent(stack)
        analytics = await dialog(
            agent, TgAgentRequest(question=QUESTION, group=["analytics"], framing="Answer as a procurement auditor.")
        )
        everything = await dialog(agent, TgAgentRequest(question=QUESTION, group=["*"]))
        await dialog(agent, TgAgentRequest(question=QUESTION))  # its plan names GraphQuery, not offered to it
        asked = len(llm.requests)
        nothing = await dialog(agent, TgAgentRequest(question=QUESTION, group=["finance"]))
        plans = [body for body in llm.requests if is_planning(body)]
        assert len(llm.requests) == asked  # no tool to offer: the planner was not even asked
    assert analytics[-1].message_type == "answer", [r.content for r in analytics]
    assert planner_tools(plans[0]) == {"GraphQuery"}
    # `framing` is told to the planner, after the question (the system prompt stays the same for every request).
    assert "Additional context: Answer as a procurement auditor." in plans[0]["messages"][-1]["content"]
    assert everything[-1].message_type == "answer"
    assert {"GraphQuery", "KnowledgeQuery", "McpTool"} <= planner_tools(plans[1])
    assert "Additional context" not in plans[1]["messages"][-1]["content"]
    assert "GraphQuery" not in planner_tools(plans[2]) and "KnowledgeQuery" in planner_tools(plans[2])
    assert nothing[-1].message_type == "error"
    assert "No tool is offered to this request's group(s) finance" in nothing[-1].error.message


async def test_knowledge_queries_search_the_configured_collection_not_the_requests(
    make_stack,
    tg_agent,  # noqa: F811
    unique: str,
) -> None:
    """As TrustGraph's KnowledgeQuery tool, which searches its own collection whatever the request names: without a
    knowledge-query tool in TrustGraph's config, the configured `trustgraph_collection` is searched (with one, its
    collection: test_trustgraph_agent_config.py)."""
    seen: dict[str, list[dict[str, Any]]] = {"text-completion": [], "graph-rag": [], "prompt": []}
    stack = await make_stack(
        f"http://127.0.0.1:{free_port()}/v1",
        tool_backend="trustgraph",
        override_enabled=False,
        service={"trustgraph_collection": "configured"},
    )
    listening = asyncio.Event()
    stand_in = asyncio.create_task(trustgraph_stand_in(stack.config.pulsar_url, f"test-{unique}", seen, listening))
    await asyncio.wait_for(listening.wait(), 30)
    try:
        agent = await tg_agent(stack)
        research = await dialog(agent, TgAgentRequest(question="Where is Acme Industrial?", collection="research"))
        unnamed = await dialog(agent, TgAgentRequest(question="Where is Acme Industrial?"))
    finally:
        stand_in.cancel()
    assert research[-1].message_type == "answer" and research[-1].content.startswith(GRAPH_RAG_ANSWER)
    assert unnamed[-1].message_type == "answer"
    assert [r["collection"] for r in seen["graph-rag"]] == ["configured", "configured"]
