"""`tg-invoke-confidence-agent`: TrustGraph's `tg-invoke-agent`, flag for flag where they carry over, for
this service over Pulsar. Scripts written for TrustGraph keep working: -q the question, -f the flow, -w the
workspace, -C the collection, -l a plan, -g tool groups, -v to see thoughts and observations (without it,
only the answer), --no-streaming for one answer message. The service's own settings come from the same
configuration as every other command (the YAML file, TGCA_*, PULSAR_HOST)."""

from __future__ import annotations

import argparse
import asyncio
import os

from cli.ask_command import agent_topics, run_ask
from cli.errors import quiet_broker_log
from service.flags import config_from_args, entry_parser
from service.lifecycle import exit_now


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = entry_parser("tg-invoke-confidence-agent", __doc__)
    p.add_argument(
        "-p",
        "--pulsar-host",
        "--pulsar-url",
        dest="pulsar_url",
        help="Pulsar service URL, e.g. pulsar://127.0.0.1:6650 (env PULSAR_HOST or TGCA_PULSAR_URL)",
    )
    p.add_argument("-w", "--workspace", help="TrustGraph workspace (env TGCA_WORKSPACE)")
    p.add_argument("-f", "--flow-id", dest="flow", help="TrustGraph flow (env TGCA_FLOW)")
    p.add_argument("-q", "--question", required=True, help="the question to answer")
    p.add_argument("-C", "--collection", default="default", help="collection the request names")
    p.add_argument("-l", "--plan", default="", help="request-level settings JSON, e.g. '{\"max_retries\": 1}'")
    p.add_argument("-g", "--group", nargs="+", help="tool groups the request names")
    p.add_argument("-v", "--verbose", action="store_true", help="also print thoughts and observations")
    p.add_argument("--no-streaming", action="store_true", help="one answer message instead of chunks")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for the final answer")
    p.add_argument("--config", help="YAML configuration file (env TGCA_CONFIG)")
    return p.parse_args(argv)


async def invoke(args: argparse.Namespace) -> int:
    config = config_from_args(args)
    return await run_ask(
        config.pulsar_url,
        args.question,
        **agent_topics(config),
        timeout_s=args.timeout,
        streaming=not args.no_streaming,
        plan=args.plan,
        ui_url=None,
        collection=args.collection,
        group=args.group,
        answer_only=not args.verbose,
        namespace=config.temporal_namespace,
        temporal_address=config.temporal_address,
    )


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    # -l is the plan here, as in tg-invoke-agent: TGCA_LOG_LEVEL=DEBUG shows the Pulsar client's log.
    quiet_broker_log(os.environ.get("TGCA_LOG_LEVEL"))
    exit_now(asyncio.run(invoke(args)))
