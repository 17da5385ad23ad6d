"""Service configuration: built-in defaults < YAML file (TGCA_CONFIG) < environment < flags.

Flags reach here as constructor keyword arguments, so they win over everything else.
Nested keys use `__` in the environment, e.g. TGCA_AGENT__MAX_RETRIES=5.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, Field, ValidationError, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    YamlConfigSettingsSource,
)

from contracts.explain import ExplainMode
from contracts.names import TaskQueues
from contracts.override import Role
from contracts.run import AgentSettings
from contracts.tool_spec import ToolAccess
from contracts.topics import agent_request_topic, agent_response_topic, paired_response_topic
from service import defaults
from service.config_keys import unknown_settings
from service.lifecycle import LogFormat
from service.mcp_servers import McpServerConfig, demo_mcp_server, server_list


class HttpIdentity(BaseModel):
    """Who may use the HTTP API and chat UI: a bearer token (stored as its SHA-256), what the holder may decide,
    and the private key the server signs their decisions with when the workers check signatures
    (agent.override_keys must then hold this identity's public key under the same name)."""

    name: str = Field(min_length=1)
    token_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    roles: list[Role] = Field(default_factory=list)
    signing_key: str = ""


class ServiceConfig(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="TGCA_", env_nested_delimiter="__", extra="ignore", validate_by_name=True, validate_by_alias=True
    )

    # Temporal's own TEMPORAL_ADDRESS / TEMPORAL_NAMESPACE count too (below TGCA_*); its API key, TLS and
    # config-file profile are read where the client connects (service.connections.temporal_connect_options).
    temporal_address: str = Field(
        default=defaults.TEMPORAL_ADDRESS,
        validation_alias=AliasChoices("TGCA_TEMPORAL_ADDRESS", "TEMPORAL_ADDRESS", "temporal_address"),
    )
    temporal_namespace: str = Field(
        default=defaults.TEMPORAL_NAMESPACE,
        validation_alias=AliasChoices("TGCA_TEMPORAL_NAMESPACE", "TEMPORAL_NAMESPACE", "temporal_namespace"),
    )
    # TrustGraph processors read PULSAR_HOST; honour it too.
    pulsar_url: str = Field(
        default=defaults.PULSAR_URL, validation_alias=AliasChoices("TGCA_PULSAR_URL", "PULSAR_HOST")
    )
    falkordb_url: str = defaults.FALKORDB_URL
    graph_name: str = defaults.GRAPH_NAME
    llm_base_url: str = defaults.LLM_BASE_URL
    llm_model: str = defaults.LLM_MODEL
    llm_api_key: str = ""
    llm_timeout_s: float = Field(default=120.0, gt=0)
    # How to ask for schema-constrained JSON: llama-cpp-python's server reads
    # {"type": "json_object", "schema": ...}; OpenAI, vLLM and llama.cpp's own server read "json_schema".
    llm_json_mode: Literal["json_object_schema", "json_schema"] = "json_object_schema"
    # Ask for the written tokens' log-probabilities where they are evidence (the planner's queries, the
    # answer): OpenAI's `logprobs: true`. Off only for a server that rejects the field.
    llm_logprobs: bool = True
    # One one-token call per system prompt when a worker starts, so a server that caches prompt prefixes
    # has them evaluated before the first question (worker/prompt_warm_up.py).
    llm_warm_up: bool = True
    workspace: str = "default"
    flow: str = "default"
    # Empty: derived from workspace and flow as TrustGraph names them. Each request topic in TrustGraph's
    # naming is answered on its own response topic (response_topic_for); response_topic answers the others.
    request_topics: list[str] = Field(default_factory=list)
    response_topic: str = ""
    metrics_port: int = Field(default=defaults.METRICS_PORT, ge=0, le=65535)  # this process's Prometheus; 0 = off
    # The address metrics and /healthz listen on (and the Temporal SDK's metrics): loopback unless a scraper
    # on another host must reach them (the production compose sets 0.0.0.0 inside its network).
    metrics_host: str = defaults.HOST
    log_level: str = defaults.LOG_LEVEL
    # auto: aligned, coloured lines when stderr is a terminal, JSON lines otherwise (files, containers, shippers)
    log_format: LogFormat = "auto"
    # The `processor` label of the TrustGraph-convention metrics (tg_*), TrustGraph's processor id for its agent
    processor_id: str = Field(default=defaults.PROCESSOR_ID, min_length=1)
    audit_path: str = Field(default_factory=lambda: str(Path.home() / ".tg-confidence" / "audit.jsonl"))
    temporal_metrics_port: int = Field(default=0, ge=0, le=65535)  # Temporal SDK metrics; 0 = off
    agent: AgentSettings = Field(default_factory=AgentSettings)
    queues: TaskQueues = Field(default_factory=TaskQueues)
    # Canary and fallback: requests not taken, and failed runs when fallback is on, go to the
    # existing agent-manager's request topic (it answers on the same response topic).
    confidence_agent_enabled: bool = True
    confidence_agent_traffic_percentage: float = Field(default=100.0, ge=0, le=100)
    confidence_agent_fallback_to_react: bool = False
    react_request_topic: str = ""
    # Answer the sub-goals of TrustGraph's supervisor that reach the request topics (its `next` topic is this
    # service's) and report each to it on react_request_topic; false: they go there as TrustGraph's loop does.
    serve_subagent_goals: bool = True
    # "trustgraph": the LLM, graph-rag, prompt and mcp-tool come from TrustGraph's services over Pulsar
    # (topics from workspace and flow, each overridable as "<service>.request"/"<service>.response").
    tool_backend: Literal["local", "trustgraph"] = "local"
    trustgraph_collection: str = "default"
    trustgraph_topics: dict[str, str] = Field(default_factory=dict)
    trustgraph_prompts: dict[str, str] = Field(
        default_factory=lambda: {
            "question": "answer a question from the input",
            "extract-definitions": "extract definitions from text",
        }
    )
    trustgraph_mcp_tools: dict[str, str] = Field(default_factory=dict)  # name -> description
    # Read TrustGraph's config service (its `tool`, `mcp-tool`, `agent` and `agent-task-type` entries for this
    # workspace) at start and on every config push: the tools configured there are offered to the planner.
    trustgraph_config: bool = True
    # The bridge serves the flows TrustGraph's config service lists for this processor (`processor:<processor_id>`
    # in this workspace: tg-start-flow adds one, tg-stop-flow removes it), each on its own request and response
    # topic, instead of request_topics; each run calls its flow's services (bridge/flows.py, docs/trustgraph.md).
    trustgraph_flows: bool = False
    # Write each step result's and answer's content (with its confidence and the evidence behind it) to the
    # workspace's TrustGraph librarian and link it from the explain trace, as TrustGraph's agent does, for runs
    # answered on TrustGraph's agent topics (service/librarian_writer.py; never delays or fails a run).
    trustgraph_librarian: bool = True
    # Where a run's provenance (explain triples) goes: "inline", each entity's core on the caller's response topic
    # and all of it into the flow's triples store and the librarian; "store-only", the store and the librarian;
    # "off", nowhere (activities/publish.py).
    explain: ExplainMode = "inline"
    # This service's list, or the mcpServers mapping other MCP clients use (service/mcp_servers.py); the
    # file may also hold that mapping under the key `mcpServers`.
    mcp_servers: list[McpServerConfig] = Field(default_factory=lambda: [demo_mcp_server()])
    ontology_path: str = ""  # a domain ontology (YAML): enables the knowledge-graph query and action tools
    # Added to every action execution: a slow downstream system, for benchmarks and demos. 0 in production.
    action_latency_ms: float = Field(default=0.0, ge=0, le=60_000)
    cache_ttl_seconds: float = Field(default=300.0, ge=0)  # tool results, keyed by tool, arguments and inputs
    # The tools the planner may use (and the tools worker registers); None: each tool's offered_by_default.
    # Names are the tools' (tools/*.py); a tool whose backend is missing (no graph, no ontology) is left out.
    tools: list[str] | None = None
    # The request groups (AgentRequest.group) each built-in tool is offered to; a tool not named here is in
    # TrustGraph's default group, "default". Tools from TrustGraph's config carry their own groups.
    tool_groups: dict[str, list[str]] = Field(default_factory=dict)
    # Queries compared per graph step (the planner's and graph_candidates - 1 written independently); 1: off.
    graph_candidates: int = Field(default=1, ge=1, le=5)
    # With graph_candidates at 1: a graph step whose query looks like an answer to another question (a walk
    # shorter than the question spells out, no node of the kind asked for) is cross-checked with the query
    # form all the same, so only the doubted steps pay for the second query.
    form_when_doubted: bool = True
    # A question about the local graph is answered by the best of the programs code enumerates from the schema
    # and ranks (cypher/programs.py), with no plan written; the planner writes the plan when a name is found
    # nowhere, the question names no thing or kind of thing, or no program compiles.
    graph_programs: bool = True
    # The local model judges the question's words the sentence vectors leave open (tools/link_judge.py). Off:
    # on hand-written questions it linked "people" to Language and "inhabitants" to Country, and explained
    # away the words the reading could not place, which the confidence reads: of the answers with every word
    # explained, 39 of 81 were right with it, 28 of 40 without (bench/walk_recall.py --judge).
    link_judge: bool = False
    # The fitted calibrator (`tg-confidence calibrate` writes one); "" is the one shipped with the service.
    calibrator_path: str = ""
    # The HTTP chat API and browser UI (python -m chat; tg-confidence up starts it).
    http_host: str = defaults.HTTP_HOST
    http_port: int = Field(default=defaults.HTTP_PORT, ge=0, le=65535)
    # Bearer tokens; none: the API is open, which is allowed only on a loopback address.
    http_tokens: list[HttpIdentity] = Field(default_factory=list)
    # Open mode's token: without http_tokens the API still wants this one bearer token (random when empty), which
    # `up` prints in the chat's link; a page on another site cannot know it.
    http_local_token: str = ""
    # Host names the API answers to besides its own address (loopback binds also answer localhost): a request
    # naming any other Host is refused, which stops DNS rebinding. Origins other than the API's own that may
    # call it from a browser ("https://ops.example.com"); a cross-site request from any other is refused.
    http_allowed_hosts: list[str] = Field(default_factory=list)
    http_allowed_origins: list[str] = Field(default_factory=list)
    # Server-sent event streams: at most this many open at once (and per caller); each ends after
    # http_stream_max_s, and the client picks it up again from its last event id.
    http_max_streams: int = Field(default=64, ge=1)
    http_max_streams_per_caller: int = Field(default=8, ge=1)
    http_stream_max_s: float = Field(default=900.0, gt=0)
    temporal_ui_url: str = defaults.TEMPORAL_UI_URL  # links to runs in Temporal's Web UI; "" for none

    @field_validator("mcp_servers", mode="before")
    @classmethod
    def _servers_by_name(cls, value: Any) -> Any:
        return server_list(value)

    @model_validator(mode="before")
    @classmethod
    def _no_unknown_keys(cls, data: Any) -> Any:
        """A misspelt key in the file or environment is an error naming the closest key, never a default."""
        if isinstance(data, dict) and "mcpServers" in data and "mcp_servers" not in data:
            data = {**data, "mcp_servers": data["mcpServers"]}
            del data["mcpServers"]
        problems = unknown_settings(data if isinstance(data, dict) else {}, os.environ, cls)
        if problems:
            raise ValueError("; ".join(problems))
        return data

    @model_validator(mode="after")
    def _topics_of_the_flow(self) -> ServiceConfig:
        if not self.request_topics:
            self.request_topics = [agent_request_topic(self.workspace, self.flow)]
        if not self.response_topic:
            self.response_topic = agent_response_topic(self.workspace, self.flow)
        return self

    def tool_access(self) -> dict[str, ToolAccess]:
        return {name: ToolAccess(groups=groups) for name, groups in self.tool_groups.items()}

    def response_topic_for(self, request_topic: str) -> str:
        """Where the answers to a request on `request_topic` go (and where its caller listens)."""
        return paired_response_topic(request_topic, self.response_topic)

    @model_validator(mode="after")
    def _fallback_needs_a_topic(self) -> ServiceConfig:
        forwards = (
            not self.confidence_agent_enabled
            or self.confidence_agent_traffic_percentage < 100
            or self.confidence_agent_fallback_to_react
        )
        if forwards and not self.react_request_topic:
            raise ValueError(
                "canary or fallback settings forward requests: set react_request_topic "
                "(the existing agent-manager's request topic)"
            )
        return self

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        yaml_path = os.environ.get("TGCA_CONFIG")
        if yaml_path:
            if not Path(yaml_path).is_file():
                raise FileNotFoundError(f"TGCA_CONFIG points at {yaml_path}, which is not a file")
            sources.append(YamlConfigSettingsSource(settings_cls, yaml_file=yaml_path))
        return tuple(sources)


class ConfigError(ValueError):
    """The configuration (file, environment or flags) is not valid: the message says which key and why."""


def load_config(**flags: Any) -> ServiceConfig:
    """Build the config; flags set to None (not given on the command line) do not override. The values are
    as argparse parsed them: the model checks them."""
    given = {k: v for k, v in flags.items() if v is not None}
    try:
        return ServiceConfig(**given)
    except ValidationError as exc:
        raise ConfigError("; ".join(_said(error) for error in exc.errors())) from None


def _said(error: Any) -> str:
    where = ".".join(str(part) for part in error.get("loc", ()))
    message = str(error.get("msg", "")).removeprefix("Value error, ")
    return f"{where}: {message}" if where else message
