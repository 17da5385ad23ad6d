"""TrustGraph's agent configuration honoured as TrustGraph 2.11.1's agent honours it (orchestrator/service.py,
plan_pattern.py, react/tools.py), read by the worker from the config service stand-in of test_trustgraph_config.py
and served by TrustGraph's services scripted in TrustGraph's own schema classes (scripted_trustgraph.py):

- a knowledge-query tool searches its own `collection` (or `default`), never the request's;
- a tool-service tool is called on its service's queues with its config values; the types whose services this
  service does not call (structured-query, row-embeddings-query) and unknown types are refused by name;
- the workspace's own `plan-create` and `plan-synthesise` templates (those that differ from TrustGraph's
  defaults, the `__template__` workspace's) plan and answer, with the variables TrustGraph passes; the defaults
  leave this service's own prompts in place."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest_asyncio
from structlog.testing import capture_logs
from trustgraph.schema import AgentRequest as TgAgentRequest
from trustgraph.schema import PromptResponse

from backends.trustgraph_config import TEMPLATE_WORKSPACE
from contracts.wire import AgentRequest
from embedded.processes import free_port
from tests.attacks.test_open_by_default import send
from tests.contract.scripted_trustgraph import RAG_ANSWER, ScriptedTrustGraph
from tests.contract.test_trustgraph_config import FETCHES, ConfigService, config_service  # noqa: F401 (a fixture)
from tests.contract.test_trustgraph_contract import tg_agent  # noqa: F401 (a fixture)
from tests.contract.test_trustgraph_request_fields import dialog
from tests.integration.test_action_path import pending_status

QUESTION = "Where is Acme Industrial based?"


def knowledge_plan(**arguments: str) -> str:
    return json.dumps(
        {
            "steps": [
                {
                    "id": "s1",
                    "function": "KnowledgeQuery",
                    "dependencies": [],
                    "arguments": {"question": QUESTION, **arguments},
                }
            ]
        }
    )


def planner_calls(services: ScriptedTrustGraph) -> list[Any]:
    return [r for r in services.seen["text-completion"] if r.schema]


@pytest_asyncio.fixture
async def trustgraph(make_stack, config_service: ConfigService, unique: str) -> AsyncIterator[Any]:  # noqa: F811
    """start(plan, config, **services) -> (stack, scripted services): a stack in TrustGraph mode whose worker has
    read `config` (type -> key -> entry) for its workspace."""
    started: list[ScriptedTrustGraph] = []

    async def start(plan: str, config: dict[str, dict[str, Any]], **services: Any) -> tuple[Any, ScriptedTrustGraph]:
        workspace = f"test-{unique}"  # make_stack's: the worker reads its config as it starts
        config_service.values[workspace] = {
            kind: {k: json.dumps(v) for k, v in entries.items()} for kind, entries in config.items()
        }
        stack = await make_stack(
            f"http://127.0.0.1:{free_port()}/v1",
            tool_backend="trustgraph",
            override_enabled=True,
            override_timeout_s=120,
        )
        assert stack.config.workspace == workspace
        scripted = ScriptedTrustGraph(stack.config.pulsar_url, workspace, plan, **services)
        await scripted.start()
        started.append(scripted)
        await config_service.fetched(FETCHES)
        await asyncio.sleep(0.2)  # the fetched values are applied right after the last answer
        return stack, scripted

    yield start
    for scripted in started:
        await scripted.stop()


async def test_a_knowledge_query_searches_its_tools_collection_not_the_requests(
    trustgraph,
    tg_agent,  # noqa: F811
    config_service: ConfigService,  # noqa: F811
) -> None:
    """Two knowledge-query tools of two collections: the planner names one (`tool`), and graph-rag searches its
    collection. One tool: its collection, named or not. Never the request's own collection."""
    research = {
        "type": "knowledge-query",
        "name": "kq-research",
        "description": "Research papers",
        "collection": "research",
    }
    everything = {"type": "knowledge-query", "name": "kq-all", "description": "Everything else"}  # no collection
    stack, services = await trustgraph(
        knowledge_plan(tool="kq-research"), {"tool": {"kq-research": research, "kq-all": everything}}
    )
    agent = await tg_agent(stack)
    chosen = await dialog(agent, TgAgentRequest(question=QUESTION, collection="elsewhere"))
    services.plan = knowledge_plan()
    await config_service.put(stack.config.workspace, "tool", {"kq-research": research})
    await config_service.fetched(2 * FETCHES)
    await asyncio.sleep(0.2)
    only = await dialog(agent, TgAgentRequest(question=QUESTION, collection="elsewhere"))
    assert chosen[-1].message_type == "answer" and only[-1].message_type == "answer", [r.content for r in chosen + only]
    assert [r.collection for r in services.seen["graph-rag"]] == ["research", "research"]
    first, second = planner_calls(services)
    assert "Knowledge tools: kq-research (Research papers); kq-all (Everything else)" in first.system
    [knowledge] = [
        b
        for b in first.schema["properties"]["steps"]["items"]["anyOf"]
        if b["properties"]["function"]["enum"] == ["KnowledgeQuery"]
    ]
    assert knowledge["properties"]["arguments"]["properties"]["tool"]["enum"] == ["kq-all", "kq-research"]
    assert "Knowledge tools" not in second.system  # one collection: nothing to choose


async def test_a_tool_service_tool_is_called_and_unservable_types_are_refused_by_name(trustgraph, unique: str) -> None:
    joke_queue = f"joke-{unique}"
    joke = {
        "type": "tool-service",
        "name": "tell-joke",
        "description": "Tell a joke about a topic",
        "service": "joke-service",
        "style": "dry",
        "arguments": [{"name": "topic", "type": "string", "description": "what the joke is about"}],
    }
    service = {
        "id": "joke-service",
        "request-queue": f"request:tg:{joke_queue}",
        "response-queue": f"response:tg:{joke_queue}",
        "config-params": [{"name": "style", "required": True}],
    }
    refused = {
        "sales-table": {"type": "structured-query", "name": "sales-table", "description": "Sales rows"},
        "sales-search": {
            "type": "row-embeddings-query",
            "name": "sales-search",
            "description": "Sales",
            "schema-name": "sales",
        },
        "graph-walk": {"type": "graph-walk", "name": "graph-walk", "description": "Walk the graph"},
    }
    plan = json.dumps(
        {
            "steps": [
                {
                    "id": "s1",
                    "function": "ToolService",
                    "dependencies": [],
                    "arguments": {"tool": "tell-joke", "arguments": {"topic": "suppliers"}},
                }
            ]
        }
    )
    with capture_logs() as logs:
        stack, services = await trustgraph(
            plan,
            {"tool": {"tell-joke": joke, **refused}, "tool-service": {"joke-service": service}},
            tool_service_queue=joke_queue,
            tool_service_reply="Acme Industrial jokes.",
        )
    request_id = f"joke-{unique}"
    asking = asyncio.create_task(
        send(stack, AgentRequest(question="Tell me a joke about suppliers", user="ana"), request_id)
    )
    pending = await pending_status(stack, f"agent-{request_id}", asking)
    called_before = len(services.seen["tool-service"])
    await send(
        stack, AgentRequest(question="s1 accept", state="override", correlation_id=f"agent-{request_id}", user="ops")
    )
    messages = await asyncio.wait_for(asking, 120)
    assert pending.pending_override is not None and "tell-joke" in pending.pending_override.reasoning
    assert called_before == 0  # nothing called before a human approved it
    [call] = services.seen["tool-service"]
    assert (json.loads(call.config), json.loads(call.arguments)) == ({"style": "dry"}, {"topic": "suppliers"})
    assert any("Acme Industrial jokes." in m.content for m in messages) and messages[-1].message_type == "answer"
    [planned] = planner_calls(services)
    assert "tell-joke (Tell a joke about a topic) input {topic: string}" in planned.system
    assert not any(name in planned.system for name in refused)
    said = {e["tool"]: e for e in logs if e["event"] == "trustgraph_tool_refused"}
    assert sorted(said) == sorted(refused) and all(e["log_level"] == "error" for e in said.values())
    assert "structured-query service" in said["sales-table"]["reason"]
    assert "row-embeddings-query" in said["sales-search"]["reason"]
    assert "knows no tool type 'graph-walk'" in said["graph-walk"]["reason"]


def template(text: str, response_type: str = "text") -> dict[str, Any]:
    return {"prompt": text, "response-type": response_type}


DEFAULTS = {
    "template.plan-create": template("Plan {{question}} with {{tools}}", "jsonl"),
    "template.plan-synthesise": template("Answer {{question}} from {{steps}}"),
    "template.agent-react": template("Think about {{question}}"),
}
OWN = {
    **DEFAULTS,
    "template.plan-create": template("Plan for auditors: {{question}} {{framing}}", "jsonl"),
    "template.plan-synthesise": template("Answer briefly: {{question}} {{steps}}"),
}
GOAL = "Find the country Acme Industrial is based in"
TEMPLATE_ANSWER = "Acme Industrial is in Mexico."


def scripted_prompts() -> dict[str, Any]:
    return {
        "plan-create": lambda terms: PromptResponse(
            object=json.dumps([{"goal": GOAL, "tool_hint": "KnowledgeQuery", "depends_on": []}]),
            end_of_stream=True,
            in_token=11,
            out_token=3,
            model="tg-llm",
        ),
        "plan-synthesise": lambda terms: PromptResponse(
            text=TEMPLATE_ANSWER, end_of_stream=True, in_token=13, out_token=4, model="tg-llm"
        ),
    }


async def test_the_workspaces_own_plan_templates_plan_and_answer_and_its_defaults_do_not(
    trustgraph,
    tg_agent,  # noqa: F811
    config_service: ConfigService,  # noqa: F811
) -> None:
    config_service.values[TEMPLATE_WORKSPACE] = {"prompt": {k: json.dumps(v) for k, v in DEFAULTS.items()}}
    with capture_logs() as logs:
        stack, services = await trustgraph(knowledge_plan(), {"prompt": OWN}, prompts=scripted_prompts())
    agent = await tg_agent(stack)
    own = await dialog(agent, TgAgentRequest(question=QUESTION, framing="Answer for auditors."))
    completions = len(services.seen["text-completion"])
    await config_service.put(stack.config.workspace, "prompt", DEFAULTS)  # back to TrustGraph's defaults
    await config_service.fetched(2 * FETCHES)
    await asyncio.sleep(0.2)
    default = await dialog(agent, TgAgentRequest(question=QUESTION, framing="Answer for auditors."))
    assert own[-1].message_type == "answer" and default[-1].message_type == "answer", [r.content for r in own]
    create, synthesise = services.seen["prompt"]  # the defaults asked nothing of the prompt service
    assert (create.id, synthesise.id) == ("plan-create", "plan-synthesise")
    create_terms = {k: json.loads(v) for k, v in create.terms.items()}
    assert (create_terms["question"], create_terms["framing"]) == (QUESTION, "Answer for auditors.")
    assert "KnowledgeQuery" in [t["name"] for t in create_terms["tools"]]
    assert all(set(t) == {"name", "description"} for t in create_terms["tools"])
    # The template's steps reach the planner, which writes them as tool steps.
    first_plan, second_plan = planner_calls(services)
    assert GOAL in first_plan.prompt and GOAL not in second_plan.prompt
    synthesise_terms = {k: json.loads(v) for k, v in synthesise.terms.items()}
    assert synthesise_terms["question"] == QUESTION
    assert synthesise_terms["steps"] == [{"index": 0, "goal": "KnowledgeQuery (s1)", "result": RAG_ANSWER}]
    assert own[-1].content.startswith(TEMPLATE_ANSWER)
    assert not default[-1].content.startswith(TEMPLATE_ANSWER)  # this service's own synthesis wrote it
    # The template calls count in the run's usage (11 + 13 in, 3 + 4 out) beside its text-completion calls.
    assert (own[-1].in_token, own[-1].out_token) == (5 * completions + 24, 7 * completions + 7)
    loaded = [e for e in logs if e["event"] == "trustgraph_config_loaded"]
    assert loaded[-1]["customised_prompts"] == ["plan-create", "plan-synthesise"]
