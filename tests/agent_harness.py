"""Run ConfidenceAgentWorkflow on a given Temporal environment with the real worker families, a real
FalkorDB graph and a scripted LLM. The worker's `publish` local activity sends to a recorder instead of
Pulsar, so a test reads exactly the messages a caller would receive (the Pulsar path itself is covered by
test_end_to_end.py)."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry
from temporalio.client import Client, WorkflowHandle
from temporalio.exceptions import ApplicationError

from backends.factory import make_backends
from contracts.flow import FlowTopics
from contracts.names import WORKFLOW_NAME, TaskQueues
from contracts.run import AgentRunInput, AgentRunResult, AgentSettings
from contracts.wire import AgentRequest, AgentResponse
from service.agent_metrics import AgentMetrics
from service.config import ServiceConfig
from tests.scripted_llm import is_planning, is_synthesis
from worker.families import FAMILIES, build_workers


@dataclass
class Harness:
    client: Client
    config: ServiceConfig
    registry: CollectorRegistry
    messages: list[AgentResponse] = field(default_factory=list)
    refusal: str = ""  # set: the broker refuses every message, for good (e.g. the topic was deleted)

    async def publish(self, topic: str, request_id: str, response: AgentResponse) -> None:
        """The worker's publisher, as the caller would see it: every message in order (duplicates included)."""
        if self.refusal:
            raise ApplicationError(self.refusal, non_retryable=True)
        self.messages.append(response)

    def metric(self, name: str, **labels: str) -> float:
        """The sample's value summed over the labels not given (0 when there is none)."""
        return sum(
            sample.value
            for family in self.registry.collect()
            for sample in family.samples
            if sample.name == name and labels.items() <= sample.labels.items()
        )

    async def start(
        self, question: str, settings: AgentSettings | None = None, flow: FlowTopics | None = None, **request: Any
    ) -> WorkflowHandle:
        """`flow`: the TrustGraph flow the bridge would have taken the request from (its activities run in it)."""
        run_input = AgentRunInput(
            request=AgentRequest(question=question, **request),
            request_id=uuid.uuid4().hex,
            response_topic="recorded",
            settings=settings,
            queues=self.config.queues,
            flow=flow,
        )
        return await self.client.start_workflow(
            WORKFLOW_NAME,
            run_input,
            id=f"agent-test-{uuid.uuid4().hex[:12]}",
            task_queue=self.config.queues.workflow,
            result_type=AgentRunResult,
        )

    async def wait_for_override(self, handle: WorkflowHandle, timeout_s: float = 60) -> dict[str, Any]:
        """Poll the `status` query until a step awaits an override (queries don't advance skipped time)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while loop.time() < deadline:
            status = await handle.query("status")
            if status.get("pending_override"):
                return status
            await asyncio.sleep(0.2)
        raise TimeoutError("no override was requested")

    def kinds(self) -> list[str]:
        return [m.message_type for m in self.messages]

    def text(self) -> str:
        return "\n".join(f"[{m.message_type}] {m.content}" for m in self.messages)


def agent_settings_for_tests(**agent: Any) -> AgentSettings:
    """A test worker's settings: without identities, actions are open and a requester may approve its own (the
    development setup every test of the action path runs on); a test of those rules sets them itself."""
    return AgentSettings(**{"open_actions": True, "allow_self_approval": True, **agent})


async def open_harness(
    stack: AsyncExitStack,
    client: Client,
    llm_base_url: str,
    falkordb_url: str,
    graph_name: str,
    audit_path: Path,
    ontology_path: str = "",
    calibrator_path: str = "",
    harness_type: type[Harness] = Harness,
    graph_programs: bool = False,
    **agent: Any,
) -> Harness:
    """`harness_type`: a Harness whose publisher does more (keeps explain entities, say). `graph_programs` off
    by default: the tests script the plan the run is to follow, and code's program would take its place."""
    unique = uuid.uuid4().hex[:8]
    queues = TaskQueues().suffixed(unique)
    config = ServiceConfig(
        falkordb_url=falkordb_url,
        graph_name=graph_name,
        llm_base_url=llm_base_url,
        llm_model="scripted",
        agent=agent_settings_for_tests(**agent),
        queues=queues,
        audit_path=str(audit_path),
        metrics_port=0,
        ontology_path=ontology_path,
        calibrator_path=calibrator_path,
        graph_programs=graph_programs,
    )
    registry = CollectorRegistry()
    harness = harness_type(client=client, config=config, registry=registry)
    metrics = AgentMetrics(registry)
    backends = make_backends(config.model_copy(update={"llm_timeout_s": 10}), observer=metrics)
    stack.push_async_callback(backends.aclose)

    workers = build_workers(client, config, set(FAMILIES), backends, metrics, publisher=harness)
    for worker in workers:
        await stack.enter_async_context(worker)
    return harness


def plan(*steps: tuple[str, str, dict[str, str], list[str]]) -> str:
    return json.dumps({"steps": [{"id": i, "function": f, "arguments": a, "dependencies": d} for i, f, a, d in steps]})


def responder(plans: list[str], text: Callable[[dict[str, Any]], str], answer: str = "Final answer.") -> Any:
    """Plans in order (the last one repeats), text steps via `text`, synthesis with `answer`."""
    count = {"plan": 0}

    def respond(body: dict[str, Any]) -> tuple[int, str]:
        if is_planning(body):
            if "arguments" in json.dumps(body["response_format"]) and "steps" not in json.dumps(
                body["response_format"]
            ):
                return 200, json.dumps({"arguments": {}})  # adjust_step: nothing better to offer
            chosen = plans[min(count["plan"], len(plans) - 1)]
            count["plan"] += 1
            return 200, chosen
        if is_synthesis(body):
            return 200, answer
        return 200, text(body)

    return respond


def shipped_confidence(result: AgentRunResult) -> float | None:
    """The confidence the shipped calibrator states for a run's evidence (its evidence score where the
    calibrator declines): the rule the synthesis worker applies, so tests of the retry ladder do not pin
    the figures of one fitted calibrator."""
    from service.calibrator_file import SHIPPED, CalibratorFile

    probability, _ = CalibratorFile(SHIPPED).current().state(result.evidence)
    return result.evidence_score if probability is None else probability
