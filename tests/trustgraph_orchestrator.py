"""TrustGraph's `agent-orchestrator` (trustgraph-flow 2.11.1, from .venv-trustgraph) beside this service on one
broker, with scripted TrustGraph services for what it calls: config, prompt (its ReAct step and the supervisor's
decompose and synthesise templates), graph-rag and librarian. The services are bench/trustgraph_services.py's,
with the supervisor's templates added; the orchestrator runs in its own process, as TrustGraph deploys it.

Topology (docs/trustgraph.md, "Beside TrustGraph's orchestrator"): the flow's agent topic is this service's;
the orchestrator reads a topic of its own (the bridge's react_request_topic), answers on the flow's response
topic, and sends the next iterations of its loop (ReAct continuations, sub-goals, the synthesis) to the flow's
agent topic, from where the bridge forwards them back or answers the sub-goals itself.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from trustgraph.schema import Error, PromptRequest, PromptResponse

from bench.trustgraph_services import (
    PROCESSOR_ID,
    REACT_FLOW,
    WORKSPACE,
    Script,
    ScriptedTrustGraph,
    react_flow_definition,
)
from embedded.processes import ManagedProcess

ROOT = Path(__file__).resolve().parent.parent
TRUSTGRAPH_BIN = ROOT / ".venv-trustgraph" / "bin"
SYNTHESIS = "Both parts are answered: {count} findings combined."


def orchestrator_process(pulsar_url: str, log: Path) -> ManagedProcess:
    """TrustGraph's `agent-orchestrator` as its container runs it, without Loki and the metrics endpoint."""
    return ManagedProcess(
        "agent-orchestrator",
        [
            str(TRUSTGRAPH_BIN / "agent-orchestrator"),
            "--id",
            PROCESSOR_ID,
            "-p",
            pulsar_url,
            "-l",
            "INFO",
            "--no-loki-enabled",
            "--no-metrics",
        ],
        log,
    )


class OrchestratorServices(ScriptedTrustGraph):
    """The scripted services, with the orchestrator's flow wired beside this service: its request topic
    `own_queue`, its `next` and `response` the flow's agent topics (`flow_request_queue`, `flow_response_queue`),
    and its `explainability` the flow's triples store (`store_queue`, where this service writes its traces too)."""

    def __init__(
        self,
        pulsar_url: str,
        own_queue: str,
        flow_request_queue: str,
        flow_response_queue: str,
        goals: list[str],
        store_queue: str = "",
    ) -> None:
        super().__init__(pulsar_url, Script(tools=1))
        definition = react_flow_definition(REACT_FLOW)
        definition["topics"].update({"request": own_queue, "next": flow_request_queue, "response": flow_response_queue})
        if store_queue:
            definition["topics"]["explainability"] = store_queue
        self.config[(WORKSPACE, f"processor:{PROCESSOR_ID}")] = {REACT_FLOW: json.dumps(definition)}
        self.goals = goals  # what the supervisor's decomposition answers
        self.decomposed: list[str] = []  # the questions the supervisor decomposed
        self.synthesised: list[list[dict[str, str]]] = []  # the sub-goal results each synthesis was given

    async def _prompt(self, request: PromptRequest, flow: str) -> list[Any]:
        terms = {key: json.loads(value) for key, value in request.terms.items()}
        if request.id == "supervisor-decompose":
            self.decomposed.append(terms["question"])
            return [
                PromptResponse(
                    object=json.dumps(self.goals), end_of_stream=True, in_token=100, out_token=20, model="scripted"
                )
            ]
        if request.id == "supervisor-synthesise":
            self.synthesised.append(terms["results"])
            return [
                PromptResponse(
                    text=SYNTHESIS.format(count=len(terms["results"])),
                    end_of_stream=True,
                    in_token=100,
                    out_token=20,
                    model="scripted",
                )
            ]
        if request.id == "agent-react":
            return await super()._prompt(request, flow)
        return [PromptResponse(error=Error(type="not-found", message=f"not scripted: {request.id}"))]

    async def until_configured(self, timeout_s: float = 60.0) -> None:
        """Wait until the orchestrator has read its tools: it builds its agent (and its flow) right after."""
        async with self.tools_read:
            await asyncio.wait_for(self.tools_read.wait_for(lambda: self.tools_read_version >= self.version), timeout_s)
