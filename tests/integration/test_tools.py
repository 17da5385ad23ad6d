"""The tool activities against real parts: the demo MCP server (stdio and streamable HTTP), FalkorDB
with the demo graph, and the scripted LLM over HTTP."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from activities.planning import PlanningActivities
from backends.mcp import McpTools
from contracts.payload_limits import STEP_OUTPUT_BYTES
from contracts.plan import ExecutionStep
from contracts.query_path import PlanningInput, StepInput
from contracts.run import AgentSettings
from embedded.processes import ManagedProcess, free_port, tcp_open
from planning.plan_parser import PlanParseError, parse_plan
from service.config import McpServerConfig, demo_mcp_server
from tests.scripted_llm import ScriptedLLM
from tests.tool_calls import ToolCalls, local_backends
from tools import registry
from tools.cache import ResultCache


def step_input(
    function: str, question: str = "q", retry: int = 0, context: dict[str, str] | None = None, **arguments: str
) -> StepInput:
    return StepInput(
        question=question,
        step=ExecutionStep(id="s1", function=function, arguments=arguments),
        context=context or {},
        retry_count=retry,
    )


@pytest_asyncio.fixture(scope="module")
async def http_mcp_server(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[str]:
    port = free_port()
    part = ManagedProcess(
        "MCP demo server",
        [sys.executable, "-m", "embedded.mcp_demo_server", "--transport", "streamable-http", "--port", str(port)],
        tmp_path_factory.mktemp("mcp") / "mcp.log",
        ports={"http": port},
        ready=lambda p: tcp_open(port),
    )
    part.start()
    await part.wait_ready(30)
    yield f"http://127.0.0.1:{port}/mcp"
    part.stop()


@pytest.fixture
def echo_llm() -> Any:
    """Answers by repeating the first line of facts/context it was given (a perfectly grounded model)."""

    def respond(body: dict[str, Any]) -> tuple[int, str]:
        content = body["messages"][-1]["content"]
        if "Facts:" in content:
            return 200, content.split("Facts:", 1)[1].strip().splitlines()[0]
        return 200, f"Summary: {content.strip().splitlines()[-1]}"

    with ScriptedLLM(respond) as server:
        yield server


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_mcp_tools_are_discovered_and_called(transport: str, http_mcp_server: str) -> None:
    server = (
        demo_mcp_server()
        if transport == "stdio"
        else McpServerConfig(name="demo", transport="http", url=http_mcp_server)
    )
    backends = local_backends(mcp=McpTools([server]))
    tools = ToolCalls(backends)
    listed = await backends.mcp.list_tools()
    assert {"convert_currency", "business_days_between"} <= set(listed)
    assert listed["convert_currency"].input_schema["required"] == ["amount", "from_currency", "to_currency"]

    ok = await tools.McpTool(
        step_input(
            "McpTool",
            tool="convert_currency",
            arguments=json.dumps({"amount": 100, "from_currency": "EUR", "to_currency": "USD"}),
        )
    )
    assert ok.success and json.loads(ok.output)["converted"] == 108.0
    assert ok.confidence.score == 0.9 and "valid against the tool's declared schema" in ok.confidence.reasoning

    bad = await tools.McpTool(
        step_input(
            "McpTool",
            tool="convert_currency",
            arguments=json.dumps({"amount": 1, "from_currency": "XXX", "to_currency": "USD"}),
        )
    )
    assert not bad.success and bad.confidence.score == 0.1 and "unknown currency 'XXX'" in bad.output


async def test_an_unreachable_mcp_server_is_left_out_of_the_catalogue() -> None:
    dead = McpServerConfig(name="dead", transport="http", url=f"http://127.0.0.1:{free_port()}/mcp")
    mcp = McpTools([dead, demo_mcp_server()])
    assert "convert_currency" in await mcp.list_tools()


async def test_planner_offers_the_discovered_mcp_tools_and_prompt_templates(falkordb_url: str) -> None:
    plan = {
        "steps": [
            {
                "id": "s1",
                "function": "McpTool",
                "dependencies": [],
                "arguments": {
                    "tool": "business_days_between",
                    "arguments": {"start": "2024-03-01", "end": "2024-03-15"},
                },
            }
        ]
    }
    with ScriptedLLM(lambda body: (200, json.dumps(plan))) as llm:
        planning = PlanningActivities(local_backends(llm.base_url, falkordb_url, mcp=McpTools([demo_mcp_server()])))
        out = await planning.plan(
            PlanningInput(
                question="How many business days in the first half of March 2024?",
                plan_id="p",
                settings=AgentSettings(),
            )
        )
    assert out.plan is not None and out.plan.steps[0].confidence_threshold == 0.6  # McpTool default
    prompt = llm.requests[0]["messages"][0]["content"]
    assert "business_days_between" in prompt and "Prompt:" in prompt and "summarize:" in prompt
    enum = json.dumps(llm.requests[0]["response_format"])
    assert '"convert_currency"' in enum and '"summarize"' in enum


async def test_mcp_arguments_are_checked_against_the_tools_input_schema() -> None:
    planning = PlanningActivities(local_backends(mcp=McpTools([demo_mcp_server()])))
    tools = await planning.catalogue()
    for arguments, problem in (
        ({"tool": "teleport", "arguments": "{}"}, "unknown tool 'teleport'"),
        ({"tool": "convert_currency", "arguments": '{"amount": "ten"}'}, "'ten' is not of type 'number'"),
    ):
        text = json.dumps({"steps": [{"id": "s1", "function": "McpTool", "arguments": arguments, "dependencies": []}]})
        with pytest.raises(PlanParseError, match=problem):
            parse_plan(text, plan_id="p", tools=tools, settings=AgentSettings())


async def test_knowledge_query_answers_from_the_entities_neighbourhood(falkordb_url: str, echo_llm: Any) -> None:
    tools = ToolCalls(local_backends(echo_llm.base_url, falkordb_url))
    found = await tools.KnowledgeQuery(step_input("KnowledgeQuery", question="Where is Acme Industrial based?"))
    assert found.success and "name: Acme Industrial" in found.output and "-[:ISSUED_TO]-" in found.output
    assert found.confidence.score >= 0.9 and "entities found" in found.confidence.reasoning

    missing = await tools.KnowledgeQuery(step_input("KnowledgeQuery", question="Where is Zorblax Corp based?"))
    assert missing.confidence.score == 0.2 and "were found" in missing.confidence.reasoning


async def test_prompt_tool_applies_a_named_template_and_rejects_unknown_ones(echo_llm: Any) -> None:
    tools = ToolCalls(local_backends(echo_llm.base_url))
    out = await tools.Prompt(
        step_input("Prompt", template="summarize", input="the orders", context={"s0": "Acme Industrial has 135 orders"})
    )
    assert out.success and "Acme Industrial has 135 orders" in echo_llm.requests[-1]["messages"][-1]["content"]
    unknown = await tools.Prompt(step_input("Prompt", template="poem", input="x"))
    assert not unknown.success and "unknown template 'poem'" in unknown.output


async def test_results_are_cached_by_tool_and_arguments_but_retries_run_again(echo_llm: Any, tmp_path: Path) -> None:
    [text_completion] = [
        a for a in registry.activities(local_backends(echo_llm.base_url), ["TextCompletion"], ResultCache(ttl_s=300))
    ]
    request = step_input("TextCompletion", prompt="Say something about Acme")
    first = await text_completion(request)
    again = await text_completion(request)
    assert again.output == first.output and len(echo_llm.requests) == 1
    await text_completion(step_input("TextCompletion", prompt="Say something else"))
    await text_completion(step_input("TextCompletion", retry=1, prompt="Say something about Acme"))
    assert len(echo_llm.requests) == 3


async def test_a_result_too_large_for_the_history_is_trimmed_and_its_confidence_says_so() -> None:
    # A server that ignores max_tokens and sends 200 KB (two bytes a character): the step's result must stay
    # far below Temporal's 256 KB payload warning, since the synthesis input carries every step's result.
    with ScriptedLLM(lambda body: (200, "é" * 100_000)) as llm:
        [text_completion] = registry.activities(local_backends(llm.base_url), ["TextCompletion"])
        out = await text_completion(step_input("TextCompletion", prompt="Write everything you know"))
    assert len(out.output.encode("utf-8")) <= STEP_OUTPUT_BYTES
    assert out.output.startswith("éé") and out.output.endswith("bytes kept]")
    assert "output trimmed to 16 KiB" in out.confidence.reasoning
