"""The phase-2 split: the workflow, planning and tools families (and synthesis with audit) each in a
worker process of its own, plus the bridge, answer a question over Pulsar; each task queue is polled by
its own process only, so a family scales out by starting more processes for its queue."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest_asyncio
from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from cli.ask import ask
from contracts.names import TaskQueues
from contracts.wire import AgentRequest
from embedded.processes import ManagedProcess
from service.run_recovery import RunLookup
from tests.ready_checks import logged
from tests.scripted_llm import ScriptedLLM, is_planning, is_synthesis

QUERY = "MATCH (s:Supplier) WHERE s.name = 'Acme Industrial' RETURN s.name AS name, s.country AS country"
SPLIT = {"workflows": "workflows", "planning": "planning", "tools": "tools", "rest": "synthesis,audit"}


def respond(body: dict[str, Any]) -> tuple[int, str]:
    if is_planning(body):
        return 200, json.dumps(
            {"steps": [{"id": "s1", "function": "GraphQuery", "arguments": {"query": QUERY}, "dependencies": []}]}
        )
    if is_synthesis(body):
        return 200, "Acme Industrial is based in the country the graph records. That is all it holds."
    return 200, "noted"


async def pollers(client: Client, queue: str, kind: TaskQueueType.ValueType) -> set[int]:
    """The pids of the processes polling `queue` (the SDK's identity is "<pid>@<host>")."""
    described = await client.workflow_service.describe_task_queue(
        DescribeTaskQueueRequest(namespace=client.namespace, task_queue=TaskQueue(name=queue), task_queue_type=kind)
    )
    return {int(p.identity.split("@", 1)[0]) for p in described.pollers}


@pytest_asyncio.fixture
async def split_workers(
    temporal_env: WorkflowEnvironment, pulsar_url: str, falkordb_url: str, unique: str, tmp_path: Path
) -> AsyncIterator[tuple[dict[str, str], dict[str, ManagedProcess]]]:
    with ScriptedLLM(respond) as llm:
        # Each family apart needs a queue of its own (by default they all share the workflow's).
        queues = {f"TGCA_QUEUES__{name.upper()}": f"tgca-{name}-{unique}" for name in TaskQueues().model_dump()}
        env = {
            "TGCA_TEMPORAL_ADDRESS": temporal_env.client.service_client.config.target_host,
            "TGCA_PULSAR_URL": pulsar_url,
            "TGCA_FALKORDB_URL": falkordb_url,
            "TGCA_LLM_BASE_URL": llm.base_url,
            "TGCA_LLM_MODEL": "scripted",
            "TGCA_GRAPH_PROGRAMS": "false",  # the scripted plan is the one to run, not code's program
            "TGCA_MCP_SERVERS": "[]",
            "TGCA_METRICS_PORT": "0",
            "TGCA_REQUEST_TOPICS": json.dumps([f"non-persistent://tg/request/agent:split-{unique}:default"]),
            "TGCA_RESPONSE_TOPIC": f"non-persistent://tg/response/agent:split-{unique}:default",
            "TGCA_WORKSPACE": f"split-{unique}",
            "TGCA_AUDIT_PATH": str(tmp_path / "audit.jsonl"),
            **queues,
        }
        parts = {
            name: ManagedProcess(
                f"worker ({families})",
                [sys.executable, "-m", "worker", "--queues", families],
                tmp_path / f"worker-{name}.log",
                env=env,
            )
            for name, families in SPLIT.items()
        }
        parts["bridge"] = ManagedProcess(
            "bridge", [sys.executable, "-m", "bridge"], tmp_path / "bridge.log", env=env, ready=logged("bridge_ready")
        )  # subscribed: a request now is not dropped
        for part in parts.values():
            part.start()
        try:
            yield env, parts
        finally:
            for part in parts.values():
                part.stop()


async def test_families_in_separate_processes_answer_a_question(
    split_workers: tuple[dict[str, str], dict[str, ManagedProcess]], temporal_env: WorkflowEnvironment
) -> None:
    env, parts = split_workers
    client = temporal_env.client
    queue = {name: env[f"TGCA_QUEUES__{name.upper()}"] for name in ("workflow", "planning", "tools", "synthesis")}
    activity, workflow = TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY, TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW
    expected = {
        ("workflow", workflow): parts["workflows"].pid,
        ("planning", activity): parts["planning"].pid,
        ("tools", activity): parts["tools"].pid,
        ("synthesis", activity): parts["rest"].pid,
    }
    for _ in range(150):  # every process connected and polling its own queue
        seen = {key: await pollers(client, queue[key[0]], key[1]) for key in expected}
        if all(seen[key] == {pid} for key, pid in expected.items()):
            break
        await asyncio.sleep(0.2)
    logs = "\n".join(f"--- {p.name}\n{p.log_tail()}" for p in parts.values())
    assert all(seen[key] == {pid} for key, pid in expected.items()), f"{seen} vs {expected}\n{logs}"
    await parts["bridge"].wait_ready(60)

    request = AgentRequest(question="Where is Acme Industrial based?")
    messages = [
        m
        async for m in ask(
            env["TGCA_PULSAR_URL"],
            request,
            request_topic=json.loads(env["TGCA_REQUEST_TOPICS"])[0],
            response_topic=env["TGCA_RESPONSE_TOPIC"],
            timeout_s=90,
            runs=RunLookup(address=env["TGCA_TEMPORAL_ADDRESS"]),
        )
    ]
    assert messages[-1].message_type == "answer", logs
    assert "Acme Industrial is based in the country the graph records." in messages[-1].content
    assert re.search(r"Confidence: \d\.\d\d - calibrated: ", messages[-1].content)
    observed = "\n".join(m.content for m in messages)
    assert '"Acme Industrial"' in observed  # the tools process really ran the query against the graph

    # Streamed: the synthesis process publishes the checked sentence itself as the model writes it.
    streamed = [
        m
        async for m in ask(
            env["TGCA_PULSAR_URL"],
            request.model_copy(update={"streaming": True}),
            request_topic=json.loads(env["TGCA_REQUEST_TOPICS"])[0],
            response_topic=env["TGCA_RESPONSE_TOPIC"],
            timeout_s=90,
            runs=RunLookup(address=env["TGCA_TEMPORAL_ADDRESS"]),
        )
    ]
    first = next(m for m in streamed if m.message_type == "answer")
    assert first.delivery_id.endswith("#answer.0"), logs
    assert first.content == "Acme Industrial is based in the country the graph records."


def test_a_worker_hosting_part_of_a_shared_queue_refuses_to_start(tmp_path: Path) -> None:
    # On the default layout every family shares the workflow's queue: a tools-only worker there would get
    # planning and workflow tasks it cannot run, so it names the clash and the setting that resolves it.
    done = subprocess.run(
        [sys.executable, "-m", "worker", "--queues", "tools"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "TGCA_QUEUES__WORKFLOW": "tgca-workflows-shared"},
    )
    assert done.returncode != 0
    assert (
        "the tools family shares its task queue (tgca-workflows-shared) with workflows, planning, synthesis, "
        "audit, which this worker does not host"
    ) in done.stderr
    assert "TGCA_QUEUES__TOOLS=tgca-tools" in done.stderr
