"""TrustGraph's configuration, read as its own processors read it: the types a part uses are fetched from the
config service (`getvalues` per type, for this workspace) at start, and fetched again whenever the config
service pushes a notice (`ConfigPush`: a version and, per type, the workspaces it changed) that names one
of them. The worker reads the agent's tools there (offered to the planner; backends/trustgraph.py maps them);
the bridge, when it follows TrustGraph's flows, reads the flows the agent runs in (`processor:<id>`, written by
`tg-start-flow` and removed by `tg-stop-flow`) and serves each one's request topic (bridge/flows.py)."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import pulsar
import structlog
from pulsar.asyncio import Consumer

from backends.trustgraph import PulsarRequestResponse
from contracts.flow import FlowTopics
from contracts.tool_spec import ANY, DEFAULT_GROUP, ToolAccess
from contracts.topics import pulsar_topic

log = structlog.get_logger(__name__)
# TrustGraph's config queues (`request:tg:config`, `response:tg:config`, `notify:tg:config`) as Pulsar topics.
CONFIG_REQUEST = "non-persistent://tg/request/config"
CONFIG_RESPONSE = "non-persistent://tg/response/config"
CONFIG_PUSH = "non-persistent://tg/notify/config"
# What the agent reads: its tools, the MCP tools they call, its own entry (additional context) and task types.
CONFIG_TYPES = ("tool", "mcp-tool", "agent", "agent-task-type")
RETRY_MAX_S = 30.0


@dataclass(frozen=True)
class ConfiguredTool:
    """One `tool` entry of TrustGraph's config: its type (`mcp-tool`, `prompt`, `knowledge-query`, ...)."""

    name: str
    kind: str
    description: str
    access: ToolAccess
    arguments: list[dict[str, Any]]
    data: dict[str, Any]

    def input_schema(self) -> dict[str, Any]:
        """The tool's configured arguments as the JSON schema of its input (all required, as TrustGraph asks)."""
        props = {a["name"]: {"type": a.get("type") or "string", "description": a.get("description") or ""}
                 for a in self.arguments if a.get("name")}
        return {"type": "object", "properties": props, "required": list(props)}


@dataclass(frozen=True)
class AgentConfig:
    """One version of what TrustGraph's config says about the agent."""

    version: int = 0
    tools: dict[str, ConfiguredTool] = field(default_factory=dict)
    additional_context: str = ""  # the `agent` entry's `additional-context`, added to the planner's prompt
    task_framing: dict[str, str] = field(default_factory=dict)  # `agent-task-type` id -> its framing

    def of_kind(self, kind: str) -> dict[str, ConfiguredTool]:
        return {name: t for name, t in self.tools.items() if t.kind == kind}


def _listed(value: Any, default: list[str]) -> list[str]:
    if value is None:
        return default
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def parse_config(values: dict[str, dict[str, str]], version: int) -> AgentConfig:
    """The agent's config from the config service's values (type -> key -> JSON text). An entry that is not
    usable is left out and logged, as TrustGraph's agent leaves out what it cannot load."""
    mcp_ids = set(values.get("mcp-tool", {}))
    tools: dict[str, ConfiguredTool] = {}
    for key, text in values.get("tool", {}).items():
        try:
            data = json.loads(text)
            name = str(data.get("name") or key)
            kind = str(data.get("type") or "")
            if kind == "mcp-tool" and mcp_ids and data.get("mcp-tool") not in mcp_ids:
                raise ValueError(f"it names the mcp-tool {data.get('mcp-tool')!r}, which is not configured")
            tools[name] = ConfiguredTool(
                name=name, kind=kind, description=str(data.get("description") or name),
                access=ToolAccess(groups=_listed(data.get("group"), [DEFAULT_GROUP]),
                                  states=_listed(data.get("applicable-states"), [ANY])),
                arguments=[a for a in data.get("arguments") or [] if isinstance(a, dict)], data=data)
        except (ValueError, TypeError, AttributeError) as exc:
            log.warning("trustgraph_tool_left_out", key=key, error=str(exc))
    agent = values.get("agent", {})
    context = ""
    if "additional-context" in agent:
        context = agent["additional-context"]
        try:  # the config service stores JSON text; a plain string is taken as it is
            loaded = json.loads(context)
            context = loaded if isinstance(loaded, str) else context
        except ValueError:
            pass
    framing = {}
    for task, text in values.get("agent-task-type", {}).items():
        try:
            framing[task] = str(json.loads(text).get("framing") or "")
        except (ValueError, AttributeError):
            framing[task] = ""
    return AgentConfig(version=version, tools=tools, additional_context=context, task_framing=framing)


class ConfigFollower:
    """Some config types of one workspace, kept up to date from TrustGraph's config service as its processors keep
    theirs: fetched (`getvalues` per type) at start, and again on each push (`ConfigPush`) newer than what was
    read that names one of the types for this workspace. Subclasses say which types and what to make of them."""

    types: tuple[str, ...] = ()

    def __init__(self, rr: PulsarRequestResponse, workspace: str, timeout_s: float = 30.0,
                 topics: tuple[str, str, str] = (CONFIG_REQUEST, CONFIG_RESPONSE, CONFIG_PUSH)) -> None:
        self.rr = rr
        self.workspace = workspace
        self.timeout_s = timeout_s
        self.request_topic, self.response_topic, self.push_topic = topics
        self.version = 0
        self.loaded = asyncio.Event()  # set once the first fetch succeeded
        self._consumer: Consumer | None = None
        self._task: asyncio.Task[None] | None = None

    async def apply(self, values: dict[str, dict[str, str]], version: int) -> None:
        """The types' values (type -> key -> JSON text) as of `version`."""
        raise NotImplementedError

    async def start(self) -> None:
        """Listen for pushes first (none is missed while fetching), then fetch in the background: a config
        service that is not up yet delays what it holds, never the process."""
        self._consumer = await self.rr.client.subscribe(
            self.push_topic, f"tgca-config-{uuid.uuid4().hex}", consumer_type=pulsar.ConsumerType.Exclusive,
            initial_position=pulsar.InitialPosition.Latest)
        self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        delay = 1.0
        while True:
            try:
                await self.refresh()
                break
            except Exception as exc:  # not reachable yet: try again
                log.warning("trustgraph_config_fetch_failed", error=str(exc), retry_in_s=delay, types=self.types)
                await asyncio.sleep(delay)
                delay = min(delay * 2, RETRY_MAX_S)
        assert self._consumer is not None
        while True:
            message = await self._consumer.receive()
            await self._consumer.acknowledge(message)
            try:
                await self.on_push(json.loads(message.data()))
            except Exception as exc:  # one bad notice must not stop the listening
                log.warning("trustgraph_config_push_failed", error=str(exc), types=self.types)

    async def on_push(self, push: dict[str, Any]) -> None:
        """A newer version that changed one of the types in this workspace: fetch them again."""
        version = int(push.get("version") or 0)
        if version <= self.version:
            return
        changes = push.get("changes") or {}
        if any(self.workspace in (changes.get(t) or []) for t in self.types):
            await self.refresh()
        else:
            self.version = version

    async def _values(self, config_type: str) -> tuple[dict[str, str], int]:
        request = {"operation": "getvalues", "workspace": self.workspace, "type": config_type}
        async for response in self.rr.stream(self.request_topic, self.response_topic, request, self.timeout_s):
            values = {v["key"]: v["value"] for v in response.get("values") or []}
            return values, int(response.get("version") or 0)
        return {}, 0

    async def refresh(self) -> None:
        fetched = {t: await self._values(t) for t in self.types}
        version = max(v for _, v in fetched.values())
        await self.apply({t: values for t, (values, _) in fetched.items()}, version)
        self.version = version
        self.loaded.set()

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
        if self._consumer is not None:
            try:
                await self._consumer.close()
            except pulsar.PulsarException:
                pass


class TrustGraphConfig(ConfigFollower):
    """The current AgentConfig of one workspace: the tools offered to the planner."""

    types = CONFIG_TYPES

    def __init__(self, rr: PulsarRequestResponse, workspace: str, timeout_s: float = 30.0,
                 topics: tuple[str, str, str] = (CONFIG_REQUEST, CONFIG_RESPONSE, CONFIG_PUSH)) -> None:
        super().__init__(rr, workspace, timeout_s, topics)
        self.current = AgentConfig()

    async def apply(self, values: dict[str, dict[str, str]], version: int) -> None:
        self.current = parse_config(values, version)
        log.info("trustgraph_config_loaded", version=version, workspace=self.workspace,
                 tools=sorted(self.current.tools))


@dataclass(frozen=True)
class AgentFlow:
    """One flow the agent runs in: where its requests arrive, where they are answered, and its services."""

    name: str
    request_topic: str
    response_topic: str
    services: FlowTopics


def parse_flows(workspace: str, values: dict[str, str]) -> dict[str, AgentFlow]:
    """The flows of `processor:<id>` (flow -> its definition's JSON: `{"topics": {"request": ..., ...}}`); a
    definition without a request or response topic is left out and logged."""
    flows: dict[str, AgentFlow] = {}
    for name, text in values.items():
        try:
            definition = json.loads(text)
            topics = definition.get("topics") or {}
            flows[name] = AgentFlow(name=name, request_topic=pulsar_topic(topics["request"]),
                                    response_topic=pulsar_topic(topics["response"]),
                                    services=FlowTopics.of_definition(workspace, name, definition))
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            log.warning("trustgraph_flow_left_out", workspace=workspace, flow=name, error=repr(exc))
    return flows


FlowsChanged = Callable[[dict[str, AgentFlow]], Awaitable[None]]


class FlowDefinitions(ConfigFollower):
    """The flows TrustGraph's config service lists for this processor in this workspace, as TrustGraph's
    FlowProcessor learns them: the type `processor:<id>`, one key per flow; `on_change` gets every version."""

    def __init__(self, rr: PulsarRequestResponse, workspace: str, processor: str, on_change: FlowsChanged,
                 timeout_s: float = 30.0) -> None:
        super().__init__(rr, workspace, timeout_s)
        self.types = (f"processor:{processor}",)
        self.on_change = on_change

    async def apply(self, values: dict[str, dict[str, str]], version: int) -> None:
        flows = parse_flows(self.workspace, values.get(self.types[0], {}))
        log.info("trustgraph_flows_loaded", version=version, workspace=self.workspace, flows=sorted(flows))
        await self.on_change(flows)
