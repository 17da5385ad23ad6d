"""MCP tools that change things: a tool its own server marks destructive (MCP ToolAnnotations) used to be
called as soon as the planner chose it. Now it is called only once a human approved the call, with its
arguments shown, and without identities or the development flag it is not called at all. A real MCP server
(stdio, official SDK) records every call it receives; Pulsar, Temporal and the tools are real, the model
scripted."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from backends.mcp import McpCallResult, McpToolInfo
from contracts.plan import ExecutionStep
from contracts.query_path import StepInput
from contracts.wire import AgentRequest
from service.config import McpServerConfig
from tests.attacks.test_open_by_default import send, text_of
from tests.integration.test_action_path import pending_status
from tests.scripted_llm import ScriptedLLM, is_planning, is_routing, is_synthesis
from tools.mcp_tool import McpTool

SERVER = """
import os
from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer(name="orders")


@server.tool(description="Cancel a purchase order.",
             annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True))
def cancel_order(po_number: str) -> str:
    with open(os.environ["CALLS_LOG"], "a") as log:
        log.write(po_number + "\\n")
    return f"cancelled {po_number}"


server.run("stdio")
"""
ARGUMENTS = json.dumps({"po_number": "PO-7"})
QUESTION = "Cancel order PO-7"


def model(body: dict[str, Any]) -> tuple[int, str]:
    if is_routing(body):
        return 200, json.dumps({"intent": "QUERY"})
    if is_planning(body):
        return 200, json.dumps(
            {
                "steps": [
                    {
                        "id": "s1",
                        "function": "McpTool",
                        "dependencies": [],
                        "arguments": {"tool": "cancel_order", "arguments": ARGUMENTS},
                    }
                ]
            }
        )
    if is_synthesis(body):
        return 200, "Done as the tools reported."
    return 200, "ok"


def orders_server(tmp_path: Path) -> tuple[McpServerConfig, Path]:
    script, calls = tmp_path / "orders_server.py", tmp_path / "calls.log"
    script.write_text(SERVER)
    calls.touch()
    return McpServerConfig(
        name="orders", transport="stdio", command=[sys.executable, str(script)], env={"CALLS_LOG": str(calls)}
    ), calls


def called(calls: Path) -> list[str]:
    return calls.read_text().split()


async def test_a_destructive_mcp_tool_is_not_called_until_someone_approves_it(
    make_stack, tmp_path: Path, unique: str
) -> None:
    """Asked: nothing called while the run waits, the approval request shows the arguments; skipped (by the
    requester: withdrawing one's own request stays open): never called; the requester's own approval is
    refused; approved by someone else: called exactly once."""
    server, calls = orders_server(tmp_path)
    with ScriptedLLM(model) as llm:
        stack = await make_stack(llm.base_url, mcp_servers=[server], max_retries=0, allow_self_approval=False)
        outcomes = {}
        for decision in ("skip", "accept"):
            request_id = f"mcp-{decision}-{unique}"
            workflow_id = f"agent-{request_id}"
            asking = asyncio.create_task(send(stack, AgentRequest(question=QUESTION, user="ana"), request_id))
            pending = await pending_status(stack, workflow_id, asking)
            before = called(calls)
            own = await send(
                stack, AgentRequest(question=f"s1 {decision}", state="override", correlation_id=workflow_id, user="ana")
            )
            decided = (
                own
                if decision == "skip"
                else await send(
                    stack,
                    AgentRequest(question=f"s1 {decision}", state="override", correlation_id=workflow_id, user="ops"),
                )
            )
            outcomes[decision] = (pending, before, own, decided, await asyncio.wait_for(asking, 300), called(calls))

    pending, before, own, decided, messages, after = outcomes["skip"]
    request = pending.pending_override
    assert request is not None and request.step_id == "s1" and request.role.value == "approve"
    assert request.arguments == {"tool": "cancel_order", "arguments": ARGUMENTS}
    assert "cancel_order (orders) is marked destructive" in request.reasoning
    assert before == [] and after == []
    assert decided[-1].content == "skip recorded for step s1"
    assert any("Step s1 skipped by ana" in m.content for m in messages)

    pending, before, own, decided, messages, after = outcomes["accept"]
    assert before == []
    assert own[-1].message_type == "error" and "may not approve its own request" in text_of(own[-1])
    assert decided[-1].content == "accept recorded for step s1"
    assert any("approved by ops" in m.content for m in messages)
    assert any("cancelled PO-7" in m.content for m in messages)
    assert messages[-1].message_type == "answer"
    assert after == ["PO-7"]  # once, after the approval


async def test_without_identities_or_the_flag_a_destructive_mcp_tool_is_never_called(
    make_stack, tmp_path: Path
) -> None:
    server, calls = orders_server(tmp_path)
    with ScriptedLLM(model) as llm:
        stack = await make_stack(llm.base_url, mcp_servers=[server], max_retries=0, open_actions=False)
        messages = await asyncio.wait_for(send(stack, AgentRequest(question=QUESTION, user="ana")), 300)
    refusal = next(m for m in messages if "was refused before any change" in m.content)
    assert "Calling step s1 (McpTool cancel_order), which may change things," in refusal.content
    assert "TGCA_AGENT__OPEN_ACTIONS=true" in refusal.content
    assert not any(m.message_type == "observation" and "Approval needed" in m.content for m in messages)
    assert called(calls) == []


class FlakyListing:
    """An MCP backend whose first listing misses a destructive tool that a later one offers (a server late
    to answer, a listing that expired between the check and the call), and that records every call."""

    def __init__(self) -> None:
        self.listings, self.calls = 0, []

    async def list_tools(self) -> dict[str, Any]:
        self.listings += 1
        return (
            {}
            if self.listings == 1
            else {
                "cancel_order": McpToolInfo(
                    "orders",
                    "cancel_order",
                    "Cancel a purchase order.",
                    {"type": "object"},
                    None,
                    read_only=False,
                    destructive=True,
                )
            }
        )

    async def call(self, name: str, arguments: dict[str, Any], timeout_s: float) -> Any:
        self.calls.append(name)
        return McpCallResult(is_error=False, text=f"cancelled {arguments}", structured=None, output_schema=None)


async def test_a_tool_missing_from_the_listing_is_not_called_unapproved() -> None:
    mcp = FlakyListing()
    step = ExecutionStep(id="s1", function="McpTool", arguments={"tool": "cancel_order", "arguments": ARGUMENTS})
    out = await McpTool().run(StepInput(question=QUESTION, step=step), SimpleNamespace(mcp=mcp))  # type: ignore[arg-type]
    assert mcp.calls == [] and not out.success
    assert "no connected MCP server offers the tool 'cancel_order'" in out.output
