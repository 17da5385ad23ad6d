"""tg-confidence-chat: the HTTP chat API and browser UI (python -m chat; `tg-confidence up` starts it)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from collections.abc import Iterator
from pathlib import Path

import structlog
import uvicorn

from actions.ontology import Ontology
from activities.actions import ActionTools
from backends.action_history import ActionHistory
from backends.graph_store import GraphStore
from chat.app import create_app
from chat.auth import Authenticator, is_loopback, new_local_token
from chat.dependencies import ChatDeps
from chat.runs import RunStreams
from chat.same_site import answered_hosts
from chat.stream_slots import StreamSlots
from contracts.redaction import shown_url
from service.config import ServiceConfig
from service.connections import PULSAR_ERRORS, PartUnreachable, connect_temporal, pulsar_client
from service.flags import add_common_args, add_flow_args, config_from_args, entry_parser
from service.lifecycle import configure_logging, run_until_signalled

log = structlog.get_logger(__name__)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = entry_parser("tg-confidence-chat", __doc__)
    add_common_args(p)
    add_flow_args(p)
    p.add_argument(
        "--http-host",
        "--bind",
        dest="http_host",
        help="address to listen on (env TGCA_HTTP_HOST; default 127.0.0.1). Any other than a loopback "
        "address needs http_tokens",
    )
    p.add_argument("--http-port", type=int, help="port to listen on (env TGCA_HTTP_PORT; default 8765)")
    p.add_argument("--falkordb-url", help="FalkorDB URL, for the action history (env TGCA_FALKORDB_URL)")
    p.add_argument("--graph-name", help="the graph (env TGCA_GRAPH_NAME)")
    p.add_argument("--ontology-path", help="the domain's ontology YAML: enables /actions (env TGCA_ONTOLOGY_PATH)")
    p.add_argument("--temporal-ui-url", help="Temporal Web UI base URL for run links (env TGCA_TEMPORAL_UI_URL)")
    p.add_argument(
        "--check-config",
        action="store_true",
        help="only check that the API may start as configured: exit 0, or 1 saying why not",
    )
    return p.parse_args(argv)


def refusal(config: ServiceConfig) -> str:
    """Why the API must not start as configured ("" when it may)."""
    if not config.http_tokens and not is_loopback(config.http_host):
        return (
            f"the chat API would listen on {config.http_host} with no http_tokens: anyone who can reach it "
            "could approve actions. Configure http_tokens, or bind to 127.0.0.1"
        )
    return ""


async def serve(config: ServiceConfig, stop: asyncio.Event) -> None:
    refused = refusal(config)
    if refused:
        raise PartUnreachable(refused)
    temporal = await connect_temporal(config.temporal_address, config.temporal_namespace)
    client = pulsar_client(config.pulsar_url)
    streams = RunStreams(client, config.request_topics[0], config.response_topic_for(config.request_topics[0]))
    try:
        await streams.start()
    except PULSAR_ERRORS as exc:
        raise PartUnreachable(f"Pulsar at {shown_url(config.pulsar_url)} is unreachable: {exc}") from exc
    store = GraphStore(config.falkordb_url, config.graph_name)
    actions = (
        ActionHistory(ActionTools(store, Ontology.load(Path(config.ontology_path)))) if config.ontology_path else None
    )
    local_token = "" if config.http_tokens else (config.http_local_token or new_local_token())
    app = create_app(
        ChatDeps(
            temporal=temporal,
            streams=streams,
            auth=Authenticator(config.http_tokens, local_token),
            namespace=config.temporal_namespace,
            temporal_ui_url=config.temporal_ui_url,
            actions=actions,
            graph=store,
            override_keys=config.agent.override_keys,
            hosts=answered_hosts(config.http_host, config.http_allowed_hosts),
            origins=config.http_allowed_origins,
            streams_open=StreamSlots(config.http_max_streams, config.http_max_streams_per_caller),
            stream_max_s=config.http_stream_max_s,
        )
    )
    server = ServerWithoutSignals(
        uvicorn.Config(app, host=config.http_host, port=config.http_port, log_config=None, access_log=False)
    )
    url = f"http://{config.http_host}:{config.http_port}/"
    # Open mode: the link carries the local token (in the fragment, which browsers never send) for the page to use
    log.info("chat_ready", url=f"{url}#token={local_token}" if local_token else url, open=not config.http_tokens)
    serving = asyncio.create_task(server.serve())
    stopping = asyncio.create_task(stop.wait())
    await asyncio.wait({serving, stopping}, return_when=asyncio.FIRST_COMPLETED)
    server.should_exit = True
    await serving
    stopping.cancel()
    await streams.stop()
    await client.close()
    await store.aclose()


class ServerWithoutSignals(uvicorn.Server):
    """uvicorn, minus its own SIGINT/SIGTERM handlers: the chat stops when `stop` is set, after it has closed its
    streams and connections, wherever the signal was caught."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    config = config_from_args(args)
    if args.check_config:  # docker-compose.yml's chat-config one-shot: a refusal fails `up` instead of a restart loop
        refused = refusal(config)
        raise SystemExit(f"tg-confidence-chat: {refused}" if refused else 0)
    configure_logging(config.log_level, config.log_format)
    run_until_signalled(serve, config)
