"""tg-confidence-agent: the Temporal worker hosting ConfidenceAgentWorkflow and its activity families.

The families (workflows, planning, tools, synthesis, audit) share the workflow's task queue unless
configured apart (config `queues`); `--queues` picks a subset of families to host, each on a queue of its
own, so scaling one family out is starting more workers for its queue (docs/architecture.md).
"""

from __future__ import annotations

import argparse
import asyncio

import structlog
from temporalio.runtime import PrometheusConfig, Runtime, TelemetryConfig

from backends.factory import make_backends
from backends.llm import LLMClient
from contracts.redaction import shown_url
from service.agent_metrics import AgentMetrics
from service.audit_sink import AuditSink
from service.config import ServiceConfig
from service.connections import connect_temporal, pulsar_client
from service.flags import add_backend_args, add_common_args, config_from_args, entry_parser
from service.health import CHECK_TIMEOUT_S, llm_check, pulsar_check, start_health_server, temporal_check
from service.lifecycle import configure_logging, run_until_signalled
from service.response_publisher import ResponsePublisher
from service.trustgraph_metrics import describe_processor, process_info
from worker.families import FAMILIES, build_workers, family_queue, unhosted_neighbours
from worker.pending_overrides import count_pending_overrides
from worker.prompt_warm_up import ActivityArrivals, warm_prompt_cache

log = structlog.get_logger(__name__)

# The families whose activities call the LLM server (planning and routing, graph queries, synthesis); with
# TrustGraph's services as the backend the LLM is TrustGraph's, reached over Pulsar.
LLM_FAMILIES = frozenset({"planning", "tools", "synthesis"})


def _bool(text: str) -> bool:
    if text.lower() in ("1", "true", "yes", "on"):
        return True
    if text.lower() in ("0", "false", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = entry_parser("tg-confidence-agent", __doc__)
    add_common_args(p)
    add_backend_args(p)
    p.add_argument("--confidence-threshold", type=float, help="default step confidence threshold (0-1)")
    p.add_argument("--max-retries", type=int, help="retries per step")
    p.add_argument("--timeout-ms", type=int, help="per-step timeout in milliseconds")
    p.add_argument("--audit-enabled", type=_bool, help="write the audit trail (true/false)")
    p.add_argument("--audit-path", help="JSON-lines audit sink (default ~/.tg-confidence/audit.jsonl)")
    p.add_argument("--temporal-metrics-port", type=int, help="Prometheus port for Temporal SDK metrics (0: off)")
    p.add_argument(
        "--queues",
        dest="families",
        default=",".join(FAMILIES),
        help=f"activity families to host, comma-separated (default: all of {', '.join(FAMILIES)})",
    )
    return p.parse_args(argv)


def worker_config(args: argparse.Namespace) -> ServiceConfig:
    agent = {
        k: v
        for k, v in {
            "confidence_threshold": args.confidence_threshold,
            "max_retries": args.max_retries,
            "step_timeout_ms": args.timeout_ms,
            "audit_enabled": args.audit_enabled,
        }.items()
        if v is not None
    }
    return config_from_args(args, **({"agent": agent} if agent else {}))


async def serve(config: ServiceConfig, stop: asyncio.Event, families: set[str]) -> None:
    runtime = None
    if config.temporal_metrics_port:
        runtime = Runtime(
            telemetry=TelemetryConfig(
                metrics=PrometheusConfig(bind_address=f"{config.metrics_host}:{config.temporal_metrics_port}")
            )
        )
    client = await connect_temporal(config.temporal_address, config.temporal_namespace, runtime)
    metrics = AgentMetrics(processor=config.processor_id)
    describe_processor(config.processor_id, process_info(config, "worker"))
    backends = make_backends(config, observer=metrics)
    await backends.start()
    audit_sink = AuditSink(config.audit_path, metrics)
    # The workflows family publishes its runs' messages (workflows/outbox.py), the synthesis family a streamed
    # answer's sentences (activities/answer_release.py): they alone need Pulsar.
    publisher = (
        ResponsePublisher(
            pulsar_client(config.pulsar_url),
            config.pulsar_url,
            metrics.publish_seconds,
            config.processor_id,
            librarian=config.trustgraph_librarian,
        )
        if families & {"workflows", "synthesis"}
        else None
    )
    arrivals = ActivityArrivals()  # the warm-up stops once a question is served (worker/prompt_warm_up.py)
    workers = build_workers(client, config, families, backends, metrics, audit_sink, publisher, [arrivals])
    # The LLM server's own probe: a client apart from the activities', bounded by the health check's timeout.
    llm_probe = (
        LLMClient(config.llm_base_url, config.llm_model, config.llm_api_key, min(config.llm_timeout_s, CHECK_TIMEOUT_S))
        if config.metrics_port and config.tool_backend == "local" and families & LLM_FAMILIES
        else None
    )
    if config.metrics_port:  # metrics, and /healthz: Temporal; Pulsar when it publishes; the LLM when it calls one
        checks = {"temporal": temporal_check(client)}
        if publisher is not None:
            checks["pulsar"] = pulsar_check(publisher.client, config.response_topic)
        if llm_probe is not None:
            checks["llm"] = llm_check(llm_probe)
        start_health_server(config.metrics_port, checks, config.metrics_host)
    log.info(
        "worker_ready",
        temporal=config.temporal_address,
        families=sorted(families),
        pulsar=shown_url(config.pulsar_url),
        llm=shown_url(config.llm_base_url),
        falkordb=shown_url(config.falkordb_url),
        metrics_port=config.metrics_port,
    )
    tasks = [asyncio.create_task(w.run()) for w in workers]
    background = [asyncio.create_task(warm_prompt_cache(config, backends, families, arrivals.arrived))]
    if backends.schema is not None and families & {"planning", "tools"}:  # the first check need not wait for it
        background.append(asyncio.create_task(backends.schema.checker.start()))
    if config.metrics_port and config.agent.search_attributes and "workflows" in families:
        background.append(asyncio.create_task(count_pending_overrides(client, metrics.overrides_pending)))
    stop_task = asyncio.create_task(stop.wait())
    done, _ = await asyncio.wait({*tasks, stop_task}, return_when=asyncio.FIRST_COMPLETED)
    for task in background:
        task.cancel()
    await asyncio.gather(*(w.shutdown() for w in workers), return_exceptions=True)
    await backends.aclose()
    if llm_probe is not None:
        await llm_probe.aclose()
    await audit_sink.aclose()
    if publisher is not None:
        await publisher.close()
        await publisher.client.close()
    for finished in done:
        if finished is not stop_task and (error := finished.exception()) is not None:
            raise error


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    families = {f.strip() for f in args.families.split(",") if f.strip()}
    unknown = families - set(FAMILIES)
    if unknown:
        raise SystemExit(f"unknown --queues families: {', '.join(sorted(unknown))}")
    config = worker_config(args)
    shared = unhosted_neighbours(families, config.queues)
    if shared:
        family, others = next(iter(shared.items()))
        apart = others[0] if family == "workflows" else family  # the workflow's queue keeps its name
        raise SystemExit(
            f"the {family} family shares its task queue ({family_queue(family, config.queues)}) "
            f"with {', '.join(others)}, which this worker does not host: give each family run "
            f"apart a queue of its own (e.g. TGCA_QUEUES__{apart.upper()}=tgca-{apart})"
        )
    configure_logging(config.log_level, config.log_format)
    run_until_signalled(lambda cfg, stop: serve(cfg, stop, families), config)
