"""The real process entry points: `tg-confidence-agent` and `tg-confidence-bridge` as child processes,
configured through the environment, answering over Pulsar; a waiting run resumed with the Temporal CLI;
metrics, audit trail and search attributes as a user sees them."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest_asyncio
from temporalio.testing import WorkflowEnvironment

from cli.ask import ask
from contracts.names import SA_AWAITING_OVERRIDE, SA_FINAL_CONFIDENCE, SA_STATUS, TaskQueues
from contracts.wire import AgentRequest, AgentResponse
from embedded.parts import temporal_binary
from embedded.processes import ManagedProcess, free_port
from service.calibrator_file import CalibratorFile
from service.response_publisher import END_REPEATS_S
from service.run_recovery import RunLookup
from tests.ready_checks import logged
from tests.scripted_llm import ScriptedLLM, is_planning, is_synthesis

KNOWN = "MATCH (s:Supplier) WHERE s.name = 'Acme Industrial' RETURN s.name AS name, s.country AS country"
# A query whose value exists nowhere, for a question whose names do exist: a weak result, not an answer.
UNKNOWN = "MATCH (s:Supplier {name: 'Nobody Ltd'}) RETURN s.name AS name"


def respond(body: dict[str, Any]) -> tuple[int, str]:
    question = body["messages"][-1]["content"]
    if is_planning(body):
        query = UNKNOWN if "rival" in question else KNOWN
        return 200, json.dumps(
            {"steps": [{"id": "s1", "function": "GraphQuery", "arguments": {"query": query}, "dependencies": []}]}
        )
    if is_synthesis(body):
        return 200, "Acme Industrial is the supplier in question."
    return 200, "noted"


async def run(*cmd: str) -> subprocess.CompletedProcess[str]:
    return await asyncio.to_thread(subprocess.run, list(cmd), capture_output=True, text=True, timeout=60)


def temporal_address(env: WorkflowEnvironment) -> str:
    return env.client.service_client.config.target_host


class Services:
    def __init__(self, env: dict[str, str], tmp: Path, metrics_port: int, llm: ScriptedLLM) -> None:
        self.env = env
        self.llm = llm
        self.metrics_port = metrics_port
        self.audit = Path(env["TGCA_AUDIT_PATH"])
        self.worker = ManagedProcess("worker", [sys.executable, "-m", "worker"], tmp / "worker.log", env=env)
        self.bridge = ManagedProcess(
            "bridge", [sys.executable, "-m", "bridge"], tmp / "bridge.log", env={**env, "TGCA_METRICS_PORT": "0"}
        )  # the metrics port is the worker's

    async def ask(self, question: str) -> list[AgentResponse]:
        request = AgentRequest(question=question)
        return [
            m
            async for m in ask(
                self.env["TGCA_PULSAR_URL"],
                request,
                request_topic=json.loads(self.env["TGCA_REQUEST_TOPICS"])[0],
                response_topic=self.env["TGCA_RESPONSE_TOPIC"],
                timeout_s=90,
                runs=RunLookup(address=self.env["TGCA_TEMPORAL_ADDRESS"]),
            )
        ]


@asynccontextmanager
async def running(
    llm: ScriptedLLM, temporal_env: WorkflowEnvironment, pulsar_url: str, falkordb_url: str, unique: str, tmp_path: Path
) -> AsyncIterator[Services]:
    """A worker and a bridge as child processes, on `llm`, once both are ready (the bridge has subscribed)."""
    metrics_port = free_port()
    queues = {
        f"TGCA_QUEUES__{name.upper()}": value for name, value in TaskQueues().suffixed(unique).model_dump().items()
    }
    env = {
        "TGCA_TEMPORAL_ADDRESS": temporal_address(temporal_env),
        "TGCA_PULSAR_URL": pulsar_url,
        "TGCA_FALKORDB_URL": falkordb_url,
        "TGCA_LLM_BASE_URL": llm.base_url,
        "TGCA_LLM_MODEL": "scripted",
        "TGCA_GRAPH_PROGRAMS": "false",  # the scripted plan is the one to run, not code's program
        "TGCA_REQUEST_TOPICS": json.dumps([f"non-persistent://tg/request/agent:proc-{unique}:default"]),
        "TGCA_RESPONSE_TOPIC": f"non-persistent://tg/response/agent:proc-{unique}:default",
        "TGCA_WORKSPACE": f"proc-{unique}",
        "TGCA_METRICS_PORT": str(metrics_port),
        "TGCA_AUDIT_PATH": str(tmp_path / "audit.jsonl"),
        "TGCA_AGENT__SEARCH_ATTRIBUTES": "true",
        "TGCA_AGENT__MAX_RETRIES": "0",
        **queues,
    }
    s = Services(env, tmp_path, metrics_port, llm)
    s.worker.ready, s.bridge.ready = logged("worker_ready"), logged("bridge_ready")
    for part in (s.worker, s.bridge):
        part.start()
    await asyncio.gather(s.worker.wait_ready(60), s.bridge.wait_ready(60))
    try:
        yield s
    finally:
        s.bridge.stop()
        s.worker.stop()


@pytest_asyncio.fixture
async def services(
    temporal_env: WorkflowEnvironment, pulsar_url: str, falkordb_url: str, unique: str, tmp_path: Path
) -> AsyncIterator[Services]:
    with ScriptedLLM(respond) as llm:
        async with running(llm, temporal_env, pulsar_url, falkordb_url, unique, tmp_path) as s:
            yield s


async def test_worker_and_bridge_processes_answer_and_record_metrics_audit_and_search_attributes(
    services: Services, temporal_env: WorkflowEnvironment
) -> None:
    messages = await services.ask("Where is Acme Industrial based?")
    assert messages[-1].message_type == "answer", services.worker.log_tail() + services.bridge.log_tail()
    assert "Acme Industrial is the supplier in question." in messages[-1].content

    # The run records its metrics and audit line just after the answer goes out: wait for them.
    metrics = ""
    async with httpx.AsyncClient() as http:
        for _ in range(75):
            metrics = (await http.get(f"http://127.0.0.1:{services.metrics_port}/metrics")).text
            if "agent_plan_execution_seconds_count 1.0" in metrics and services.audit.exists():
                break
            await asyncio.sleep(0.2)
    for name in (
        'agent_confidence_score_bucket{function="GraphQuery",le="0.9"} 1.0',
        "agent_plan_execution_seconds_count 1.0",
        "agent_plan_complexity_count 1.0",
        'agent_step_execution_seconds_count{function="GraphQuery"} 1.0',
        # TrustGraph's names for the same run, under the processor id TrustGraph gives its agent
        'tg_agent_session_total{outcome="completed",processor="agent-manager"} 1.0',
        'tg_agent_tool_invocation_total{processor="agent-manager",tool="GraphQuery"} 1.0',
    ):
        assert name in metrics, name
    # Every message the caller got counted as produced, and the end of the dialog's repeats besides, as many as
    # were due by now (service/response_publisher.py: END_REPEATS_S).
    produced = re.search(
        r'tg_producer_messages_total\{processor="agent-manager",producer="'
        + re.escape(services.env["TGCA_RESPONSE_TOPIC"])
        + r'"\} ([0-9.]+)',
        metrics,
    )
    assert produced is not None, metrics
    assert len(messages) <= float(produced.group(1)) <= len(messages) + len(END_REPEATS_S)
    assert re.search(r'tg_processor_info\{[^}]*processor="agent-manager"[^}]*role="worker"', metrics)
    assert re.search(r'tg_metering_tokens_total\{direction="input",model="scripted"\} [1-9]', metrics)

    record = json.loads(services.audit.read_text().splitlines()[-1])
    calibrated = round(CalibratorFile().current().probability(record["evidence"]), 2)
    assert record["final_confidence"] == calibrated and record["execution"][0]["success"] is True
    assert record["plan"]["steps"][0]["function"] == "GraphQuery"

    workflow_id = record["execution_id"]
    logged = [json.loads(line) for line in services.worker.log_path.read_text().splitlines() if line.startswith("{")]
    audit_lines = [e for e in logged if e.get("event") == "audit_written"]
    assert audit_lines and audit_lines[-1]["execution_id"] == workflow_id  # structlog context bound per activity
    described = await temporal_env.client.get_workflow_handle(workflow_id).describe()
    assert described.typed_search_attributes.get(SA_STATUS) == "completed"
    assert described.typed_search_attributes.get(SA_FINAL_CONFIDENCE) == calibrated


async def test_the_worker_warms_the_model_with_the_system_prompts_the_first_question_opens_with(
    services: Services,
) -> None:
    """A model server that caches prompt prefixes has the long planner prompt evaluated before anyone asks, and
    the query form's, which cross-checks doubted graph steps (form_when_doubted, on by default)."""
    for _ in range(100):  # the warm-up runs in the background once the worker polls
        if len(services.llm.warm_ups) >= 3:
            break
        await asyncio.sleep(0.1)
    warmed = [body["messages"][0]["content"] for body in services.llm.warm_ups]
    messages = await services.ask("Where is Acme Industrial based?")
    assert messages[-1].message_type == "answer", services.worker.log_tail()
    planning = next(body for body in services.llm.requests if is_planning(body))
    synthesis = next(body for body in services.llm.requests if is_synthesis(body))
    assert planning["messages"][0]["content"] in warmed  # the same text, so the same cached prefix
    assert synthesis["messages"][0]["content"] in warmed
    assert any(text.startswith("You fill in a form that describes the graph query") for text in warmed)
    assert all(body["max_tokens"] == 1 for body in services.llm.warm_ups)
    # In the order a question opens them: the planner's first, so a question arriving mid-way finds it warm.
    assert warmed.index(planning["messages"][0]["content"]) < warmed.index(synthesis["messages"][0]["content"])


async def test_a_question_arriving_while_the_model_is_warmed_stops_the_warm_up(
    temporal_env: WorkflowEnvironment, pulsar_url: str, falkordb_url: str, unique: str, tmp_path: Path
) -> None:
    """The model server evaluates one request at a time: each warm-up still to come would make the first
    question wait for it. Once a question is being served, the worker sends no more warm-ups."""
    gate = threading.Event()  # the first warm-up is held until the question has been answered
    with ScriptedLLM(respond, warm_up_gate=gate) as llm:
        async with running(llm, temporal_env, pulsar_url, falkordb_url, unique, tmp_path) as services:
            try:
                for _ in range(300):
                    if llm.warm_ups:
                        break
                    await asyncio.sleep(0.1)
                assert len(llm.warm_ups) == 1, services.worker.log_tail()
                messages = await services.ask("Where is Acme Industrial based?")
                assert messages[-1].message_type == "answer", services.worker.log_tail()
            finally:
                gate.set()

            def yielded() -> bool:
                return "prompt_warm_up_yielded" in services.worker.log_path.read_text(errors="replace")

            for _ in range(100):
                if yielded() or len(llm.warm_ups) > 1:
                    break
                await asyncio.sleep(0.1)
            await asyncio.sleep(0.5)  # a warm-up sent after the yield would have arrived by now
            assert len(llm.warm_ups) == 1, [body["messages"][0]["content"][:60] for body in llm.warm_ups]
            assert yielded(), services.worker.log_tail()


async def test_a_waiting_run_resumes_with_an_override_sent_by_the_temporal_cli(
    services: Services, temporal_env: WorkflowEnvironment
) -> None:
    asking = asyncio.create_task(services.ask("Who is the rival of Acme Industrial?"))
    address = temporal_address(temporal_env)
    workflow_id = None
    for _ in range(300):  # up to 60 s: planning lists the MCP tools first
        async for execution in temporal_env.client.list_workflows("TgcaAwaitingOverride = true"):
            if execution.task_queue == services.env["TGCA_QUEUES__WORKFLOW"]:
                workflow_id = execution.id
        if workflow_id:
            break
        await asyncio.sleep(0.2)
    assert workflow_id, services.worker.log_tail()

    handle = temporal_env.client.get_workflow_handle(workflow_id)
    assert (await handle.describe()).typed_search_attributes.get(SA_AWAITING_OVERRIDE) is True
    status = await run(sys.executable, "-m", "cli", "status", workflow_id, "--temporal-address", address)
    assert status.returncode == 0 and '"step_id": "s1"' in status.stdout and "awaiting_override" in status.stdout

    wrong = await run(
        sys.executable, "-m", "cli", "override", workflow_id, "s7", "accept", "--temporal-address", address
    )
    assert wrong.returncode == 1 and "unknown step 's7'" in wrong.stderr

    signal = await run(
        temporal_binary(),
        "workflow",
        "signal",
        "--address",
        address,
        "--workflow-id",
        workflow_id,
        "--name",
        "override",
        "--input",
        '{"step_id": "s1", "decision": "accept", "by": "cli-user"}',
    )
    assert signal.returncode == 0, signal.stderr

    messages = await asyncio.wait_for(asking, 60)
    text = "\n".join(m.content for m in messages)
    assert "Override needed for step s1 (GraphQuery)" in text
    assert "Step s1 accepted by cli-user at confidence 0.30." in text
    assert messages[-1].message_type == "answer"
    assert re.search(r"Confidence: 0\.30 \(low\)", messages[-1].content)
