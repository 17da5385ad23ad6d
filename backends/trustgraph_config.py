"""TrustGraph's configuration, read as its own processors read it: the types the agent uses are fetched from the
config service (`getvalues` per type, for this workspace) at start, and fetched again whenever the config
service pushes a notice (`ConfigPush`: a version and, per type, the workspaces it changed) that names one
of them. The tools configured there are offered to the planner (backends/trustgraph.py maps them)."""

from __future__ import annotations

import asyncio
import json
import uuid
from dataclasses import dataclass, field
from typing import Any

import pulsar
import structlog
from pulsar.asyncio import Consumer

from backends.trustgraph import PulsarRequestResponse
from contracts.tool_spec import ANY, DEFAULT_GROUP, ToolAccess

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


class TrustGraphConfig:
    """The current AgentConfig of one workspace, kept up to date from TrustGraph's config service."""

    def __init__(self, rr: PulsarRequestResponse, workspace: str, timeout_s: float = 30.0,
                 topics: tuple[str, str, str] = (CONFIG_REQUEST, CONFIG_RESPONSE, CONFIG_PUSH)) -> None:
        self.rr = rr
        self.workspace = workspace
        self.timeout_s = timeout_s
        self.request_topic, self.response_topic, self.push_topic = topics
        self.current = AgentConfig()
        self.loaded = asyncio.Event()  # set once the first fetch succeeded
        self._consumer: Consumer | None = None
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Listen for pushes first (none is missed while fetching), then fetch in the background: a config
        service that is not up yet delays the tools it holds, never the worker."""
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
                log.warning("trustgraph_config_fetch_failed", error=str(exc), retry_in_s=delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, RETRY_MAX_S)
        assert self._consumer is not None
        while True:
            message = await self._consumer.receive()
            await self._consumer.acknowledge(message)
            try:
                await self.on_push(json.loads(message.data()))
            except Exception as exc:  # one bad notice must not stop the listening
                log.warning("trustgraph_config_push_failed", error=str(exc))

    async def on_push(self, push: dict[str, Any]) -> None:
        """A newer version that changed one of the agent's types in this workspace: fetch them again."""
        version = int(push.get("version") or 0)
        if version <= self.current.version:
            return
        changes = push.get("changes") or {}
        if any(self.workspace in (changes.get(t) or []) for t in CONFIG_TYPES):
            await self.refresh()
        else:
            self.current = AgentConfig(**{**self.current.__dict__, "version": version})

    async def _values(self, config_type: str) -> tuple[dict[str, str], int]:
        request = {"operation": "getvalues", "workspace": self.workspace, "type": config_type}
        async for response in self.rr.stream(self.request_topic, self.response_topic, request, self.timeout_s):
            values = {v["key"]: v["value"] for v in response.get("values") or []}
            return values, int(response.get("version") or 0)
        return {}, 0

    async def refresh(self) -> None:
        fetched = {t: await self._values(t) for t in CONFIG_TYPES}
        version = max(v for _, v in fetched.values())
        self.current = parse_config({t: values for t, (values, _) in fetched.items()}, version)
        self.loaded.set()
        log.info("trustgraph_config_loaded", version=version, workspace=self.workspace,
                 tools=sorted(self.current.tools))

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
        if self._consumer is not None:
            try:
                await self._consumer.close()
            except pulsar.PulsarException:
                pass
