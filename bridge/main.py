"""tg-confidence-bridge: Pulsar AgentRequests in, one workflow started (or found) per request; errors out for
requests it could not start. It runs no Temporal worker: the workflow worker publishes each run's messages."""

from __future__ import annotations

import argparse
import asyncio
import time

import structlog

from bridge.bridge_metrics import EMIT_SECONDS
from bridge.flows import FlowRelays
from bridge.relay import RequestRelay, Routing
from contracts.redaction import shown_url
from contracts.topics import agent_subscription
from service.config import ServiceConfig
from service.connections import PULSAR_ERRORS, PartUnreachable, connect_temporal, pulsar_client
from service.flags import add_common_args, add_flow_args, config_from_args, entry_parser
from service.health import pulsar_check, start_health_server, temporal_check
from service.lifecycle import configure_logging, run_until_signalled
from service.response_publisher import ResponsePublisher
from service.trustgraph_metrics import describe_processor, process_info

log = structlog.get_logger(__name__)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = entry_parser("tg-confidence-bridge", __doc__)
    add_common_args(p)
    add_flow_args(p)
    p.add_argument(
        "--trustgraph-flows",
        action="store_const",
        const=True,
        help="serve the flows TrustGraph's config service lists for this processor, as tg-start-flow "
        "and tg-stop-flow change them (env TGCA_TRUSTGRAPH_FLOWS)",
    )
    return p.parse_args(argv)


SUBSCRIBE_PATIENCE_S = 20.0  # a broker slow to answer at start (seen under load) is not a broker that is down


async def _subscribe(relay: RequestRelay | FlowRelays, pulsar_url: str) -> None:
    """Subscribe to the request topics, trying again for up to SUBSCRIBE_PATIENCE_S: a bridge restarted
    while the broker is still busy with the old one's consumer timed out once and exited at once."""
    deadline = time.monotonic() + SUBSCRIBE_PATIENCE_S
    delay = 1.0
    while True:
        try:
            await relay.subscribe()
            return
        except PULSAR_ERRORS as exc:
            if time.monotonic() + delay > deadline:
                raise PartUnreachable(f"Pulsar at {shown_url(pulsar_url)} is unreachable: {exc}") from exc
            log.warning("pulsar_subscribe_retry", pulsar=shown_url(pulsar_url), error=str(exc), retry_in_s=delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 8.0)


async def serve(config: ServiceConfig, stop: asyncio.Event) -> None:
    temporal = await connect_temporal(config.temporal_address, config.temporal_namespace)
    client = pulsar_client(config.pulsar_url)
    describe_processor(config.processor_id, process_info(config, "bridge"))
    # Only the errors for requests it could not start: it stores no explain triples, so needs no librarian.
    publisher = ResponsePublisher(client, config.pulsar_url, EMIT_SECONDS, config.processor_id, librarian=False)
    routing = Routing(
        enabled=config.confidence_agent_enabled,
        traffic_percentage=config.confidence_agent_traffic_percentage,
        fallback_to_react=config.confidence_agent_fallback_to_react,
        react_request_topic=config.react_request_topic,
        serve_subagent_goals=config.serve_subagent_goals,
    )
    relay: RequestRelay | FlowRelays
    if config.trustgraph_flows:  # the flows TrustGraph's config service lists, as they start and stop
        relay = FlowRelays(
            temporal,
            client,
            publisher,
            workspace=config.workspace,
            processor=config.processor_id,
            queues=config.queues,
            routing=routing,
        )
    else:
        relay = RequestRelay(
            temporal,
            client,
            publisher,
            request_topics=config.request_topics,
            subscription=agent_subscription(config.workspace, config.flow),
            response_topic=config.response_topic,
            queues=config.queues,
            routing=routing,
            processor=config.processor_id,
        )
    await _subscribe(relay, config.pulsar_url)
    if config.metrics_port:  # metrics, and /healthz: Temporal and the broker it consumes from
        start_health_server(
            config.metrics_port,
            {"temporal": temporal_check(temporal), "pulsar": pulsar_check(client, config.request_topics[0])},
            config.metrics_host,
        )
    log.info(
        "bridge_ready",
        pulsar=shown_url(config.pulsar_url),
        topics=f"the flows of processor:{config.processor_id}" if config.trustgraph_flows else config.request_topics,
        response_topic=config.response_topic,
        temporal=config.temporal_address,
    )
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
    config = config_from_args(parse_args(argv))
    configure_logging(config.log_level, config.log_format)
    run_until_signalled(serve, config)
