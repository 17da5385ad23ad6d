"""TrustGraph's side of bench/trustgraph_side_by_side.py: a cached virtualenv holding trustgraph-flow's ReAct
agent-manager, its process, and scripted TrustGraph services on the broker that both agents share.

The scripted services speak TrustGraph's schema classes (trustgraph-base 2.11.1) on TrustGraph's queues:
- config (request:tg:config, notify:tg:config): what TrustGraph's config service tells a processor at start and
  on a push: the workspaces, the agent-manager's flow definition (its topics) and its tools;
- prompt: the `agent-react` template, as the LLM would answer it (one tool call per iteration, then the answer);
- text-completion: this service's planner (a plan of independent KnowledgeQuery steps) and synthesis;
- graph-rag: the KnowledgeQuery tool of both agents;
- librarian: takes the documents both agents write for provenance (ReAct's thoughts, observations and answer;
  this service's step results and answer), on the workspace's queue, where TrustGraph's librarian consumes them.
Each answer waits the configured LLM or tool delay first; requests are answered concurrently.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pulsar
from trustgraph.base.serialization import dataclass_to_dict, dict_to_dataclass
from trustgraph.schema import (
    ConfigPush,
    ConfigRequest,
    ConfigResponse,
    ConfigValue,
    Error,
    GraphRagQuery,
    GraphRagResponse,
    LibrarianRequest,
    LibrarianResponse,
    PromptRequest,
    PromptResponse,
    TextCompletionRequest,
    TextCompletionResponse,
)
from trustgraph.schema.retrieval import Source

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from embedded.processes import ManagedProcess
from service.connections import pulsar_client

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".bench-venv-trustgraph"
# trustgraph-flow without its dependencies (LLM SDKs, stores, Cassandra drivers): the ReAct processor imports only
# trustgraph-base, prometheus_client and pulsar-client, and trustgraph-base's logging imports requests (with its
# four). Versions as in this project's .venv.
PINS = (
    "trustgraph-base==2.11.1",
    "trustgraph-flow==2.11.1",
    "pulsar-client==3.13.0",
    "prometheus-client==0.26.0",
    "requests==2.34.2",
    "charset-normalizer==3.5.2",
    "idna==3.20",
    "urllib3==2.8.0",
    "certifi==2026.10.18",
)

WORKSPACE = "bench"
REACT_FLOW = "react"
SERVICE_FLOW = "confidence"
BASELINE_FLOW = "confidence-baseline"  # this service from another checkout, when the bench compares two
PROCESSOR_ID = "agent-manager"  # its config key is processor:agent-manager, as TrustGraph deploys it
SUBJECTS = ("orders", "invoices", "payments")  # one KnowledgeQuery tool (or plan step) each
FINAL_ANSWER = "Orders, invoices and payments are all in order."
RAG_ANSWER = "All {subject} are in order."


def ensure_venv() -> Path:
    """The cached virtualenv (rebuilt when the pins change); never the project's own .venv, whose test suite
    would then import trustgraph-flow's modules."""
    python = VENV / "bin" / "python"
    stamp = VENV / "bench-pins.txt"
    wanted = "\n".join(PINS) + "\n"
    if python.exists() and stamp.exists() and stamp.read_text() == wanted:
        return VENV
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(VENV)], check=True)
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps", *PINS], check=True
    )
    subprocess.run([str(python), "-c", "import trustgraph.agent.react.service"], check=True)
    stamp.write_text(wanted)
    return VENV


def react_process(venv: Path, pulsar_url: str, log: Path) -> ManagedProcess:
    """trustgraph-flow's `agent-manager-react` console script as its container runs it, without Loki and the
    Prometheus endpoint (nothing here reads them)."""
    return ManagedProcess(
        "agent-manager-react",
        [
            str(venv / "bin" / "agent-manager-react"),
            "--id",
            PROCESSOR_ID,
            "-p",
            pulsar_url,
            "-l",
            "WARNING",
            "--no-loki-enabled",
            "--no-metrics",
        ],
        log,
    )


def queue_id(kind: str, service: str, flow: str | None = None) -> str:
    """TrustGraph's queue id (`class:topicspace:topic`); flow-scoped services carry workspace and flow."""
    return f"{kind}:tg:{service}:{WORKSPACE}:{flow}" if flow else f"{kind}:tg:{service}"


def librarian_queue(kind: str) -> str:
    """The workspace's librarian queue (`request:tg:librarian:<workspace>`), which both agents write to."""
    return f"{kind}:tg:librarian:{WORKSPACE}"


def topic(queue: str) -> str:
    """The Pulsar topic of a queue id, as trustgraph-base's Pulsar backend maps it."""
    kind, space, name = queue.split(":", 2)
    return f"{'persistent' if kind == 'flow' else 'non-persistent'}://{space}/{kind}/{name}"


def react_flow_definition(flow: str) -> dict[str, Any]:
    """The agent-manager's entry in a flow, with the topics TrustGraph 2.x's agent blueprint gives it (the flow
    service writes this under processor:agent-manager when a flow starts)."""
    topics = {
        "request": queue_id("request", "agent", flow),
        "next": queue_id("request", "agent", flow),
        "response": queue_id("response", "agent", flow),
        "explainability": queue_id("flow", "triples-store", flow),
        # The workspace's librarian, as the 2.x blueprints name it (`request("librarian:{workspace}")`) and
        # TrustGraph 2.11.1's librarian consumes it (librarian/service.py: workspace_queue).
        "librarian-request": librarian_queue("request"),
        "librarian-response": librarian_queue("response"),
    }
    for spec, service in (
        ("text-completion", "text-completion"),
        ("prompt", "prompt"),
        ("graph-rag", "graph-rag"),
        ("mcp-tool", "mcp-tool"),
        ("structured-query", "structured-query"),
        ("embeddings", "embeddings"),
        ("row-embeddings-query", "row-embeddings"),
    ):
        topics[f"{spec}-request"] = queue_id("request", service, flow)
        topics[f"{spec}-response"] = queue_id("response", service, flow)
    return {"topics": topics, "parameters": {}}


def react_tools(count: int) -> dict[str, str]:
    """`count` knowledge-query (graph-rag) tools, as `tg-set-tool --type knowledge-query` stores them."""
    return {
        f"kq-{s}": json.dumps(
            {
                "type": "knowledge-query",
                "name": f"kq-{s}",
                "collection": "default",
                "description": f"Answers questions about {s} from the knowledge graph",
            }
        )
        for s in SUBJECTS[:count]
    }


def question_number(text: str) -> str | None:
    """The `question #n` the bench numbers each question with, if `text` carries one."""
    found = re.search(r"question #\d+", text)
    return found[0] if found else None


def tool_question(subject: str, asked: str) -> str:
    """The question a tool call puts to graph-rag: each asked question's own (its number), as real questions
    differ, so this service's tool-result cache answers none of them."""
    number = question_number(asked)
    return f"Are the {subject} in order{f' ({number})' if number else ''}?"


def plan(count: int, asked: str) -> str:
    return json.dumps(
        {
            "steps": [
                {
                    "id": s,
                    "function": "KnowledgeQuery",
                    "dependencies": [],
                    "arguments": {"question": tool_question(s, asked)},
                }
                for s in SUBJECTS[:count]
            ]
        }
    )


def react_step(history: list[dict[str, Any]], tools: int, asked: str) -> str:
    """The agent-react prompt's answer in the text format agent_manager.py parses: the next tool, or the end."""
    if len(history) < tools:
        subject = SUBJECTS[len(history)]
        return (
            f"Thought: I need to check the {subject} in the knowledge graph.\nAction: kq-{subject}\n"
            f'Args: {{\n    "question": {json.dumps(tool_question(subject, asked))}\n}}'
        )
    return f"Thought: I have checked everything I was asked about.\nFinal Answer: {FINAL_ANSWER}"


@dataclass
class Script:
    """What the scripted services do now; the bench changes it between cells."""

    llm_s: float = 0.0
    tool_s: float = 0.0
    tools: int = 1


Handler = Callable[[Any, str], Awaitable[list[Any]]]


class ScriptedTrustGraph:
    """The TrustGraph services both agents call, on one broker, in this process."""

    def __init__(self, pulsar_url: str, script: Script, flows: tuple[str, ...] = (REACT_FLOW, SERVICE_FLOW)) -> None:
        self.client = pulsar_client(pulsar_url)
        self.script = script
        self.flows = flows
        # (flow, service) -> requests made for a question (naming its number); "untagged": any other, such as
        # this service's worker warming the LLM's prompt cache at start. Librarian documents are counted as
        # (REACT_FLOW, "librarian") and (SERVICE_FLOW, "librarian"): the workspace's one queue serves every flow.
        self.calls: Counter[tuple[str, str]] = Counter()
        self.tools_offered: list[int] = []  # per agent-react prompt: the tools ReAct listed to the LLM
        self.config: dict[tuple[str, str], dict[str, str]] = {
            ("__workspaces__", "workspace"): {WORKSPACE: json.dumps({"id": WORKSPACE})},
            (WORKSPACE, f"processor:{PROCESSOR_ID}"): {REACT_FLOW: json.dumps(react_flow_definition(REACT_FLOW))},
            (WORKSPACE, "tool"): react_tools(script.tools),
        }
        self.version = 1
        self.tools_read = asyncio.Condition()  # notified when a processor reads the tool config
        self.tools_read_version = 0
        self._tasks: list[asyncio.Task[None]] = []
        self._notify: Any = None

    async def start(self) -> None:
        serve = [(queue_id("request", "config"), queue_id("response", "config"), ConfigRequest, self._config, "")]
        for flow in self.flows:
            # This service's Prompt tool asks on prompt-rag, where TrustGraph's 2.x blueprint wires the agent.
            for service, schema, handler in (
                ("prompt", PromptRequest, self._prompt),
                ("prompt-rag", PromptRequest, self._prompt),
                ("text-completion", TextCompletionRequest, self._completion),
                ("graph-rag", GraphRagQuery, self._graph_rag),
            ):
                serve.append(
                    (queue_id("request", service, flow), queue_id("response", service, flow), schema, handler, flow)
                )
        serve.append((librarian_queue("request"), librarian_queue("response"), LibrarianRequest, self._librarian, ""))
        for request_queue, response_queue, schema, handler, flow in serve:
            consumer = await self.client.subscribe(
                topic(request_queue), f"scripted-{uuid.uuid4().hex[:8]}", consumer_type=pulsar.ConsumerType.Shared
            )
            producer = await self.client.create_producer(topic(response_queue), batching_enabled=False)
            self._tasks.append(asyncio.create_task(self._serve(consumer, producer, schema, handler, flow)))
        self._notify = await self.client.create_producer(topic(queue_id("notify", "config")), batching_enabled=False)

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.client.close()

    async def set_tools(self, count: int, timeout_s: float = 30.0) -> None:
        """Configure ReAct with `count` tools the way `tg-set-tool` does (store, then push), and wait until the
        agent-manager has read them."""
        self.script.tools = count
        self.config[(WORKSPACE, "tool")] = react_tools(count)
        self.version += 1
        push = ConfigPush(version=self.version, changes={"tool": [WORKSPACE]})
        await self._notify.send(json.dumps(dataclass_to_dict(push)).encode())
        async with self.tools_read:
            await asyncio.wait_for(self.tools_read.wait_for(lambda: self.tools_read_version >= self.version), timeout_s)
        await asyncio.sleep(0.2)  # the processor builds its AgentManager right after the read

    async def _serve(self, consumer: Any, producer: Any, schema: type, handler: Handler, flow: str) -> None:
        async def answer(message: Any) -> None:
            request = dict_to_dataclass(json.loads(message.data()), schema)
            for response in await handler(request, flow):
                await producer.send(
                    json.dumps(dataclass_to_dict(response)).encode(), properties={"id": message.properties()["id"]}
                )

        pending: set[asyncio.Task[None]] = set()
        while True:
            message = await consumer.receive()
            await consumer.acknowledge(message)
            task = asyncio.create_task(answer(message))
            pending.add(task)
            task.add_done_callback(pending.discard)

    async def _config(self, request: ConfigRequest, flow: str) -> list[Any]:
        if request.operation == "getkeys-all-ws":
            values = [
                ConfigValue(type=kind, key=key, workspace=ws)
                for (ws, kind), entries in self.config.items()
                if kind == request.type
                for key in entries
            ]
        elif request.operation == "getvalues":
            entries = self.config.get((request.workspace, request.type), {})
            values = [ConfigValue(type=request.type, key=key, value=value) for key, value in entries.items()]
            if request.type == "tool":
                async with self.tools_read:
                    self.tools_read_version = self.version
                    self.tools_read.notify_all()
        else:
            return [ConfigResponse(error=Error(type="bad-request", message=f"not scripted: {request.operation}"))]
        return [ConfigResponse(version=self.version, values=values)]

    def _count(self, flow: str, service: str, text: str) -> None:
        self.calls[(flow, service if question_number(text) else "untagged")] += 1

    async def _prompt(self, request: PromptRequest, flow: str) -> list[Any]:
        asked = json.loads(request.terms.get("question", '""'))
        self._count(flow, "prompt", asked)
        if request.id != "agent-react":
            return [PromptResponse(error=Error(type="not-found", message=f"not scripted: {request.id}"))]
        self.tools_offered.append(len(json.loads(request.terms.get("tools", "[]"))))
        await asyncio.sleep(self.script.llm_s)
        text = react_step(json.loads(request.terms.get("history", "[]")), self.script.tools, asked)
        return [PromptResponse(text=text, end_of_stream=True, in_token=600, out_token=40, model="scripted")]

    async def _completion(self, request: TextCompletionRequest, flow: str) -> list[Any]:
        self._count(flow, "text-completion", request.prompt)
        await asyncio.sleep(self.script.llm_s)
        text = plan(self.script.tools, request.prompt) if request.schema else FINAL_ANSWER
        return [TextCompletionResponse(response=text, end_of_stream=True, in_token=600, out_token=40, model="scripted")]

    async def _graph_rag(self, request: GraphRagQuery, flow: str) -> list[Any]:
        self._count(flow, "graph-rag", request.query)
        await asyncio.sleep(self.script.tool_s)
        subject = next((s for s in SUBJECTS if s in request.query), "records")
        # As TrustGraph's graph-rag answers: a provenance (explain) message, then the text with its sources.
        return [
            GraphRagResponse(
                message_type="explain",
                explain_id=f"urn:trustgraph:question:{uuid.uuid4()}",
                explain_graph="urn:graph:retrieval",
            ),
            GraphRagResponse(
                message_type="chunk",
                response=RAG_ANSWER.format(subject=subject),
                end_of_stream=True,
                end_of_session=True,
                sources=[Source(uri=f"urn:doc:{subject}", title=f"{subject} register")],
            ),
        ]

    async def _librarian(self, request: LibrarianRequest, flow: str) -> list[Any]:
        """Takes every document, as TrustGraph's librarian takes a new one. Whose it is shows in its id: this
        service names its sessions after its runs (`urn:trustgraph:agent:agent-<request id>/...`), ReAct after a
        fresh uuid."""
        by_service = request.document_id.startswith("urn:trustgraph:agent:agent-")
        self.calls[(SERVICE_FLOW if by_service else REACT_FLOW, "librarian")] += 1
        return [LibrarianResponse(document_id=request.document_id)]
