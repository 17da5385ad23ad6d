"""Choose the backends once, from the configuration: local servers or TrustGraph's services."""

from __future__ import annotations

from pathlib import Path

from actions.ontology import Ontology
from backends import Backends
from backends.graph_rag import LocalGraphRag, TrustGraphRag
from backends.graph_store import GraphStore
from backends.llm import ChatModel, LLMClient, LlmObserver, MeteredChatModel
from backends.mcp import McpTools
from backends.schema_check import SchemaCheck
from backends.templates import LocalTemplates, TrustGraphTemplates
from backends.trustgraph import PulsarRequestResponse, TrustGraphLLM, TrustGraphMcp, TrustGraphServices
from backends.trustgraph_config import TrustGraphConfig
from service.config import ServiceConfig
from service.connections import pulsar_client
from service.prompts import PromptTemplates


def make_backends(
    config: ServiceConfig, prompts: PromptTemplates | None = None, observer: LlmObserver | None = None
) -> Backends:
    """`tool_backend: trustgraph`: the LLM, graph RAG, prompt templates and MCP tools are TrustGraph's
    services over Pulsar and there is no local graph; `local`: an OpenAI-compatible LLM server, FalkorDB
    and the configured MCP servers. `observer` is told of every LLM call (its tokens only for the local
    server: TrustGraph meters its own text-completion service)."""
    prompts = prompts or PromptTemplates.load()
    if config.tool_backend == "trustgraph":
        rr = PulsarRequestResponse(pulsar_client(config.pulsar_url))
        services = TrustGraphServices(
            rr,
            config.workspace,
            config.flow,
            config.trustgraph_collection,
            config.llm_timeout_s,
            config.trustgraph_topics,
        )
        llm = _metered(TrustGraphLLM(services), observer, config.llm_model, meter_tokens=False)
        tg_config = TrustGraphConfig(rr, config.workspace) if config.trustgraph_config else None
        mcp = (
            TrustGraphMcp(services, config.trustgraph_mcp_tools, tg_config)
            if config.trustgraph_mcp_tools or tg_config is not None
            else None
        )
        return Backends(
            llm=llm,
            prompts=prompts,
            templates=TrustGraphTemplates(services, config.trustgraph_prompts, tg_config),
            rag=TrustGraphRag(services),
            mcp=mcp,
            trustgraph_config=tg_config,
            closers=[*([tg_config] if tg_config is not None else []), llm],
        )
    llm = _metered(
        LLMClient(
            config.llm_base_url,
            config.llm_model,
            config.llm_api_key,
            config.llm_timeout_s,
            config.llm_json_mode,
            config.llm_logprobs,
        ),
        observer,
        config.llm_model,
        meter_tokens=True,
    )
    graph = GraphStore(config.falkordb_url, config.graph_name)
    ontology = Ontology.load(Path(config.ontology_path)) if config.ontology_path else None
    schema = SchemaCheck(graph)
    return Backends(
        llm=llm,
        prompts=prompts,
        templates=LocalTemplates(prompts, llm),
        rag=LocalGraphRag(graph, llm, prompts),
        graph=graph,
        ontology=ontology,
        mcp=McpTools(config.mcp_servers) if config.mcp_servers else None,
        schema=schema,
        graph_candidates=config.graph_candidates,
        form_when_doubted=config.form_when_doubted,
        graph_programs=config.graph_programs,
        link_judge=config.link_judge,
        closers=[llm, graph, schema.checker],
    )


def _metered(llm: ChatModel, observer: LlmObserver | None, model: str, meter_tokens: bool) -> ChatModel:
    return llm if observer is None else MeteredChatModel(llm, observer, model, meter_tokens)
