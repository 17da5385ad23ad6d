"""tg-confidence-bridge: Pulsar AgentRequests in, AgentResponses out (and the `emit` activity worker)."""

from __future__ import annotations

import argparse
import asyncio

import pulsar
import structlog
from prometheus_client import start_http_server
from temporalio.worker import Worker

from bridge.emit import EmitActivities, ResponsePublisher
from bridge.relay import RequestRelay, Routing
from confidence_core.config import ServiceConfig, load_config
from confidence_core.topics import agent_subscription
from worker.runtime import PartUnreachable, configure_logging, connect_temporal, pulsar_client, run_until_signalled

log = structlog.get_logger(__name__)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="tg-confidence-bridge", description=__doc__)
    p.add_argument("-p", "--pulsar-host", dest="pulsar_url", help="Pulsar URL (env PULSAR_HOST)")
    p.add_argument("--temporal-address", help="Temporal frontend host:port")
    p.add_argument("--temporal-namespace", help="Temporal namespace")
    p.add_argument("--request-topic", dest="request_topics", action="append",
                   help="agent request topic to consume (repeatable)")
    p.add_argument("--response-topic", help="agent response topic")
    p.add_argument("--workspace", help="TrustGraph workspace (names the subscription)")
    p.add_argument("--flow", help="TrustGraph flow (names the subscription)")
    p.add_argument("-l", "--log-level", help="log level")
    p.add_argument("-P", "--metrics-port", type=int, help="Prometheus port for the bridge's metrics (0: off)")
    return p.parse_args(argv)


async def serve(config: ServiceConfig, stop: asyncio.Event) -> None:
    temporal = await connect_temporal(config.temporal_address, config.temporal_namespace)
    client = pulsar_client(config.pulsar_url)
    publisher = ResponsePublisher(client, config.pulsar_url)
    relay = RequestRelay(
        temporal, client, publisher,
        request_topics=config.request_topics,
        subscription=agent_subscription(config.workspace, config.flow),
        response_topic=config.response_topic,
        queues=config.queues,
        routing=Routing(enabled=config.confidence_agent_enabled,
                        traffic_percentage=config.confidence_agent_traffic_percentage,
                        fallback_to_react=config.confidence_agent_fallback_to_react,
                        react_request_topic=config.react_request_topic),
    )
    try:
        await relay.subscribe()
    except pulsar.PulsarException as exc:
        raise PartUnreachable(f"Pulsar at {config.pulsar_url} is unreachable: {exc}") from exc
    worker = Worker(temporal, task_queue=config.queues.bridge, activities=[EmitActivities(publisher).emit],
                    max_concurrent_activities=256)
    if config.bridge_metrics_port:
        start_http_server(config.bridge_metrics_port)
    log.info("bridge_ready", pulsar=config.pulsar_url, topics=config.request_topics,
             response_topic=config.response_topic, temporal=config.temporal_address)
    async with worker:
        relay_task = asyncio.create_task(relay.run())
        stop_task = asyncio.create_task(stop.wait())
        done, _ = await asyncio.wait({relay_task, stop_task}, return_when=asyncio.FIRST_COMPLETED)
        relay_task.cancel()
        await relay.drain()
        if relay_task in done and relay_task.exception():
            raise relay_task.exception()  # type: ignore[misc]
    await publisher.close()
    await client.close()


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    config = load_config(
        pulsar_url=args.pulsar_url, temporal_address=args.temporal_address,
        temporal_namespace=args.temporal_namespace, request_topics=args.request_topics,
        response_topic=args.response_topic, workspace=args.workspace, flow=args.flow, log_level=args.log_level,
        bridge_metrics_port=args.metrics_port,
    )
    configure_logging(config.log_level)
    run_until_signalled(serve, config)
