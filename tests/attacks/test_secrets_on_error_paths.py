"""Secrets on the paths nobody reads until something breaks: a password in the FalkorDB URL while FalkorDB is
down, an API key in the worker's configuration, a secret pasted into a question, a credential a tool read
from the graph (and a model that repeats whatever it was shown). Each is a canary, searched for in the
exported histories of the run, the caller's messages and error, the chat's server-sent events, GET /runs
and /actions, the logs and the audit file: it appears nowhere (real Temporal, Pulsar, FalkorDB, the bridge
and the chat API; the model scripted). tests/integration/test_secrets.py covers a question's secret on a run
started directly; here everything enters as a caller's request does."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog

from embedded import demo_graph
from embedded.processes import free_port
from service.lifecycle import configure_logging
from tests.chat_server import chat_server, sse_events
from tests.scripted_llm import ScriptedLLM, is_action_planning, is_planning, is_routing, is_synthesis, question_of
from tests.seeded_graph import seeded_graph

PASSWORD = "pw-canary-7f3e9a1c5b"
API_KEY = "sk-canary-config-0123456789abcdef"
IN_QUESTION = "sk-canary-question-9876543210fedcba"
IN_GRAPH = "sk-canary-graph-00112233445566778899"
QUERY = "MATCH (v:Vault) RETURN v.name AS name, v.note AS note"


class EchoingModel:
    """Routes to QUERY, plans one graph query, and answers by repeating everything it was shown."""

    def __call__(self, body: dict[str, Any]) -> tuple[int, str]:
        if is_routing(body):
            return 200, json.dumps({"intent": "QUERY"})
        if is_action_planning(body):
            return 200, "{}"
        if is_planning(body):
            return 200, json.dumps(
                {"steps": [{"id": "s1", "function": "GraphQuery", "dependencies": [], "arguments": {"query": QUERY}}]}
            )
        if is_synthesis(body):
            return 200, "You asked and I saw: " + question_of(body)[-3000:]
        return 200, "ok"


@pytest.fixture
def production_logging() -> Iterator[None]:
    """The services' own log configuration (redaction included) for the test, then pytest's again."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    configure_logging("DEBUG", "json")
    yield
    structlog.reset_defaults()
    root.handlers[:], root.level = handlers, level


async def ask_over_http(stack: Any, question: str) -> dict[str, Any]:
    """The chat's events for one question, the run's view and the action list, as a client reads them."""
    async with chat_server(stack) as server, server.client() as http:
        events: list[dict[str, Any]] = []
        async with http.stream("POST", "/chat/stream", json={"query": question}) as response:
            assert response.status_code == 200
            async for _, event in sse_events(response):
                events.append(event)
                if event["type"] == "done":
                    break
        workflow_id = events[0]["workflow_id"]
        await asyncio.wait_for(stack.client.get_workflow_handle(workflow_id).result(), 120)
        run = await http.get(f"/runs/{workflow_id}")
        actions = await http.get("/actions", params={"run": workflow_id})
    return {"events": events, "run": run.text, "actions": actions.text, "workflow_id": workflow_id}


async def exported_histories(stack: Any) -> str:
    """Every run on the stack's task queue (the request's and its conversation's), as `temporal workflow
    show --output json` exports them."""
    histories = []
    async for execution in stack.client.list_workflows(f'TaskQueue = "{stack.config.queues.workflow}"'):
        history = await stack.client.get_workflow_handle(execution.id, run_id=execution.run_id).fetch_history()
        histories.append(history.to_json())
    assert histories
    return "\n".join(histories)


def audit_file(stack: Any) -> str:
    """The audit trail the run wrote (it must have written one)."""
    return Path(stack.config.audit_path).read_text()


def leaks(canaries: list[str], places: dict[str, str]) -> list[str]:
    return [f"{canary} in {where}" for canary in canaries for where, text in places.items() if canary in text]


async def test_a_password_in_the_falkordb_url_stays_out_of_every_error(
    make_stack, production_logging: None, capfd: pytest.CaptureFixture[str]
) -> None:
    """FalkorDB is unreachable: the run ends with an honest error naming FalkorDB, and neither its password,
    the model's API key nor the question's secret is in any of it."""
    url = f"redis://agent:{PASSWORD}@127.0.0.1:{free_port()}"
    with ScriptedLLM(EchoingModel()) as llm:
        stack = await make_stack(
            llm.base_url,
            ontology_path=str(demo_graph.ONTOLOGY_PATH),
            max_retries=0,
            service={"falkordb_url": url, "llm_api_key": API_KEY},
        )
        seen = await ask_over_http(stack, f"How many purchase orders are there? My token: {IN_QUESTION}")
        histories = await exported_histories(stack)
    error = next((e for e in seen["events"] if e["type"] == "error"), seen["events"])
    assert "FalkorDB at redis://127.0.0.1:" in str(error) and "unreachable" in str(error), error
    assert "FalkorDB at redis://127.0.0.1:" in histories  # the failure is recorded, the URL shown host and port
    logs = capfd.readouterr()
    audit = audit_file(stack)
    assert (
        leaks(
            [PASSWORD, API_KEY, IN_QUESTION],
            {
                "the chat's events": json.dumps(seen["events"]),
                "GET /runs": seen["run"],
                "GET /actions": seen["actions"],
                "the exported histories": histories,
                "the logs": logs.out + logs.err,
                "the audit file": audit,
            },
        )
        == []
    )


async def test_secrets_in_a_question_and_in_a_tools_output_reach_nobody(
    make_stack, falkordb_url: str, unique: str, production_logging: None, capfd: pytest.CaptureFixture[str]
) -> None:
    """The graph holds a credential the query returns, the question carries another, and the model repeats
    all it is shown: the run answers, and neither secret is in its history, its messages, its status, the
    logs or the audit record."""
    async with seeded_graph(
        falkordb_url, f"vault-{unique}", f"CREATE (:Vault {{name: 'Main vault', note: 'opened with {IN_GRAPH}'}})"
    ) as graph:
        with ScriptedLLM(EchoingModel()) as llm:
            stack = await make_stack(
                llm.base_url,
                graph_name=graph,
                max_retries=0,
                confidence_threshold=0.1,
                service={"llm_api_key": API_KEY},
            )
            seen = await ask_over_http(stack, f"What opens the vault? My key is {IN_QUESTION}")
            histories = await exported_histories(stack)
            prompts = json.dumps(llm.requests)
    answer = "".join(e.get("content", "") for e in seen["events"] if e["type"] == "content")
    assert "Main vault" in answer and "[REDACTED]" in answer  # the run answered, from the graph
    logs = capfd.readouterr()
    audit = audit_file(stack)
    assert (
        leaks(
            [IN_QUESTION, IN_GRAPH, API_KEY],
            {
                "the chat's events": json.dumps(seen["events"]),
                "GET /runs": seen["run"],
                "GET /actions": seen["actions"],
                "the exported histories": histories,
                "the logs": logs.out + logs.err,
                "the audit file": audit,
                "the model's prompts": prompts,
            },
        )
        == []
    )
