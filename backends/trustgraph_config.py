"""TrustGraph's configuration, read as its own processors read it: the types a part uses are fetched from the
config service (`getvalues` per type, for this workspace) at start, and fetched again whenever the config
service pushes a notice (`ConfigPush`: a version and, per type, the workspaces it changed) that names one
of them. The worker reads the agent's tools there (offered to the planner; backends/trustgraph.py maps them)
and which of its prompt templates the workspace customised; the bridge, when it follows TrustGraph's flows, reads
the flows the agent runs in (`processor:<id>`, written by `tg-start-flow` and removed by `tg-stop-flow`) and
serves each one's request topic (bridge/flows.py)."""

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
from backends.trustgraph_tool_service import ToolServiceTarget, tool_service_target
from contracts.flow import FlowTopics
from contracts.tool_spec import ANY, DEFAULT_GROUP, ToolAccess
from contracts.topics import pulsar_topic

log = structlog.get_logger(__name__)
# TrustGraph's config queues (`request:tg:config`, `response:tg:config`, `notify:tg:config`) as Pulsar topics.
CONFIG_REQUEST = "non-persistent://tg/request/config"
CONFIG_RESPONSE = "non-persistent://tg/response/config"
CONFIG_PUSH = "non-persistent://tg/notify/config"
# What the agent reads: its tools, the MCP tools and tool services they call, its own entry (additional context),
# task types, patterns and the prompt service's templates.
CONFIG_TYPES = ("tool", "mcp-tool", "agent", "agent-task-type", "tool-service", "agent-pattern", "prompt")
RETRY_MAX_S = 30.0
# TrustGraph 2.11.1's config service keeps the factory defaults in this workspace (bootstrap's TemplateSeed) and
# copies them into each new workspace; a workspace entry that differs from its default is the operator's own.
TEMPLATE_WORKSPACE = "__template__"
# The prompt templates TrustGraph's agent asks its prompt service for: the ReAct step, the plan and its synthesis.
AGENT_TEMPLATES = ("agent-react", "plan-create", "plan-synthesise")
# Tool types TrustGraph's agent knows whose services this service does not reach: it calls the flow's
# text-completion, prompt, graph-rag and mcp-tool services only (contracts/flow.py).
REFUSED_KINDS = {
    "structured-query": "TrustGraph's agent answers it with the flow's structured-query service, which this service "
    "does not call",
    "row-embeddings-query": "TrustGraph's agent answers it with the flow's embeddings and row-embeddings-query "
    "services, which this service does not call",
}
# Tool types this service offers: KnowledgeQuery, TextCompletion, McpTool, Prompt and ToolService.
OFFERED_KINDS = frozenset({"knowledge-query", "text-completion", "mcp-tool", "prompt", "tool-service"})


@dataclass(frozen=True)
class ConfiguredTool:
    """One `tool` entry of TrustGraph's config: its type (`mcp-tool`, `prompt`, `knowledge-query`, ...)."""

    name: str
    kind: str
    description: str
    access: ToolAccess
    arguments: list[dict[str, Any]]
    data: dict[str, Any]
    service: ToolServiceTarget | None = None  # a `tool-service` tool's queues and config values

    def input_schema(self) -> dict[str, Any]:
        """The tool's configured arguments as the JSON schema of its input (all required, as TrustGraph asks)."""
        props = {
            a["name"]: {"type": a.get("type") or "string", "description": a.get("description") or ""}
            for a in self.arguments
            if a.get("name")
        }
        return {"type": "object", "properties": props, "required": list(props)}


@dataclass(frozen=True)
class AgentConfig:
    """One version of what TrustGraph's config says about the agent."""

    version: int = 0
    tools: dict[str, ConfiguredTool] = field(default_factory=dict)
    additional_context: str = ""  # the `agent` entry's `additional-context`, added to the planner's prompt
    task_framing: dict[str, str] = field(default_factory=dict)  # `agent-task-type` id -> its framing
    refused: dict[str, str] = field(default_factory=dict)  # tool name -> why it is not offered (its type)
    # The agent's prompt templates (AGENT_TEMPLATES) this workspace holds other than TrustGraph's defaults.
    customised_prompts: frozenset[str] = frozenset()
    patterns: tuple[str, ...] = ()  # the `agent-pattern` entries TrustGraph's meta-router chooses among

    def of_kind(self, kind: str) -> dict[str, ConfiguredTool]:
        return {name: t for name, t in self.tools.items() if t.kind == kind}


def _listed(value: Any, default: list[str]) -> list[str]:
    if value is None:
        return default
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def refusal(kind: str) -> str | None:
    """Why a tool of this type is not offered; None for the types this service offers."""
    if kind in OFFERED_KINDS:
        return None
    return REFUSED_KINDS.get(kind) or f"TrustGraph 2.11.1's agent knows no tool type {kind!r}"


def _json_entries(entries: dict[str, str], config_type: str) -> dict[str, dict[str, Any]]:
    parsed = {}
    for key, text in entries.items():
        try:
            value = json.loads(text)
            if not isinstance(value, dict):
                raise ValueError("it is not a JSON object")
            parsed[key] = value
        except ValueError as exc:
            log.warning("trustgraph_config_entry_left_out", type=config_type, key=key, error=str(exc))
    return parsed


def customised_templates(workspace: dict[str, str], defaults: dict[str, str]) -> frozenset[str]:
    """The agent's templates (AGENT_TEMPLATES) in a workspace's `prompt` config that are not TrustGraph's
    defaults (the `__template__` workspace's): changed, or with no default to compare with."""

    def template(entries: dict[str, str], key: str) -> Any:
        try:
            return json.loads(entries[key]) if key in entries else None
        except ValueError:
            return entries[key]

    return frozenset(
        t
        for t in AGENT_TEMPLATES
        if f"template.{t}" in workspace and template(workspace, f"template.{t}") != template(defaults, f"template.{t}")
    )


def parse_config(
    values: dict[str, dict[str, str]], version: int, default_prompts: dict[str, str] | None = None
) -> AgentConfig:
    """The agent's config from the config service's values (type -> key -> JSON text); `default_prompts`: the
    `prompt` entries of TrustGraph's template workspace. A tool entry that is not usable is left out and logged,
    as TrustGraph's agent leaves out what it cannot load; one of a type this service does not offer is refused,
    logged as an error that names it."""
    mcp_ids = set(values.get("mcp-tool", {}))
    tool_services = _json_entries(values.get("tool-service", {}), "tool-service")
    tools: dict[str, ConfiguredTool] = {}
    refused: dict[str, str] = {}
    for key, text in values.get("tool", {}).items():
        try:
            data = json.loads(text)
            name = str(data.get("name") or key)
            kind = str(data.get("type") or "")
            why = refusal(kind)
            if why is not None:
                refused[name] = f"its type {kind!r}: {why}"
                log.error("trustgraph_tool_refused", tool=name, type=kind, reason=why)
                continue
            if kind == "mcp-tool" and mcp_ids and data.get("mcp-tool") not in mcp_ids:
                raise ValueError(f"it names the mcp-tool {data.get('mcp-tool')!r}, which is not configured")
            tools[name] = ConfiguredTool(
                name=name,
                kind=kind,
                description=str(data.get("description") or name),
                access=ToolAccess(
                    groups=_listed(data.get("group"), [DEFAULT_GROUP]),
                    states=_listed(data.get("applicable-states"), [ANY]),
                ),
                arguments=[a for a in data.get("arguments") or [] if isinstance(a, dict)],
                data=data,
                service=tool_service_target(data, tool_services) if kind == "tool-service" else None,
            )
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
    return AgentConfig(
        version=version,
        tools=tools,
        additional_context=context,
        task_framing=framing,
        refused=refused,
        patterns=tuple(sorted(values.get("agent-pattern", {}))),
        customised_prompts=customised_templates(values.get("prompt", {}), default_prompts or {}),
    )


class ConfigFollower:
    """Some config types of one workspace, kept up to date from TrustGraph's config service as its processors keep
    theirs: fetched (`getvalues` per type) at start, and again on each push (`ConfigPush`) newer than what was
    read that names one of the types for this workspace. Subclasses say which types and what to make of them."""

    types: tuple[str, ...] = ()

    def __init__(
        self,
        rr: PulsarRequestResponse,
        workspace: str,
        timeout_s: float = 30.0,
        topics: tuple[str, str, str] = (CONFIG_REQUEST, CONFIG_RESPONSE, CONFIG_PUSH),
    ) -> None:
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
            self.push_topic,
            f"tgca-config-{uuid.uuid4().hex}",
            consumer_type=pulsar.ConsumerType.Exclusive,
            initial_position=pulsar.InitialPosition.Latest,
        )
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

    async def _values(self, config_type: str, workspace: str = "") -> tuple[dict[str, str], int]:
        """The type's entries in `workspace` (default: this follower's) and the config's version."""
        request = {"operation": "getvalues", "workspace": workspace or self.workspace, "type": config_type}
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
    """The current AgentConfig of one workspace: the tools offered to the planner, and the prompt templates the
    workspace customised. Each load logs what is not honoured, so the operator sees it when the worker starts
    and whenever the config changes."""

    types = CONFIG_TYPES

    def __init__(
        self,
        rr: PulsarRequestResponse,
        workspace: str,
        timeout_s: float = 30.0,
        topics: tuple[str, str, str] = (CONFIG_REQUEST, CONFIG_RESPONSE, CONFIG_PUSH),
    ) -> None:
        super().__init__(rr, workspace, timeout_s, topics)
        self.current = AgentConfig()
        self._default_prompts: dict[str, str] = {}

    async def refresh(self) -> None:
        # The template workspace sends no pushes (TrustGraph suppresses them): read it with every load.
        self._default_prompts, _ = await self._values("prompt", TEMPLATE_WORKSPACE)
        await super().refresh()

    async def apply(self, values: dict[str, dict[str, str]], version: int) -> None:
        self.current = config = parse_config(values, version, self._default_prompts)
        log.info(
            "trustgraph_config_loaded",
            version=version,
            workspace=self.workspace,
            tools=sorted(config.tools),
            refused=sorted(config.refused),
            customised_prompts=sorted(config.customised_prompts),
        )
        if "agent-react" in config.customised_prompts:
            log.warning(
                "trustgraph_prompt_not_used",
                template="agent-react",
                reason=(
                    "it is the prompt of TrustGraph's ReAct loop, which this service does not run: requests for the "
                    "react pattern go to TrustGraph's agent (react_request_topic), where it applies"
                ),
            )
        if config.patterns:
            log.warning(
                "trustgraph_patterns_not_routed",
                patterns=list(config.patterns),
                reason=(
                    "this service answers every request that names no pattern by planning and executing it; "
                    "TrustGraph's meta-router, which would choose among these patterns, is not run"
                ),
            )


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
            flows[name] = AgentFlow(
                name=name,
                request_topic=pulsar_topic(topics["request"]),
                response_topic=pulsar_topic(topics["response"]),
                services=FlowTopics.of_definition(workspace, name, definition),
            )
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            log.warning("trustgraph_flow_left_out", workspace=workspace, flow=name, error=repr(exc))
    return flows


FlowsChanged = Callable[[dict[str, AgentFlow]], Awaitable[None]]


class FlowDefinitions(ConfigFollower):
    """The flows TrustGraph's config service lists for this processor in this workspace, as TrustGraph's
    FlowProcessor learns them: the type `processor:<id>`, one key per flow; `on_change` gets every version."""

    def __init__(
        self,
        rr: PulsarRequestResponse,
        workspace: str,
        processor: str,
        on_change: FlowsChanged,
        timeout_s: float = 30.0,
    ) -> None:
        super().__init__(rr, workspace, timeout_s)
        self.types = (f"processor:{processor}",)
        self.on_change = on_change

    async def apply(self, values: dict[str, dict[str, str]], version: int) -> None:
        flows = parse_flows(self.workspace, values.get(self.types[0], {}))
        log.info("trustgraph_flows_loaded", version=version, workspace=self.workspace, flows=sorted(flows))
        await self.on_change(flows)
