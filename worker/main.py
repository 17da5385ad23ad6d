"""tg-confidence-agent: the Temporal worker hosting ConfidenceAgentWorkflow and its activity families.

Each family (workflows, planning, tools, synthesis) polls its own task queue; `--queues` picks a
subset, so scaling one family out is starting more workers for its queue.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

import structlog
from prometheus_client import start_http_server
from temporalio import activity
from temporalio.client import Client
from temporalio.runtime import PrometheusConfig, Runtime, TelemetryConfig
from temporalio.worker import Worker

from activities.action_planning import ActionPlanningActivities
from activities.actions import ActionTools
from activities.audit import RunRecordActivities
from activities.cache import ResultCache
from activities.graph_store import GraphStore
from activities.kg_tools import KnowledgeGraphTools
from activities.llm_client import ChatModel, LLMClient
from activities.mcp_client import McpTools
from activities.metrics import AgentMetrics
from activities.planning import PlanningActivities
from activities.synthesis import SynthesisActivities
from activities.tools import ToolActivities
from activities.trustgraph import PulsarRequestResponse, TrustGraphLLM, TrustGraphServices
from confidence_core.config import ServiceConfig, load_config
from confidence_core.models import AgentSettings
from confidence_core.ontology import Ontology
from confidence_core.prompts import PromptTemplates
from confidence_core.tools import trustgraph_catalogue
from worker.log_context import LogContextInterceptor
from worker.runtime import configure_logging, connect_temporal, pulsar_client, run_until_signalled
from workflows.action_batch import ActionBatchWorkflow
from workflows.confidence_agent import ConfidenceAgentWorkflow

log = structlog.get_logger(__name__)
FAMILIES = ("workflows", "planning", "tools", "synthesis", "audit")


def _bool(text: str) -> bool:
    if text.lower() in ("1", "true", "yes", "on"):
        return True
    if text.lower() in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="tg-confidence-agent", description=__doc__)
    p.add_argument("--confidence-threshold", type=float, help="default step confidence threshold (0-1)")
    p.add_argument("--max-retries", type=int, help="retries per step")
    p.add_argument("--timeout-ms", type=int, help="per-step timeout in milliseconds")
    p.add_argument("--audit-enabled", type=_bool, help="write the audit trail (true/false)")
    p.add_argument("-p", "--pulsar-host", dest="pulsar_url", help="Pulsar URL (env PULSAR_HOST)")
    p.add_argument("-P", "--metrics-port", type=int, help="Prometheus metrics port (0 disables)")
    p.add_argument("-l", "--log-level", help="log level")
    p.add_argument("--temporal-address", help="Temporal frontend host:port")
    p.add_argument("--temporal-namespace", help="Temporal namespace")
    p.add_argument("--falkordb-url", help="FalkorDB URL, e.g. redis://localhost:6379")
    p.add_argument("--graph-name", help="FalkorDB graph to query")
    p.add_argument("--llm-base-url", help="OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1")
    p.add_argument("--llm-model", help="model name sent to the LLM server")
    p.add_argument("--llm-api-key", help="API key for the LLM server")
    p.add_argument("--tool-backend", choices=["local", "trustgraph"],
                   help="local: OpenAI-compatible LLM and FalkorDB; trustgraph: TrustGraph's services over Pulsar")
    p.add_argument("--audit-path", help="JSON-lines audit sink (default ~/.tg-confidence/audit.jsonl)")
    p.add_argument("--temporal-metrics-port", type=int, help="Prometheus port for Temporal SDK metrics (0: off)")
    p.add_argument("--queues", default=",".join(FAMILIES),
                   help=f"activity families to host, comma-separated (default: all of {', '.join(FAMILIES)})")
    return p.parse_args(argv)


def config_from_args(args: argparse.Namespace) -> ServiceConfig:
    agent = {k: v for k, v in {
        "confidence_threshold": args.confidence_threshold,
        "max_retries": args.max_retries,
        "step_timeout_ms": args.timeout_ms,
        "audit_enabled": args.audit_enabled,
    }.items() if v is not None}
    return load_config(
        pulsar_url=args.pulsar_url, metrics_port=args.metrics_port, log_level=args.log_level,
        audit_path=args.audit_path, temporal_metrics_port=args.temporal_metrics_port, tool_backend=args.tool_backend,
        temporal_address=args.temporal_address,
        temporal_namespace=args.temporal_namespace, falkordb_url=args.falkordb_url, graph_name=args.graph_name,
        llm_base_url=args.llm_base_url, llm_model=args.llm_model, llm_api_key=args.llm_api_key,
        agent=agent or None,
    )


def build_workers(client: Client, config: ServiceConfig, families: set[str], llm: ChatModel, graph: GraphStore | None,
                  prompts: PromptTemplates, metrics: AgentMetrics,
                  trustgraph: TrustGraphServices | None = None) -> list[Worker]:
    """One Worker per hosted family. With `trustgraph`, the tools are TrustGraph's services and `graph` is None."""
    q = config.queues
    workers: list[Worker] = []
    interceptors = [LogContextInterceptor()]
    ontology = Ontology.load(Path(config.ontology_path)) if config.ontology_path and graph is not None else None
    actions = ActionTools(graph, ontology, config.action_latency_ms / 1000) if ontology and graph else None
    if "workflows" in families:
        settings = config.agent

        @activity.defn(name="agent_settings")
        async def agent_settings() -> AgentSettings:
            """This worker's configuration, read by each run (a local activity: no extra server round trip)."""
            return settings

        # execute_action also runs here, as the batch's local activity (no server round trip per entity).
        local = [agent_settings, *([actions.execute_action] if actions else [])]
        workers.append(Worker(client, task_queue=q.workflow, workflows=[ConfidenceAgentWorkflow, ActionBatchWorkflow],
                              activities=local, interceptors=interceptors, max_concurrent_local_activities=500))
    mcp = McpTools(config.mcp_servers) if config.mcp_servers and trustgraph is None else None
    catalogue = (trustgraph_catalogue(config.trustgraph_prompts, config.trustgraph_mcp_tools)
                 if trustgraph is not None else None)
    if "planning" in families:
        planning = PlanningActivities(llm, graph, prompts, mcp, tools=catalogue)
        routing = ActionPlanningActivities(llm, ontology, prompts)
        workers.append(Worker(client, task_queue=q.planning, interceptors=interceptors, activities=[
            planning.plan, planning.adjust_step, routing.route, routing.plan_action]))
    if "tools" in families:
        tools = ToolActivities(llm, graph, prompts, mcp, ResultCache(config.cache_ttl_seconds), trustgraph=trustgraph)
        activities = tools.all()
        if ontology is not None and actions is not None and graph is not None:
            activities += KnowledgeGraphTools(graph, ontology).all() + actions.all()
        workers.append(Worker(client, task_queue=q.tools, activities=activities, interceptors=interceptors,
                              max_concurrent_activities=500))
    if "synthesis" in families:
        synthesis = SynthesisActivities(llm, prompts)
        workers.append(Worker(client, task_queue=q.synthesis, interceptors=interceptors,
                              activities=[synthesis.synthesize, synthesis.answer_directly]))
    if "audit" in families:
        recorder = RunRecordActivities(Path(config.audit_path).expanduser(), metrics)
        workers.append(Worker(client, task_queue=q.audit, interceptors=interceptors,
                              activities=[recorder.record_run]))
    return workers


def make_backends(config: ServiceConfig) -> tuple[ChatModel, GraphStore | None, TrustGraphServices | None]:
    """The LLM and the knowledge graph: local (OpenAI-compatible server, FalkorDB) or TrustGraph's services."""
    if config.tool_backend == "trustgraph":
        services = TrustGraphServices(PulsarRequestResponse(pulsar_client(config.pulsar_url)), config.workspace,
                                      config.flow, config.trustgraph_collection, config.llm_timeout_s,
                                      config.trustgraph_topics)
        return TrustGraphLLM(services), None, services
    llm = LLMClient(config.llm_base_url, config.llm_model, config.llm_api_key, config.llm_timeout_s,
                    config.llm_json_mode)
    return llm, GraphStore(config.falkordb_url, config.graph_name), None


async def serve(config: ServiceConfig, stop: asyncio.Event, families: set[str]) -> None:
    runtime = None
    if config.temporal_metrics_port:
        runtime = Runtime(telemetry=TelemetryConfig(
            metrics=PrometheusConfig(bind_address=f"0.0.0.0:{config.temporal_metrics_port}")))
    client = await connect_temporal(config.temporal_address, config.temporal_namespace, runtime)
    llm, graph, trustgraph = make_backends(config)
    prompts = PromptTemplates.load()
    workers = build_workers(client, config, families, llm, graph, prompts, AgentMetrics(), trustgraph)
    if config.metrics_port:
        start_http_server(config.metrics_port)
    log.info("worker_ready", temporal=config.temporal_address, families=sorted(families),
             llm=config.llm_base_url, falkordb=config.falkordb_url, metrics_port=config.metrics_port)
    tasks = [asyncio.create_task(w.run()) for w in workers]
    stop_task = asyncio.create_task(stop.wait())
    done, _ = await asyncio.wait({*tasks, stop_task}, return_when=asyncio.FIRST_COMPLETED)
    await asyncio.gather(*(w.shutdown() for w in workers), return_exceptions=True)
    await llm.aclose()
    if graph is not None:
        await graph.aclose()
    for task in done:
        if task is not stop_task and task.exception():
            raise task.exception()  # type: ignore[misc]


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    families = {f.strip() for f in args.queues.split(",") if f.strip()}
    unknown = families - set(FAMILIES)
    if unknown:
        raise SystemExit(f"unknown --queues families: {', '.join(sorted(unknown))}")
    config = config_from_args(args)
    configure_logging(config.log_level)
    run_until_signalled(lambda cfg, stop: serve(cfg, stop, families), config)
